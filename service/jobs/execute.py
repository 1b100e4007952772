"""Running one job's spec through the same core as `synopsis ingest` and `synopsis
sources sync`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from langchain_core.documents import Document

from loaders import TITLE, LoadOptions
from loaders.formats import convert
from service.errors import LoaderError
from service.index.versions import labelled
from service.ingest.report import IngestEvent, IngestReport
from service.jobs.records import JobFile, JobSpec

if TYPE_CHECKING:
    from service.sources import SyncReport
    from service.synopsis import Synopsis

__all__ = ["JobOutcome", "file_documents", "ingest_report_dict", "run_spec"]


@dataclass(frozen=True, kw_only=True)
class JobOutcome:
    """How a job that ran to its end went: the report it keeps, why it failed (empty when
    it is `done`), and the ingest or sync report behind it (for the metrics)."""

    report: dict[str, object]
    failure: str = ""
    ingest: IngestReport | None = None
    sync: SyncReport | None = None


def run_spec(
    synopsis: Synopsis,
    spec: JobSpec,
    *,
    options: LoadOptions,
    on_event: Callable[[IngestEvent], None],
) -> JobOutcome:
    """Do what `spec` names; a source that fails is in the report, not raised.

    `options` are the loader options (a URL job's crawl depth and page limit replace
    theirs, and their address policy guards every fetch, a sync's included).
    """
    if spec.kind == "sync":
        return _sync(synopsis, spec.name, options=options, on_event=on_event)
    if spec.kind == "url":
        crawl = dataclasses.replace(
            options, crawl_depth=spec.crawl_depth, max_pages=spec.max_pages or options.max_pages
        )
        report = synopsis.ingest([spec.url], options=crawl, on_event=on_event, version=spec.version)
    else:
        report = IngestReport()

        def failed(error: LoaderError) -> None:
            report.failed.append(str(error))
            on_event(IngestEvent(stage="error", source=error.source, message=str(error)))

        documents = labelled(
            file_documents(spec.files, options=options, on_error=failed), version=spec.version
        )
        report = synopsis.ingest_documents(documents, on_event=on_event, report=report)
    failure = (
        "no source could be loaded (see errors)" if report.failed and not report.sources else ""
    )
    return JobOutcome(report=ingest_report_dict(report), failure=failure, ingest=report)


def _sync(
    synopsis: Synopsis,
    name: str,
    *,
    options: LoadOptions,
    on_event: Callable[[IngestEvent], None],
) -> JobOutcome:
    synced = synopsis.sync_registered(name, options=options, on_event=on_event)
    report = synced.last_report
    assert report is not None  # every sync leaves one
    failure = ""
    if not report.completed:
        failure = (
            f"the sync of {name} did not complete ({len(report.failed)} failures): nothing "
            "was removed; sync again once they are fixed"
        )
        for line in report.failed:  # the job's errors, as an ingest's failed sources are
            on_event(IngestEvent(stage="error", source=name, message=line))
    return JobOutcome(
        report={"source": name, **report.to_dict(), "summary": report.summary_line()},
        failure=failure,
        sync=report,
    )


def ingest_report_dict(report: IngestReport) -> dict[str, object]:
    """An ingest report as a job keeps it (seconds rounded)."""
    raw = dataclasses.asdict(report)
    raw["seconds"] = {stage: round(value, 2) for stage, value in report.seconds.items()}
    raw["wall_seconds"] = round(report.wall_seconds, 2)
    raw["model"] = report.model.to_dict()
    return raw


def file_documents(
    files: tuple[JobFile, ...],
    *,
    options: LoadOptions,
    on_error: Callable[[LoaderError], None],
) -> Iterator[Document]:
    """The Documents of stored files, each under its own source name; a file that cannot
    be read or converted goes to `on_error` and the others go on."""
    for item in files:
        try:
            data = Path(item.path).read_bytes()
        except OSError as exc:
            on_error(LoaderError(f"the stored upload is unreadable: {exc}", source=item.source))
            continue
        try:
            for document in convert(
                data,
                content_type=item.content_type,
                source=item.source,
                fallback_title=item.title or Path(item.source).stem or item.source,
                options=options,
            ):
                if item.title:
                    document.metadata[TITLE] = item.title
                yield document
        except LoaderError as error:
            on_error(error)
