"""Conditional fetches of single pages, and sitemaps: what a re-sync of a site reads.

`fetch_page` sends `If-None-Match` (the stored ETag) and `If-Modified-Since` (the stored
Last-Modified) so that an unchanged page costs one request answered `304 Not Modified`
with no body. It goes through the same machinery as the crawler (`loaders.crawl`): the
address policy checks the URL and every redirect hop before anything is connected to,
redirects are followed by hand (and must stay on the start URL's origin), the body is
capped at `LoadOptions.max_bytes` and the whole fetch at `LoadOptions.fetch_deadline`.

`sitemap_entries` reads a `sitemap.xml` (`<urlset>`) into its page URLs with their
`lastmod`, and `sitemap_index_entries` a sitemap index (`<sitemapindex>`) into the
sitemaps it lists; `llms_txt_entries` reads an `llms.txt` index (https://llmstxt.org:
Markdown whose list items link the pages) into its pages.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from html import unescape
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx
from langchain_core.documents import Document

from loaders.bodies import content_type, read_body
from loaders.crawl import (
    _content_type,
    _get,
    _Response,
    _robots,
    _route,
    _title_fallback,
    canonical_url,
)
from loaders.deadlines import deadline_passed
from loaders.formats import convert
from loaders.options import LoadOptions
from splitters.base.errors import LoaderError, UnsafeUrlError

__all__ = [
    "FetchedPage",
    "SitemapEntry",
    "fetch_page",
    "llms_txt_entries",
    "page_documents",
    "robots_for",
    "sitemap_entries",
    "sitemap_index_entries",
]

_MAX_REDIRECTS = 10
#: Statuses that say a page is gone for good (a sync removes it).
GONE_STATUSES = frozenset({404, 410})


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """The answer to one (conditional) GET: `status` 304 means unchanged (no `data`); 404
    and 410 mean gone; 200 carries the body with its validators."""

    url: str  # after redirects
    status: int
    data: bytes = b""
    media_type: str = ""
    charset: str | None = None
    etag: str = ""
    last_modified: str = ""

    @property
    def not_modified(self) -> bool:
        return self.status == 304

    @property
    def gone(self) -> bool:
        return self.status in GONE_STATUSES


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    """One `<url>` of a sitemap."""

    url: str
    lastmod: str = ""


def robots_for(client: httpx.Client, url: str, options: LoadOptions) -> RobotFileParser | None:
    """The robots.txt rules of `url`'s origin (None when `options.respect_robots` is off);
    `LoaderError` when robots.txt puts the site off limits (see `loaders.crawl`)."""
    if not options.respect_robots:
        return None
    parts = urlsplit(canonical_url(url))
    found = _robots(client, url, f"{parts.scheme}://{parts.netloc}", options)
    if isinstance(found, LoaderError):
        raise found
    return found


def fetch_page(
    client: httpx.Client,
    url: str,
    *,
    options: LoadOptions,
    etag: str = "",
    last_modified: str = "",
    robots: RobotFileParser | None = None,
    within: Callable[[str], bool] | None = None,
) -> FetchedPage:
    """GET `url`, conditionally when a validator is given. A status of 400 and above other
    than 404/410 (and every network failure) is a `LoaderError`: the page's state is
    unknown, so a sync must neither update nor remove it. A redirect must stay on `url`'s
    origin and, with `within`, at a URL `within` accepts (a crawl's scope)."""
    origin = urlsplit(canonical_url(url))[:2]
    current, route = url, _route(url, options.address_policy)
    deadline = time.monotonic() + options.fetch_deadline
    conditions = {"If-None-Match": etag} if etag else {}
    if last_modified:
        conditions["If-Modified-Since"] = last_modified
    for _ in range(_MAX_REDIRECTS + 1):
        if robots is not None and not robots.can_fetch(options.user_agent, current):
            raise LoaderError("disallowed by robots.txt", source=current)
        try:
            with _get(client, route, options, deadline, extra_headers=conditions) as response:
                status = response.status_code
                if status == 304 or status in GONE_STATUSES:
                    return FetchedPage(url=current, status=status)
                if response.is_redirect:
                    target = canonical_url(urljoin(current, response.headers["location"]))
                    if urlsplit(target)[:2] != origin:
                        raise LoaderError(f"redirected off the site to {target}", source=url)
                    if within is not None and not within(target):
                        raise LoaderError(f"redirected out of scope to {target}", source=url)
                    try:
                        current, route = target, _route(target, options.address_policy)
                    except UnsafeUrlError as error:
                        raise UnsafeUrlError(
                            f"redirected to {target}: {error.reason}", source=url
                        ) from None
                    continue
                if status >= 400:
                    raise LoaderError(f"HTTP {status}", source=current)
                body = read_body(
                    response,
                    source=current,
                    max_bytes=options.max_bytes,
                    deadline=deadline,
                    seconds=options.fetch_deadline,
                )
                media_type, charset = content_type(response)
                return FetchedPage(
                    url=current,
                    status=status,
                    data=body,
                    media_type=media_type,
                    charset=charset,
                    etag=response.headers.get("etag", ""),
                    last_modified=response.headers.get("last-modified", ""),
                )
        except httpx.HTTPError as exc:
            why = (
                f"no complete response within {options.fetch_deadline:g} s (the fetch deadline)"
                if deadline_passed(deadline)
                else f"request failed ({type(exc).__name__}: {exc})"
            )
            raise LoaderError(why, source=current) from exc
    raise LoaderError(f"more than {_MAX_REDIRECTS} redirects", source=url)


_URL_BLOCK = re.compile(r"<url\b[^>]*>(.*?)</url\s*>", re.DOTALL | re.IGNORECASE)
_LOC = re.compile(r"<loc\b[^>]*>\s*(.*?)\s*</loc\s*>", re.DOTALL | re.IGNORECASE)
_LASTMOD = re.compile(r"<lastmod\b[^>]*>\s*(.*?)\s*</lastmod\s*>", re.DOTALL | re.IGNORECASE)


_SITEMAP_BLOCK = re.compile(r"<sitemap\b[^>]*>(.*?)</sitemap\s*>", re.DOTALL | re.IGNORECASE)
_INDEX = re.compile(r"<sitemapindex\b", re.IGNORECASE)


def sitemap_index_entries(data: bytes, *, source: str) -> list[SitemapEntry] | None:
    """The sitemaps a sitemap index (`<sitemapindex>`) lists, in document order, each URL
    once; None when `data` is no sitemap index. `LoaderError` for an index that lists none."""
    text = data.decode("utf-8", errors="replace")
    if not _INDEX.search(text):
        return None
    entries: dict[str, SitemapEntry] = {}
    for block in _SITEMAP_BLOCK.findall(text):
        loc = _LOC.search(block)
        if loc is None:
            continue
        url = canonical_url(urljoin(source, unescape(loc.group(1))))
        lastmod = _LASTMOD.search(block)
        entries.setdefault(url, SitemapEntry(url, unescape(lastmod.group(1)) if lastmod else ""))
    if not entries:
        raise LoaderError("a sitemap index that lists no <sitemap>", source=source)
    return list(entries.values())


def sitemap_entries(data: bytes, *, source: str) -> list[SitemapEntry]:
    """The pages of a sitemap (`<urlset>`), in document order, each URL once.

    Read with regular expressions rather than an XML parser: a sitemap is a flat list,
    and no entity or DTD of a hostile file is ever expanded. `LoaderError` for a sitemap
    index (read it with `sitemap_index_entries`) or a file with no `<url>`.
    """
    text = data.decode("utf-8", errors="replace")
    if _INDEX.search(text):
        raise LoaderError("a sitemap index where a sitemap was expected", source=source)
    entries: dict[str, SitemapEntry] = {}
    for block in _URL_BLOCK.findall(text):
        loc = _LOC.search(block)
        if loc is None:
            continue
        url = canonical_url(unescape(loc.group(1)))
        lastmod = _LASTMOD.search(block)
        entries.setdefault(url, SitemapEntry(url, unescape(lastmod.group(1)) if lastmod else ""))
    if not entries:
        raise LoaderError("no <url> entries: not a sitemap", source=source)
    return list(entries.values())


# A list item's Markdown links (`- [Title](url): notes`), inline only: `[text](url "title")`.
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(.*)$")
_INLINE_LINK = re.compile(r"\[(?:[^\]\\]|\\.)*\]\(\s*<?([^\s)>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def llms_txt_entries(data: bytes, *, source: str) -> list[SitemapEntry]:
    """The pages of an `llms.txt` index: the http(s) links of its list items (relative
    ones resolved against `source`), in document order, each URL once; links in fenced
    code, the title and the prose around the lists are not pages. `LoaderError` for a
    file that links no page."""
    entries: dict[str, SitemapEntry] = {}
    fence = ""
    for line in data.decode("utf-8", errors="replace").splitlines():
        opening = _FENCE.match(line)
        if opening:
            marker = opening.group(1)
            if not fence:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = ""
            continue
        item = None if fence else _LIST_ITEM.match(line)
        if item is None:
            continue
        for target in _INLINE_LINK.findall(item.group(1)):
            url = urljoin(source, unescape(target))
            if urlsplit(url).scheme in ("http", "https"):
                url = canonical_url(url)
                entries.setdefault(url, SitemapEntry(url))
    if not entries:
        raise LoaderError("no linked pages in its lists: not an llms.txt index", source=source)
    return list(entries.values())


def page_documents(page: FetchedPage, *, source: str, options: LoadOptions) -> list[Document]:
    """The Documents of a fetched page (status 200), indexed under `source` (the URL the
    sitemap lists, whatever it redirected to); `LoaderError` for a media type that is not
    a document."""
    kind = _content_type(_Response(page.url, page.media_type, page.charset, page.data))
    if kind is None:
        raise LoaderError(f"unsupported media type {page.media_type!r}", source=source)
    return list(
        convert(
            page.data,
            content_type=kind,
            source=source,
            fallback_title=_title_fallback(page.url),
            options=options,
            base_url=page.url,
            charset=page.charset,
        )
    )
