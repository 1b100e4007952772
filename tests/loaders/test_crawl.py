"""Crawls against a real HTTP server on 127.0.0.1, serving a temporary site."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from loaders import LoadOptions, load
from loaders.crawl import canonical_url
from loaders.documents import CONTENT_TYPE, HTML, MARKDOWN, SOURCE, TITLE
from service.errors import LoaderError

PAGES = {
    "docs/index.html": (
        "<title>Index</title><main><h1>Index</h1>"
        '<a href="a.html">a</a> <a href="sub/b.html#frag">b</a> <a href="../outside.html">out</a>'
        ' <a href="private/secret.html">secret</a> <a href="go-out">redirect out</a>'
        ' <a href="go-in">redirect in</a> <a href="big.html">big</a> <a href="logo.png">img</a>'
        ' <a href="notes.md">notes</a> <a href="a.html">a again</a></main>'
    ),
    "docs/a.html": '<main><h1>A</h1><p>see <a href="c.html">c</a></p></main>',
    "docs/sub/b.html": '<main><h1>B</h1><p><a href="../index.html">up</a></p></main>',
    "docs/c.html": "<main><h1>C</h1><p>deepest</p></main>",
    "docs/moved.html": "<main><h1>Moved</h1></main>",
    "docs/private/secret.html": "<main><h1>Secret</h1></main>",
    "docs/big.html": "<main><h1>Big</h1><p>" + "x" * 5000 + "</p></main>",
    "docs/notes.md": "# Notes\n\nplain markdown\n",
    "outside.html": "<main><h1>Outside</h1></main>",
    "robots.txt": "User-agent: *\nDisallow: /docs/private/\n",
}
REDIRECTS = {"/docs/go-out": "/outside.html", "/docs/go-in": "/docs/moved.html"}


class _Handler(SimpleHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path in REDIRECTS:
            self.send_response(302)
            self.send_header("Location", REDIRECTS[self.path])
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def site(tmp_path: Path) -> Iterator[str]:
    for relative, text in PAGES.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (tmp_path / "docs" / "logo.png").write_bytes(b"\x89PNG")
    handler = functools.partial(_Handler, directory=str(tmp_path))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _crawl(url: str, **options: object) -> tuple[list[str], list[str]]:
    errors: list[LoaderError] = []
    with httpx.Client() as client:
        docs = list(
            load([url], options=LoadOptions(**options), on_error=errors.append, http_client=client)  # type: ignore[arg-type]
        )
    root = url.split("/docs/", maxsplit=1)[0]
    return (
        [d.metadata[SOURCE].removeprefix(root) for d in docs],
        [str(e).removeprefix(root) for e in errors],
    )


def test_single_page(site: str) -> None:
    [doc] = load([f"{site}/docs/a.html"])
    assert doc.metadata[SOURCE] == f"{site}/docs/a.html"
    assert doc.metadata[TITLE] == "A"
    assert doc.metadata[CONTENT_TYPE] == HTML
    assert doc.page_content == f"# A\n\nsee [c]({site}/docs/c.html)\n"


@pytest.mark.parametrize(
    ("depth", "max_pages", "expected"),
    [
        (0, 200, ["/docs/index.html"]),
        (
            1,
            200,
            [
                "/docs/index.html",
                "/docs/a.html",
                "/docs/sub/b.html",
                "/docs/moved.html",
                "/docs/big.html",
                "/docs/notes.md",
            ],
        ),
        (
            2,
            200,
            [
                "/docs/index.html",
                "/docs/a.html",
                "/docs/sub/b.html",
                "/docs/moved.html",
                "/docs/big.html",
                "/docs/notes.md",
                "/docs/c.html",
            ],
        ),
        (2, 3, ["/docs/index.html", "/docs/a.html", "/docs/sub/b.html"]),
    ],
)
def test_crawl_depth_max_pages_and_scope(
    site: str, depth: int, max_pages: int, expected: list[str]
) -> None:
    sources, errors = _crawl(f"{site}/docs/index.html", crawl_depth=depth, max_pages=max_pages)
    assert sources == expected
    if depth and max_pages > 3:
        assert errors == [
            "/docs/private/secret.html: disallowed by robots.txt",
            "/docs/go-out: redirected out of scope to " + site + "/outside.html",
        ]


def test_size_cap_applies_to_responses(site: str) -> None:
    sources, errors = _crawl(f"{site}/docs/index.html", crawl_depth=1, max_bytes=3000)
    assert "/docs/big.html" not in sources
    assert "/docs/big.html: 5032 bytes exceeds the size cap of 3000 bytes" in errors


def test_robots_can_be_ignored(site: str) -> None:
    sources, _ = _crawl(f"{site}/docs/index.html", crawl_depth=1, respect_robots=False)
    assert "/docs/private/secret.html" in sources


def test_markdown_url_and_concurrency_one(site: str) -> None:
    sources, errors = _crawl(f"{site}/docs/notes.md", concurrency=1)
    assert (sources, errors) == (["/docs/notes.md"], [])
    [doc] = load([f"{site}/docs/notes.md"])
    assert (doc.metadata[CONTENT_TYPE], doc.metadata[TITLE]) == (MARKDOWN, "Notes")


def test_http_errors_and_unreachable_hosts_are_loader_errors(site: str) -> None:
    with pytest.raises(LoaderError, match=r"/docs/missing.html: HTTP 404$"):
        list(load([f"{site}/docs/missing.html"]))
    with pytest.raises(LoaderError, match=r"robots.txt unreachable \(ConnectError\)"):
        list(load(["http://127.0.0.1:9/docs/"], options=LoadOptions(timeout=2)))


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTP://Example.ORG:80/a#x", "http://example.org/a"),
        ("https://example.org:443", "https://example.org/"),
        ("https://example.org:8443/a?q=1", "https://example.org:8443/a?q=1"),
    ],
)
def test_canonical_url(url: str, expected: str) -> None:
    assert canonical_url(url) == expected
