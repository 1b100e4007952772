"""The scans of a registered site (crawled again: `loaders.recrawl`) and of a sitemap or
an llms.txt index (`loaders.conditional`): every page the last sync knew is asked
conditionally, and only what changed is converted (`service.sources.sync`)."""

from __future__ import annotations

import dataclasses
import hashlib
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

import httpx
from langchain_core.documents import Document

from loaders import LoadOptions
from loaders.boilerplate import without_blocks
from loaders.conditional import (
    GONE_STATUSES,
    FetchedPage,
    SitemapEntry,
    fetch_page,
    llms_txt_entries,
    page_documents,
    robots_for,
    sitemap_entries,
    sitemap_index_entries,
)
from loaders.crawl import canonical_url
from loaders.documents import CONTENT_TYPE, HTML
from loaders.recrawl import CrawledPage, KnownPage, recrawl
from service.sources.records import PageState, RegisteredSource, SyncReport
from service.sources.scan import Scan, count, html_keys, judged
from splitters.base.errors import LoaderError

__all__ = ["MAX_SITEMAPS", "scan_site", "scan_sitemap"]

#: The most sitemaps a sitemap index may list (each is one request of every sync).
MAX_SITEMAPS = 200


def scan_site(
    http: httpx.Client, source: RegisteredSource, options: LoadOptions, report: SyncReport
) -> Scan:
    """Crawl the site again, asking for every page it knows conditionally; convert only
    the pages that changed, or whose repeated blocks did (see the module docstring of
    `service.sources.sync`)."""
    start = canonical_url(source.location)
    scheme, netloc = urlsplit(start)[:2]
    origin = f"{scheme}://{netloc}"
    crawl_options = dataclasses.replace(
        options,
        crawl_depth=source.crawl_depth,
        max_pages=source.max_pages or options.max_pages,
    )
    previous = source.pages
    # Stored links are paths on the start URL's origin (every in-scope link is on it).
    known = {
        url: KnownPage(
            etag=state.etag,
            last_modified=state.last_modified,
            links=tuple(origin + path for path in state.links),
        )
        for url, state in previous.items()
        if state.hash and state.links is not None
    }
    scan = Scan()
    robots = robots_for(http, start, options)
    report.requests += robots is not None

    def failed(error: LoaderError) -> None:
        report.requests += 1
        report.failed.append(str(error))
        scan.listed.add(error.source)  # its state is unknown: kept

    def gone(url: str) -> None:
        report.requests += 1
        if url == start:
            report.failed.append(f"{url}: the start page answered as gone")
            scan.listed.add(url)
        # any other page that is gone is not listed: removed once the sync completes

    pages: list[CrawledPage] = []
    for crawled in recrawl(
        http,
        start,
        options=crawl_options,
        known=known,
        on_error=failed,
        on_gone=gone,
        robots=robots,
    ):
        report.requests += 1
        pages.append(crawled)

    def keys(crawled: CrawledPage) -> frozenset[int] | None:
        if crawled.status == 304:
            blocks = previous[crawled.url].blocks
            return None if blocks is None else frozenset(blocks)
        return html_keys(crawled.documents)

    counted = [(crawled, keys(crawled)) for crawled in pages]
    documents: list[Document] = []
    for (page, blocks), doomed in judged(counted, drop=options.drop_repeated_blocks):
        known_state = previous.get(page.url)
        dropped = tuple(sorted(doomed))
        scan.listed.add(page.url)
        crawled = page
        if page.status == 304:
            assert known_state is not None
            report.not_modified += 1
            report.unchanged += 1
            scan.states[page.url] = known_state
            if dropped == known_state.dropped:
                continue
            # The site around it changed which of its blocks are repeats: read it again.
            try:
                crawled = _refetch(http, page, known_state, options=crawl_options, robots=robots)
            except LoaderError as error:
                report.failed.append(str(error))
                continue
            finally:
                report.requests += 1
        else:
            count(report, known_state, page.digest)
        scan.states[page.url] = PageState(
            hash=crawled.digest,
            etag=crawled.etag,
            last_modified=crawled.last_modified,
            links=tuple(link.removeprefix(origin) for link in crawled.links),
            blocks=None if blocks is None else tuple(sorted(blocks)),
            dropped=dropped,
        )
        if (
            known_state is not None
            and known_state.hash == crawled.digest
            and known_state.dropped == dropped
            and known_state.links is not None  # a state of this form: its hash is of bytes
        ):
            continue  # the same bytes, the same blocks dropped: the same Markdown
        documents.extend(
            without_blocks(d, doomed) if d.metadata.get(CONTENT_TYPE) == HTML else d
            for d in crawled.documents
        )
        scan.pending.add(page.url)
    scan.documents = documents
    return scan


