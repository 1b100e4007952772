"""Running one job's spec through the same ingest core as `synopsis ingest`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from langchain_core.documents import Document

from loaders import TITLE, LoadOptions
from loaders.formats import convert
from service.errors import LoaderError
from service.ingest.pipeline import IngestEvent, IngestReport
from service.jobs.records import JobFile, JobSpec

if TYPE_CHECKING:
    from service.synopsis import Synopsis

__all__ = ["file_documents", "run_spec"]


def run_spec(
    synopsis: Synopsis,
    spec: JobSpec,
    *,
    options: LoadOptions,
    on_event: Callable[[IngestEvent], None],
) -> IngestReport:
    """Ingest what `spec` names; a source that fails is in the report, not raised.

    `options` are the loader options (a URL job's crawl depth and page limit replace
    theirs, and their address policy guards every fetch).
    """
    if spec.kind == "url":
        crawl = dataclasses.replace(
            options, crawl_depth=spec.crawl_depth, max_pages=spec.max_pages or options.max_pages
        )
        return synopsis.ingest([spec.url], options=crawl, on_event=on_event)
    report = IngestReport()

    def failed(error: LoaderError) -> None:
        report.failed.append(str(error))
        on_event(IngestEvent(stage="error", source=error.source, message=str(error)))

    documents = file_documents(spec.files, options=options, on_error=failed)
    return synopsis.ingest_documents(documents, on_event=on_event, report=report)


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
