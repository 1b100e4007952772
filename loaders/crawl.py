"""URLs: one page, or a breadth-first crawl of a documentation site.

The crawl stays in scope: the start URL's scheme, host and port, and paths under the
start URL's directory (`https://h/docs/3/index.html` → `https://h/docs/3/`). Redirects
are followed by hand, at most `_MAX_REDIRECTS` hops, each target re-checked against the
scope and robots.txt. Pages are fetched `LoadOptions.concurrency` at a time but yielded
in discovery order (breadth first, links in document order), so a crawl of an unchanged
site is deterministic. Every response is capped at `LoadOptions.max_bytes` while it
streams (decoded, inflating at most one byte past the cap) and every fetch, redirects
included, at `LoadOptions.fetch_deadline` seconds (`loaders.bodies`). robots.txt is
honoured for every fetch, the start URL included, unless `respect_robots` is off; an
unreachable robots.txt (5xx or network error) disallows the site, as RFC 9309 asks.

With `LoadOptions.address_policy`, every URL is checked before it is connected to:
robots.txt and each of its redirect hops, the start URL, each redirect hop of a page
and each crawled link. A refused URL is an `UnsafeUrlError` (a refused start URL: before
anything is fetched), and every request goes to the address its check resolved, with the
original `Host` header and TLS server name, so the HTTP client never resolves a name
itself. `Document` sources stay the host-name URLs.
"""

from __future__ import annotations

import functools
import posixpath
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urljoin, urlsplit, urlunsplit
from urllib.robotparser import RobotFileParser

import httpx
from langchain_core.documents import Document

from loaders.addresses import AddressPolicy
from loaders.bodies import ACCEPT_ENCODING, content_type, read_body
from loaders.deadlines import deadline_client, deadline_passed, fetch_deadline
from loaders.documents import DOCX, HTML, MARKDOWN, PDF, TEXT
from loaders.encoding import decode_text
from loaders.formats import convert
from loaders.html import links
from loaders.options import LoadOptions
from splitters.base.errors import LoaderError, UnsafeUrlError

__all__ = ["canonical_url", "crawl"]

_MAX_REDIRECTS = 10
_R = TypeVar("_R")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_MEDIA_TYPES = {
    "text/html": HTML,
    "application/xhtml+xml": HTML,
    "text/markdown": MARKDOWN,
    "text/x-markdown": MARKDOWN,
    "text/plain": TEXT,
    "application/pdf": PDF,
    DOCX: DOCX,
}
# Links to these are never documents: not worth a request.
_SKIPPED_SUFFIXES = frozenset(
    {
        ".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".webp", ".css", ".js", ".map",
        ".zip", ".gz", ".tgz", ".bz2", ".xz", ".tar", ".whl", ".exe", ".dmg", ".mp3", ".mp4",
        ".woff", ".woff2", ".ttf", ".epub", ".inv", ".json", ".xml",
    }
)  # fmt: skip


