"""A documentation site served on loopback by a test: pages that change, disappear and
appear between syncs, with or without ETags, a sitemap, and counts of what was asked."""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Site:
    """What the server serves; change it between syncs."""

    pages: dict[str, str] = field(default_factory=dict)  # path → HTML
    lastmod: dict[str, str] = field(default_factory=dict)  # path → the sitemap's lastmod
    etags: bool = True
    failing: set[str] = field(default_factory=set)  # paths answered 500
    unlisted: set[str] = field(default_factory=set)  # served, but not in the sitemap
    requests: Counter[str] = field(default_factory=Counter)
    not_modified: Counter[str] = field(default_factory=Counter)
    base: str = ""

    def url(self, path: str) -> str:
        return f"{self.base}{path}"

    @property
    def sitemap_url(self) -> str:
        return self.url("/sitemap.xml")

    def sitemap(self) -> str:
        rows = []
        for path in sorted(self.pages):
            if path in self.unlisted:
                continue
            lastmod = f"<lastmod>{self.lastmod[path]}</lastmod>" if path in self.lastmod else ""
            rows.append(f"<url><loc>{self.url(path)}</loc>{lastmod}</url>")
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            + "".join(rows)
            + "</urlset>"
        )


def page(title: str, text: str) -> str:
    """A short HTML page: one heading, one paragraph (one chunk)."""
    return (
        f"<html><head><title>{title}</title></head>"
        f"<body><h1>{title}</h1><p>{text}</p></body></html>"
    )


@contextmanager
def serve(site: Site) -> Iterator[Site]:
    """Serve `site` on a loopback port until the block ends."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            path = self.path
            site.requests[path] += 1
            if path == "/sitemap.xml":
                self._send(200, site.sitemap().encode(), "application/xml")
                return
            if path in site.failing:
                self._send(500, b"boom", "text/plain")
                return
            if path not in site.pages:
                self._send(404, b"not found", "text/plain")
                return
            body = site.pages[path].encode()
            etag = f'"{hashlib.sha256(body).hexdigest()[:16]}"'
            if site.etags and self.headers.get("If-None-Match") == etag:
                site.not_modified[path] += 1
                self.send_response(304)
                self.send_header("ETag", etag)
                self.end_headers()
                return
            self._send(200, body, "text/html; charset=utf-8", etag if site.etags else "")

        def _send(self, status: int, body: bytes, media_type: str, etag: str = "") -> None:
            self.send_response(status)
            self.send_header("Content-Type", media_type)
            self.send_header("Content-Length", str(len(body)))
            if etag:
                self.send_header("ETag", etag)
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    site.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
