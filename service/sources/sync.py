"""Sync: make the index hold exactly what a registered source holds now.

Each kind lists the source's pages and reads only what may have changed (the scans:
`service.sources.scan`, `.web`, `.repository`):

- `directory`: when every file has the size and mtime the last sync saw (and no file
  came or went) nothing is read. Otherwise the directory is loaded whole, as `synopsis
  ingest DIR` does (its repeated blocks dropped across its pages), and every document
  goes to the idempotent ingest, which skips those whose Markdown is unchanged: only
  changed chunks are embedded and summarized.
- `git`: the commit the ref names now is listed (`loaders.git`), unless it is the one
  the last completed sync indexed (then nothing is read); a file whose blob id is the
  one the last sync saw is not read, the others are read from git (not from the working
  tree). Repeated blocks are judged again from the stored fingerprints, as for a site.
- `sitemap` and `llms-txt`: the sitemap (or the llms.txt index, whose list items link
  the pages) is fetched; a page whose `lastmod` is the one the last sync saw is not
  requested; every other page is requested conditionally (`If-None-Match` with its
  ETag, `If-Modified-Since` with its Last-Modified). A 304 is unchanged; a 200 whose
  bytes hash as before is unchanged too (servers without validators, CDNs that change
  Last-Modified on every fetch); anything else is converted and ingested.
- `site`: the start URL is crawled again (`loaders.recrawl`: the crawl's order and
  scope), each page it knows asked conditionally as a sitemap page is; a page answered
  304 is followed through the links it had. Which text blocks are repeats across the
  site (`loaders.boilerplate`) is judged again from the fingerprints every page's state
  keeps: an unchanged page whose dropped blocks are not the same as before is requested
  whole and ingested again, so the index is what a first crawl of the site writes.

Every document it ingests carries the source's version label and group
(`service.index.versions`), and so do its chunks and summaries.

A source whose version or group was edited while an edit could not relabel all its pages
(`relabel_pending`) has them relabelled by the sync, in place.

Pages no longer listed (gone from the directory, the commit, the sitemap or the crawl,
or answered 404/410) are deleted from the index only when the sync completed: a failed
fetch, a failed load or a failed ingest anywhere leaves every indexed page in place (and
the next sync tries again). Page states are saved only after the sync, so a sync killed
mid-way leaves the previous states, and the next sync redoes what it had not finished.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

import httpx
from langchain_core.documents import Document

from loaders import LoadOptions
from loaders.deadlines import deadline_client
from service.errors import SynopsisError
from service.index.records import now
from service.index.versions import labelled
from service.sources.records import PageState, RegisteredSource, SyncReport
from service.sources.repository import scan_git
from service.sources.scan import Scan, scan_directory
from service.sources.web import scan_site, scan_sitemap
from splitters.base.errors import LoaderError

if TYPE_CHECKING:
    from service.ingest.report import IngestEvent, IngestReport

__all__ = ["SyncIndex", "sync_source"]


class SyncIndex(Protocol):
    """What a sync writes to (a `Synopsis`)."""

    def ingest_documents(
        self,
        documents: Iterable[Document],
        *,
        on_event: Callable[[IngestEvent], None] | None = None,
        report: IngestReport | None = None,
    ) -> IngestReport: ...

    def delete_source(self, source: str, *, wait: float = 0.0) -> tuple[int, int]: ...

    def relabel_source(self, source: str, *, version: str, group: str) -> int: ...


def sync_source(
    index: SyncIndex,
    source: RegisteredSource,
    *,
    options: LoadOptions,
    client: httpx.Client | None = None,
    on_event: Callable[[IngestEvent], None] | None = None,
) -> RegisteredSource:
    """Sync `source` into `index`; returns it with its new page states and report (the
    caller stores it). Never raises for a page or a fetch that failed: the report says
    `completed=False` and lists them."""
    started = time.perf_counter()
    report = SyncReport()
    previous = source.pages
    http = client
    if http is None and source.kind not in ("directory", "git"):
        http = deadline_client()
    try:
        try:
            if source.kind == "git":
                scan = scan_git(source, options, report)
            elif source.kind == "directory":
                scan = scan_directory(source, options, report)
            elif source.kind in ("sitemap", "llms-txt"):
                assert http is not None
                scan = scan_sitemap(http, source, options, report)
            else:
                assert http is not None
                scan = scan_site(http, source, options, report)
            ingested = index.ingest_documents(
                labelled(scan.documents, version=source.version, group=source.group),
                on_event=on_event,
            )
        except (LoaderError, SynopsisError) as error:
            report.failed.append(str(error))
            scan = Scan(listed=set(previous), states=dict(previous))
        else:
            report.llm_calls += ingested.llm_calls
            report.embedded_chunks += ingested.new_chunks
            report.failed.extend(ingested.failed)
    finally:
        if client is None and http is not None:
            http.close()

    states = scan.states
    relabel_pending = source.relabel_pending
    if relabel_pending:
        relabel_pending = not _relabel(index, source, sorted(states), report)
    if report.failed:
        # Whatever was to be ingested is read again next time (its validators forgotten).
        for page in scan.pending:
            if page in previous:
                states[page] = PageState()
            else:
                states.pop(page, None)
    gone = sorted(set(previous) - scan.listed)
    if report.failed:
        for page in gone:
            states[page] = previous[page]
        for page, state in previous.items():
            states.setdefault(page, state)
    else:
        for page in gone:
            try:
                index.delete_source(page)
                report.removed += 1
            except SynopsisError as error:
                report.failed.append(f"{page}: not removed ({error})")
                states[page] = previous[page]
    report.completed = not report.failed
    report.seconds = time.perf_counter() - started
    ended = now()
    return dataclasses.replace(
        source,
        pages=states,
        commit=scan.commit if report.completed and scan.commit else source.commit,
        relabel_pending=relabel_pending,
        last_report=report,
        synced_at=ended if report.completed else source.synced_at,
        attempted_at=ended,
    )


def _relabel(
    index: SyncIndex, source: RegisteredSource, pages: list[str], report: SyncReport
) -> bool:
    """Finish the relabelling of an edit (`RegisteredSource.relabel_pending`): whether
    every page now carries the source's labels."""
    done = True
    for page in pages:
        try:
            index.relabel_source(page, version=source.version, group=source.group)
        except SynopsisError as error:
            report.failed.append(f"{page}: not relabelled ({error})")
            done = False
    return done