def _listing(
    http: httpx.Client,
    url: str,
    options: LoadOptions,
    robots: RobotFileParser | None,
    report: SyncReport,
) -> FetchedPage:
    """A sitemap, sitemap index or llms.txt, fetched whole; `LoaderError` unless a 200."""
    report.requests += 1
    listing = fetch_page(http, url, options=options, robots=robots)
    if listing.status != 200:
        raise LoaderError(f"answered HTTP {listing.status}", source=url)
    return listing


def _sitemap_pages(
    http: httpx.Client,
    sitemap: FetchedPage,
    options: LoadOptions,
    robots: RobotFileParser | None,
    report: SyncReport,
) -> list[SitemapEntry]:
    """The pages of a sitemap, or of every sitemap a sitemap index lists (one level: an
    index in an index is refused), in order, each once. Every listed sitemap is fetched:
    one that cannot be is a `LoaderError`, and the sync removes nothing."""
    children = sitemap_index_entries(sitemap.data, source=sitemap.url)
    if children is None:
        return sitemap_entries(sitemap.data, source=sitemap.url)
    if len(children) > MAX_SITEMAPS:
        raise LoaderError(
            f"a sitemap index of {len(children)} sitemaps; at most {MAX_SITEMAPS} are read",
            source=sitemap.url,
        )
    pages: dict[str, SitemapEntry] = {}
    for child in children:
        listed = _listing(http, child.url, options, robots, report)
        for entry in sitemap_entries(listed.data, source=child.url):
            pages.setdefault(entry.url, entry)
    return list(pages.values())


def _refetch(
    http: httpx.Client,
    crawled: CrawledPage,
    known: PageState,
    *,
    options: LoadOptions,
    robots: RobotFileParser | None,
) -> CrawledPage:
    """`crawled` (answered 304) requested whole, to convert it again; `LoaderError` when it
    is not the page the last sync saw any more (it changed during the sync)."""
    fetched = fetch_page(http, crawled.url, options=options, robots=robots)
    digest = hashlib.sha256(fetched.data).hexdigest()
    if fetched.status != 200 or digest != known.hash:
        raise LoaderError("changed during the sync; read again next time", source=crawled.url)
    documents = tuple(page_documents(fetched, source=crawled.url, options=options))
    return dataclasses.replace(crawled, status=200, digest=digest, documents=documents)


def scan_sitemap(
    http: httpx.Client, source: RegisteredSource, options: LoadOptions, report: SyncReport
) -> Scan:
    """Fetch the sitemap (or llms.txt) and ask for each page it lists that may have
    changed, conditionally; convert only the pages that did."""
    robots = robots_for(http, source.location, options)
    report.requests += robots is not None
    sitemap = _listing(http, source.location, options, robots, report)
    if source.kind == "llms-txt":
        entries = llms_txt_entries(sitemap.data, source=sitemap.url)
    else:
        entries = _sitemap_pages(http, sitemap, options, robots, report)
    previous = source.pages
    scan = Scan()
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
        count(report, known, digest)
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
