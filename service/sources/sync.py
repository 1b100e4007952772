"""Sync: make the index hold exactly what a registered source holds now.

Each kind lists the source's pages and reads only what may have changed:

- `directory`: when every file has the size and mtime the last sync saw (and no file
  came or went) nothing is read. Otherwise the directory is loaded whole, as `synopsis
  ingest DIR` does (its repeated blocks dropped across its pages), and every document
  goes to the idempotent ingest, which skips those whose Markdown is unchanged: only
  changed chunks are embedded and summarized.
- `sitemap`: the sitemap is fetched; a page whose `lastmod` is the one the last sync
  saw is not requested; every other page is requested conditionally (`If-None-Match`
  with its ETag, `If-Modified-Since` with its Last-Modified). A 304 is unchanged; a 200
  whose bytes hash as before is unchanged too (servers without validators, CDNs that
  change Last-Modified on every fetch); anything else is converted and ingested.
- `site`: the start URL is crawled again (no conditional requests yet); documents whose
  Markdown is unchanged cost no embedding or model call.

Every document it ingests carries the source's version label and group
(`service.index.versions`), and so do its chunks and summaries.

Pages no longer listed (gone from the directory, the sitemap or the crawl, or answered
404/410) are deleted from the index only when the sync completed: a failed fetch, a
failed load or a failed ingest anywhere leaves every indexed page in place (and the
next sync tries again). Page states are saved only after the sync, so a sync killed
mid-way leaves the previous states, and the next sync redoes what it had not finished.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import httpx
from langchain_core.documents import Document

from loaders import LoadOptions, load
from loaders.conditional import (
    GONE_STATUSES,
    FetchedPage,
    SitemapEntry,
    fetch_page,
    page_documents,
    robots_for,
    sitemap_entries,
)
from loaders.crawl import canonical_url
from loaders.deadlines import deadline_client
from loaders.documents import CONTENT_HASH, SOURCE
from loaders.files import iter_files
from service.errors import SynopsisError
from service.index.records import now
from service.index.versions import labelled
from service.sources.records import PageState, RegisteredSource, SyncReport
from splitters.base.errors import LoaderError

if TYPE_CHECKING:
    from service.ingest.pipeline import IngestEvent, IngestReport

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


@dataclasses.dataclass(kw_only=True)
class _Scan:
    """What reading a source found, before anything is written."""

    listed: set[str] = dataclasses.field(default_factory=set)  # pages that exist now
    states: dict[str, PageState] = dataclasses.field(default_factory=dict)  # new states
    pending: set[str] = dataclasses.field(default_factory=set)  # states valid once ingested
    documents: Iterable[Document] = ()


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
    if http is None and source.kind != "directory":
        http = deadline_client()
    try:
        try:
            if http is None:
                scan = _scan_directory(source, options, report)
            elif source.kind == "sitemap":
                scan = _scan_sitemap(http, source, options, report)
            else:
                scan = _scan_site(http, source, options, report)
            ingested = index.ingest_documents(
                labelled(scan.documents, version=source.version, group=source.group),
                on_event=on_event,
            )
        except (LoaderError, SynopsisError) as error:
            report.failed.append(str(error))
            scan = _Scan(listed=set(previous), states=dict(previous))
        else:
            report.llm_calls += ingested.llm_calls
            report.embedded_chunks += ingested.new_chunks
            report.failed.extend(ingested.failed)
    finally:
        if client is None and http is not None:
            http.close()

    states = scan.states
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
        last_report=report,
        synced_at=ended if report.completed else source.synced_at,
        attempted_at=ended,
    )


def _count(report: SyncReport, previous: PageState | None, new_hash: str) -> None:
    if previous is None:
        report.added += 1
    elif previous.hash == new_hash:
        report.unchanged += 1
    else:
        report.changed += 1


def _file_states(root: Path) -> dict[str, os.stat_result]:
    return {os.path.abspath(path): path.stat() for path in iter_files(root)}


def _scan_directory(source: RegisteredSource, options: LoadOptions, report: SyncReport) -> _Scan:
    root = Path(source.location)
    if not root.is_dir():
        raise LoaderError("not a directory (any more)", source=source.location)
    files = _file_states(root)
    previous = source.pages
    scan = _Scan()
    if set(files) == set(previous) and all(
        previous[path].size == stat.st_size and previous[path].mtime_ns == stat.st_mtime_ns
        for path, stat in files.items()
    ):
        report.unchanged += len(files)
        scan.listed = set(files)
        scan.states = dict(previous)
        return scan

    def failed(error: LoaderError) -> None:
        report.failed.append(str(error))
        scan.listed.add(error.source)  # its state is unknown: kept

    def classified(documents: Iterator[Document]) -> Iterator[Document]:
        for document in documents:
            page = str(document.metadata[SOURCE])
            digest = str(document.metadata[CONTENT_HASH])
            stat = files.get(page)
            _count(report, previous.get(page), digest)
            scan.listed.add(page)
            scan.states[page] = PageState(
                hash=digest,
                size=stat.st_size if stat else -1,
                mtime_ns=stat.st_mtime_ns if stat else -1,
            )
            scan.pending.add(page)
            yield document

    scan.documents = classified(load([str(root)], options=options, on_error=failed))
    return scan


def _scan_site(
    http: httpx.Client, source: RegisteredSource, options: LoadOptions, report: SyncReport
) -> _Scan:
    start = canonical_url(source.location)
    crawl_options = dataclasses.replace(
        options,
        crawl_depth=source.crawl_depth,
        max_pages=source.max_pages or options.max_pages,
    )
    previous = source.pages
    scan = _Scan()

    def failed(error: LoaderError) -> None:
        report.requests += 1
        gone = any(str(error).endswith(f"HTTP {status}") for status in GONE_STATUSES)
        if gone and error.source != start:
            return  # a page that is gone: not listed, so removed once the sync completes
        report.failed.append(str(error))
        scan.listed.add(error.source)  # its state is unknown: kept

    def classified(documents: Iterator[Document]) -> Iterator[Document]:
        for document in documents:
            page = str(document.metadata[SOURCE])
            digest = str(document.metadata[CONTENT_HASH])
            report.requests += 1
            _count(report, previous.get(page), digest)
            scan.listed.add(page)
            scan.states[page] = PageState(hash=digest)
            scan.pending.add(page)
            yield document

    scan.documents = classified(
        load([start], options=crawl_options, on_error=failed, http_client=http)
    )
    return scan


def _scan_sitemap(
    http: httpx.Client, source: RegisteredSource, options: LoadOptions, report: SyncReport
) -> _Scan:
    robots = robots_for(http, source.location, options)
    report.requests += robots is not None
    sitemap = fetch_page(http, source.location, options=options, robots=robots)
    report.requests += 1
    if sitemap.status != 200:
        raise LoaderError(f"sitemap answered HTTP {sitemap.status}", source=source.location)
    entries = sitemap_entries(sitemap.data, source=source.location)
    previous = source.pages
    scan = _Scan()
    documents: list[Document] = []

    def unchanged_by_lastmod(entry: SitemapEntry) -> bool:
        known = previous.get(entry.url)
        return bool(known and known.hash and entry.lastmod and known.lastmod == entry.lastmod)

    def fetch(entry: SitemapEntry) -> FetchedPage | LoaderError:
        known = previous.get(entry.url)
        try:
            return fetch_page(
                http,
                entry.url,
                options=options,
                etag=known.etag if known and known.hash else "",
                last_modified=known.last_modified if known and known.hash else "",
                robots=robots,
            )
        except LoaderError as error:
            return error

    to_fetch = [entry for entry in entries if not unchanged_by_lastmod(entry)]
    with ThreadPoolExecutor(max_workers=max(1, options.concurrency)) as pool:
        fetched = dict(zip((e.url for e in to_fetch), pool.map(fetch, to_fetch), strict=True))
    for entry in entries:
        known = previous.get(entry.url)
        result = fetched.get(entry.url)
        if result is None:  # lastmod as before: not requested
            report.unchanged += 1
            scan.listed.add(entry.url)
            scan.states[entry.url] = known or PageState()
            continue
        report.requests += 1
        if isinstance(result, LoaderError):
            report.failed.append(str(result))
            scan.listed.add(entry.url)
            continue
        if result.status in GONE_STATUSES:
            continue
        scan.listed.add(entry.url)
        if result.not_modified and known is not None:
            report.not_modified += 1
            report.unchanged += 1
            scan.states[entry.url] = dataclasses.replace(known, lastmod=entry.lastmod)
            continue
        digest = hashlib.sha256(result.data).hexdigest()
        state = PageState(
            hash=digest,
            etag=result.etag,
            last_modified=result.last_modified,
            lastmod=entry.lastmod,
        )
        _count(report, known, digest)
        scan.states[entry.url] = state
        if known is not None and known.hash == digest:
            continue
        try:
            documents.extend(page_documents(result, source=entry.url, options=options))
        except LoaderError as error:
            report.failed.append(str(error))
            continue
        scan.pending.add(entry.url)
    scan.documents = documents
    return scan
