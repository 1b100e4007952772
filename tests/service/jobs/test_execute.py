"""What a job's spec runs: its version label reaches every document it ingests."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, cast

from langchain_core.documents import Document

from loaders import LoadOptions
from service.index.versions import VERSION
from service.ingest.report import IngestEvent, IngestReport
from service.jobs.execute import run_spec
from service.jobs.records import JobFile, JobSpec
from service.synopsis import Synopsis


class Recorder:
    """Records what a job asks of the core."""

    def __init__(self) -> None:
        self.ingested: list[tuple[list[str], str]] = []
        self.documents: list[Document] = []

    def ingest(self, sources: Sequence[str], *, version: str = "", **_: Any) -> IngestReport:
        self.ingested.append((list(sources), version))
        return IngestReport(sources=1)

    def ingest_documents(
        self,
        documents: Iterable[Document],
        *,
        on_event: Callable[[IngestEvent], None] | None = None,
        report: IngestReport | None = None,
    ) -> IngestReport:
        self.documents.extend(documents)
        return report or IngestReport()


def _run(core: Recorder, spec: JobSpec) -> None:
    run_spec(cast(Synopsis, core), spec, options=LoadOptions(), on_event=lambda _event: None)


def test_a_url_job_ingests_with_its_version() -> None:
    core = Recorder()
    _run(core, JobSpec(kind="url", url="https://docs.example/3.12/", version="3.12"))
    _run(core, JobSpec(kind="url", url="https://docs.example/"))
    assert core.ingested == [
        (["https://docs.example/3.12/"], "3.12"),
        (["https://docs.example/"], ""),
    ]


def test_a_files_job_labels_every_document(tmp_path: Path) -> None:
    path = tmp_path / "000-guide.md"
    path.write_text("# Guide\n\nInstall it with pip.\n", encoding="utf-8")
    files = (JobFile(path=str(path), source="guide.md", content_type="text/markdown"),)
    core = Recorder()
    _run(core, JobSpec(kind="files", files=files, version="2.0"))
    _run(core, JobSpec(kind="files", files=files))
    assert [document.metadata[VERSION] for document in core.documents] == ["2.0", ""]