def canonical_url(url: str) -> str:
    """`url` with scheme and host lower-cased, default port and fragment dropped."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    if parts.username:
        netloc = f"{parts.username}@{netloc}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


@dataclass(frozen=True, slots=True)
class _Scope:
    origin: str
    prefix: str

    @classmethod
    def of(cls, url: str) -> _Scope:
        parts = urlsplit(url)
        directory = parts.path if parts.path.endswith("/") else posixpath.dirname(parts.path)
        prefix = directory if directory.endswith("/") else directory + "/"
        return cls(origin=f"{parts.scheme}://{parts.netloc}", prefix=prefix)

    def contains(self, url: str) -> bool:
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.netloc}" == self.origin and parts.path.startswith(
            self.prefix
        )


@dataclass(frozen=True, slots=True)
class _Route:
    """What one request is sent to: the URL (or the checked address), headers, extensions."""

    url: str
    headers: Mapping[str, str]
    extensions: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class _Response:
    url: str
    media_type: str
    charset: str | None
    data: bytes


def _route(url: str, policy: AddressPolicy | None) -> _Route:
    """How to request `url`: as it is, or (with a policy) at its checked address.

    Raises `UnsafeUrlError` when the policy refuses `url`; nothing is connected to then.
    """
    if policy is None:
        return _Route(url, {}, {})
    target = policy.check(url)
    return _Route(target.connect_url, {"Host": target.host_header}, target.extensions)


def _robots(
    client: httpx.Client, start: str, origin: str, options: LoadOptions
) -> RobotFileParser | LoaderError:
    """The parsed robots.txt of `origin`, or the error that puts the whole site off limits.

    Redirects are followed by hand so that the address policy checks every hop.
    """
    parser = RobotFileParser()
    current = f"{origin}/robots.txt"
    deadline = time.monotonic() + options.fetch_deadline
    for hop in range(_MAX_REDIRECTS + 1):
        try:
            route = _route(current, options.address_policy)
        except UnsafeUrlError as error:
            # The first hop is the start URL's own host: refusing it refuses the start URL.
            if hop == 0:
                return UnsafeUrlError(error.reason, source=start)
            return UnsafeUrlError(
                f"robots.txt redirected to {current}: {error.reason}", source=start
            )
        try:
            with _get(client, route, options, deadline) as response:
                if response.is_redirect:
                    current = urljoin(current, response.headers["location"])
                    continue
                if response.status_code >= 500:
                    return LoaderError(
                        f"robots.txt answered HTTP {response.status_code}; not crawling",
                        source=start,
                    )
                if response.status_code >= 400:
                    parser.parse([])  # no robots.txt: everything allowed
                    return parser
                body = read_body(
                    response,
                    source=current,
                    max_bytes=options.max_bytes,
                    deadline=deadline,
                    seconds=options.fetch_deadline,
                )
        except httpx.HTTPError as exc:
            why = (
                f"no response within {options.fetch_deadline:g} s, the fetch deadline"
                if deadline_passed(deadline)
                else type(exc).__name__
            )
            return LoaderError(f"robots.txt unreachable ({why}); not crawling", source=start)
        except LoaderError as error:
            reason = str(error).removeprefix(f"{error.source}: ")
            return LoaderError(f"robots.txt unreadable ({reason}); not crawling", source=start)
        parser.parse(body.decode("utf-8", errors="replace").splitlines())
        return parser
    return LoaderError(
        f"robots.txt unreachable (more than {_MAX_REDIRECTS} redirects); not crawling",
        source=start,
    )


@contextmanager
def _get(
    client: httpx.Client,
    route: _Route,
    options: LoadOptions,
    deadline: float,
    *,
    extra_headers: Mapping[str, str] | None = None,
) -> Iterator[httpx.Response]:
    """One streamed GET of `route` (redirects are followed by hand), every network wait of
    it ending by `deadline`; `extra_headers` (a conditional GET's) are sent too."""
    with (
        fetch_deadline(deadline),
        client.stream(
            "GET",
            route.url,
            headers={**_headers(options, route), **(extra_headers or {})},
            extensions=route.extensions,
            timeout=options.timeout,
            follow_redirects=False,
        ) as response,
    ):
        yield response


def _headers(options: LoadOptions, route: _Route) -> dict[str, str]:
    return {"User-Agent": options.user_agent, "Accept-Encoding": ACCEPT_ENCODING, **route.headers}


def _fetch(
    client: httpx.Client,
    url: str,
    *,
    scope: _Scope,
    robots: RobotFileParser | None,
    options: LoadOptions,
) -> _Response:
    current, route = url, _route(url, options.address_policy)
    deadline = time.monotonic() + options.fetch_deadline
    for _ in range(_MAX_REDIRECTS + 1):
        if time.monotonic() > deadline:
            raise LoaderError(
                f"not fetched within {options.fetch_deadline:g} s (the fetch deadline)",
                source=current,
            )
        if robots is not None and not robots.can_fetch(options.user_agent, current):
            raise LoaderError("disallowed by robots.txt", source=current)
        try:
            with _get(client, route, options, deadline) as response:
                if response.is_redirect:
                    target = canonical_url(urljoin(current, response.headers["location"]))
                    try:
                        next_route = _route(target, options.address_policy)
                    except UnsafeUrlError as error:
                        raise UnsafeUrlError(
                            f"redirected to {target}: {error.reason}", source=url
                        ) from None
                    if not scope.contains(target):
                        raise LoaderError(f"redirected out of scope to {target}", source=url)
                    current, route = target, next_route
                    continue
                if response.status_code >= 400:
                    raise LoaderError(f"HTTP {response.status_code}", source=current)
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > options.max_bytes:
                    raise LoaderError(
                        f"{declared} bytes exceeds the size cap of {options.max_bytes} bytes",
                        source=current,
                    )
                body = read_body(
                    response,
                    source=current,
                    max_bytes=options.max_bytes,
                    deadline=deadline,
                    seconds=options.fetch_deadline,
                )
                media_type, charset = content_type(response)
                return _Response(current, media_type, charset, body)
        except httpx.TimeoutException as exc:
            if not deadline_passed(deadline):
                raise LoaderError(
                    f"request failed ({type(exc).__name__}: {exc})", source=current
                ) from exc
            raise LoaderError(
                f"no complete response within {options.fetch_deadline:g} s (the fetch deadline)",
                source=current,
            ) from exc
        except httpx.HTTPError as exc:
            raise LoaderError(
                f"request failed ({type(exc).__name__}: {exc})", source=current
            ) from exc
    raise LoaderError(f"more than {_MAX_REDIRECTS} redirects", source=url)


def _content_type(response: _Response) -> str | None:
    kind = _MEDIA_TYPES.get(response.media_type)
    path = urlsplit(response.url).path.lower()
    if kind in (None, TEXT) and path.endswith((".md", ".markdown")):
        return MARKDOWN
    return kind


def _title_fallback(url: str) -> str:
    path = urlsplit(url).path.rstrip("/")
    return posixpath.basename(path) or urlsplit(url).netloc


def crawl(
    start: str,
    *,
    options: LoadOptions,
    on_error: Callable[[LoaderError], None],
    client: httpx.Client | None = None,
) -> Iterator[Document]:
    """Yield the Documents of `start` and, with `options.crawl_depth` > 0, of its crawl.

    Per-page failures go to `on_error` (which may raise to stop the crawl). Linked pages
    of a type that is not a document (images, archives, unknown media types) are skipped.
    """
    own_client = client is None
    http = client if client is not None else deadline_client()
    try:
        yield from _crawl(http, canonical_url(start), options, on_error)
    finally:
        if own_client:
            http.close()


def _fetched_in_order(
    pool: ThreadPoolExecutor,
    level: list[str],
    fetch: Callable[[str], _R],
    *,
    workers: int,
    on_error: Callable[[LoaderError], None],
) -> Iterator[tuple[str, _R]]:
    """Fetch a level's URLs, at most `workers` at a time, and yield (url, result) in the
    level's order; a URL whose fetch raised a `LoaderError` goes to `on_error` instead."""
    queue = iter(level)
    pending: deque[tuple[str, Future[_R]]] = deque()

    def submit_next() -> None:
        url = next(queue, None)
        if url is not None:
            pending.append((url, pool.submit(fetch, url)))

    for _ in range(max(1, workers)):
        submit_next()
    while pending:
        url, job = pending.popleft()
        submit_next()
        try:
            result = job.result()
        except LoaderError as error:
            on_error(error)
            continue
        yield url, result


def _crawl(
    client: httpx.Client,
    start: str,
    options: LoadOptions,
    on_error: Callable[[LoaderError], None],
) -> Iterator[Document]:
    scope = _Scope.of(start)
    robots: RobotFileParser | None = None
    if options.respect_robots:
        found = _robots(client, start, scope.origin, options)
        if isinstance(found, LoaderError):
            on_error(found)
            return
        robots = found
    seen = {start}
    done: set[str] = set()
    frontier = [start]
    budget = options.max_pages
    depth = 0
    fetch = functools.partial(_fetch, client, scope=scope, robots=robots, options=options)
    with ThreadPoolExecutor(max_workers=max(1, options.concurrency)) as pool:
        while frontier and budget > 0:
            level, frontier = frontier[:budget], []
            budget -= len(level)
            for url, response in _fetched_in_order(
                pool, level, fetch, workers=options.concurrency, on_error=on_error
            ):
                if response.url in done:
                    continue  # a redirect led to a page already loaded
                done.add(response.url)
                kind = _content_type(response)
                if kind is None:
                    if url == start:
                        on_error(
                            LoaderError(
                                f"unsupported media type {response.media_type!r}", source=url
                            )
                        )
                    continue
                try:
                    yield from convert(
                        response.data,
                        content_type=kind,
                        source=response.url,
                        fallback_title=_title_fallback(response.url),
                        options=options,
                        base_url=response.url,
                        charset=response.charset,
                    )
                except LoaderError as error:
                    on_error(error)
                if kind != HTML or depth >= options.crawl_depth:
                    continue
                try:
                    text = decode_text(
                        response.data, source=response.url, declared=response.charset, html=True
                    )
                except LoaderError:
                    continue  # already reported by convert
                for link in links(text, base_url=response.url):
                    target = canonical_url(link)
                    suffix = posixpath.splitext(urlsplit(target).path)[1].lower()
                    if target in seen or suffix in _SKIPPED_SUFFIXES or not scope.contains(target):
                        continue
                    seen.add(target)
                    frontier.append(target)
            depth += 1
