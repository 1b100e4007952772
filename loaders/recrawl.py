"""A crawl again, conditionally: what a sync of a registered site reads.

`recrawl` walks a site as `loaders.crawl` does (the same scope, breadth first, the same
page budget per level, links in document order, each URL once, a redirect to a page
already read skipped), so it reaches the same pages as a fresh crawl. What it knows of
a page from the last crawl (`KnownPage`: its validators and the in-scope links it had)
lets it ask conditionally: `If-None-Match` with the ETag, `If-Modified-Since` with the
Last-Modified. A page answered `304 Not Modified` costs that one request: its links are
the ones it had, and nothing is converted. A page answered `200` is converted (without
dropping repeated blocks: the caller judges the site as a whole, `loaders.boilerplate`)
and its links are read from its HTML.

A page that is gone (404, 410) goes to `on_gone`, every other failure to `on_error` as a
`LoaderError`; the crawl goes on.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

import httpx
from langchain_core.documents import Document

from loaders.conditional import FetchedPage, fetch_page, page_documents
from loaders.crawl import (
    _SKIPPED_SUFFIXES,
    _content_type,
    _fetched_in_order,
    _Response,
    _Scope,
    canonical_url,
)
from loaders.encoding import decode_text
from loaders.html import links
from loaders.options import LoadOptions
from splitters.base.errors import LoaderError

__all__ = ["CrawledPage", "KnownPage", "recrawl"]

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


@dataclass(frozen=True, slots=True)
class KnownPage:
    """What the last crawl saw of a page. Without `links` (None: not recorded) the page is
    requested whole, since a `304` would leave its links unknown."""

    etag: str = ""
    last_modified: str = ""
    links: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class CrawledPage:
    """One page of the crawl. `status` 304: unchanged since `KnownPage` (no `documents`,
    its `links` are the known ones); 200: `documents` converted from the body whose
    sha256 is `digest`, `links` read from it (HTML only)."""

    url: str  # after redirects: its documents' source
    status: int
    depth: int
    digest: str = ""
    etag: str = ""
    last_modified: str = ""
    links: tuple[str, ...] = ()
    documents: tuple[Document, ...] = ()


def page_links(page: FetchedPage, scope: Callable[[str], bool]) -> tuple[str, ...]:
    """The links of an HTML page that a crawl would follow: canonical, in scope, not to a
    file that is never a document, each once, in document order."""
    if page.media_type not in _HTML_TYPES:
        return ()
    try:
        text = decode_text(page.data, source=page.url, declared=page.charset, html=True)
    except LoaderError:
        return ()  # its conversion reports it
    found: dict[str, None] = {}
    for link in links(text, base_url=page.url):
        target = canonical_url(link)
        suffix = posixpath.splitext(urlsplit(target).path)[1].lower()
        if suffix not in _SKIPPED_SUFFIXES and scope(target):
            found.setdefault(target, None)
    return tuple(found)


def recrawl(
    client: httpx.Client,
    start: str,
    *,
    options: LoadOptions,
    known: Mapping[str, KnownPage],
    on_error: Callable[[LoaderError], None],
    on_gone: Callable[[str], None],
    robots: RobotFileParser | None = None,
) -> Iterator[CrawledPage]:
    """Yield the pages of the crawl of `start` (`options.crawl_depth` levels, at most
    `options.max_pages` pages) in the order `loaders.crawl` reads them, asking
    conditionally for the pages in `known` (keyed by URL). A page whose media type is
    not a document is skipped (an error for the start URL), as the crawl skips it."""
    start = canonical_url(start)
    scope = _Scope.of(start)

    def fetch(url: str) -> FetchedPage:
        page = known.get(url)
        conditional = page is not None and page.links is not None
        fetched = fetch_page(
            client,
            url,
            options=options,
            etag=page.etag if page is not None and conditional else "",
            last_modified=page.last_modified if page is not None and conditional else "",
            robots=robots,
            within=scope.contains,
        )
        if fetched.not_modified and fetched.url != url:
            # Redirected to a page that matched the validators of the one asked for: what
            # is known of `url` says nothing of it, so it is read whole.
            fetched = fetch_page(client, url, options=options, robots=robots, within=scope.contains)
        if fetched.not_modified and not (conditional and fetched.url == url):
            raise LoaderError("answered 304 to an unconditional request", source=url)
        return fetched

    seen = {start}
    done: set[str] = set()
    frontier = [start]
    budget = options.max_pages
    depth = 0
    workers = max(1, options.concurrency)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        while frontier and budget > 0:
            level, frontier = frontier[:budget], []
            budget -= len(level)
            for url, fetched in _fetched_in_order(
                pool, level, fetch, workers=workers, on_error=on_error
            ):
                if fetched.gone:
                    on_gone(url)
                    continue
                if fetched.url in done:
                    continue  # a redirect led to a page already read
                done.add(fetched.url)
                crawled, found = _page(
                    fetched,
                    url,
                    depth=depth,
                    start=start,
                    known=known,
                    scope=scope,
                    options=options,
                    on_error=on_error,
                )
                if crawled is not None:
                    yield crawled
                if depth < options.crawl_depth:
                    for link in found:
                        if link not in seen:
                            seen.add(link)
                            frontier.append(link)
            depth += 1


def _page(
    fetched: FetchedPage,
    requested: str,
    *,
    depth: int,
    start: str,
    known: Mapping[str, KnownPage],
    scope: _Scope,
    options: LoadOptions,
    on_error: Callable[[LoaderError], None],
) -> tuple[CrawledPage | None, tuple[str, ...]]:
    """The page to yield (None: not a document, or not converted) and its links."""
    if fetched.not_modified:
        page = known[requested]
        assert page.links is not None  # asked conditionally only then
        crawled = CrawledPage(
            url=fetched.url,
            status=304,
            depth=depth,
            etag=page.etag,
            last_modified=page.last_modified,
            links=page.links,
        )
        return crawled, page.links
    if _content_type(_Response(fetched.url, fetched.media_type, fetched.charset, b"")) is None:
        # As the crawl does: a page that is not a document is skipped, but not the start.
        if requested == start:
            on_error(
                LoaderError(f"unsupported media type {fetched.media_type!r}", source=requested)
            )
        return None, ()
    found = page_links(fetched, scope.contains)
    try:
        documents = tuple(page_documents(fetched, source=fetched.url, options=options))
    except LoaderError as error:
        on_error(error)  # its links are still followed, as the crawl follows them
        return None, found
    crawled = CrawledPage(
        url=fetched.url,
        status=fetched.status,
        depth=depth,
        digest=hashlib.sha256(fetched.data).hexdigest(),
        etag=fetched.etag,
        last_modified=fetched.last_modified,
        links=found,
        documents=documents,
    )
    return crawled, found
