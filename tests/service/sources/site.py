"""A documentation site served on loopback by a test: pages that change, disappear and
appear between syncs, with or without ETags (or with Last-Modified), a sitemap and an
llms.txt index, and counts of what was asked."""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Site:
    """What the server serves; change it between syncs."""

    pages: dict[str, str] = field(default_factory=dict)  # path → HTML
    lastmod: dict[str, str] = field(default_factory=dict)  # path → the sitemap's lastmod
    etags: bool = True
    last_modified: bool = False  # send Last-Modified (and honour If-Modified-Since)
    failing: set[str] = field(default_factory=set)  # paths answered 500
    unlisted: set[str] = field(default_factory=set)  # served, but not in the sitemap
    redirects: dict[str, str] = field(default_factory=dict)  # path → the path it moved to
    # /sitemap.xml is an index of this many sitemaps (/sitemap-N.xml), the pages dealt
    # out among them in turn; 0: /sitemap.xml lists the pages itself
    sitemaps: int = 0
    requests: Counter[str] = field(default_factory=Counter)
    not_modified: Counter[str] = field(default_factory=Counter)
    base: str = ""

    def url(self, path: str) -> str:
        return f"{self.base}{path}"

    @property
    def sitemap_url(self) -> str:
        return self.url("/sitemap.xml")

    @property
    def llms_txt_url(self) -> str:
        return self.url("/llms.txt")

    def llms_txt(self) -> str:
        """An llms.txt index of the listed pages (relative links, one list)."""
        rows = [f"- [{path}]({path.lstrip('/')}): a page" for path in sorted(self.pages)]
        return (
            "# The site\n\n> Its pages.\n\n## Docs\n\n"
            + "\n".join(
                row
                for row, path in zip(rows, sorted(self.pages), strict=True)
                if path not in self.unlisted
            )
            + "\n"
        )

    def sitemap_index(self) -> str:
        rows = "".join(
            f"<sitemap><loc>{self.url(f'/sitemap-{n}.xml')}</loc></sitemap>"
            for n in range(self.sitemaps)
        )
        return f'<?xml version="1.0"?><sitemapindex>{rows}</sitemapindex>'

    def sitemap(self, part: int | None = None) -> str:
        """The sitemap of the listed pages (with `part`: of the part-th sitemap's share)."""
        rows = []
        listed = [path for path in sorted(self.pages) if path not in self.unlisted]
        for number, path in enumerate(listed):
            if part is not None and number % self.sitemaps != part:
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
                body = site.sitemap_index() if site.sitemaps else site.sitemap()
                self._send(200, body.encode(), "application/xml")
                return
            part = path.removeprefix("/sitemap-").removesuffix(".xml")
            if site.sitemaps and part.isdigit() and int(part) < site.sitemaps:
                if path in site.failing:
                    self._send(500, b"boom", "text/plain")
                    return
                self._send(200, site.sitemap(int(part)).encode(), "application/xml")
                return
            if path == "/llms.txt":
                self._send(200, site.llms_txt().encode(), "text/plain; charset=utf-8")
                return
            if path in site.redirects:
                self.send_response(301)
                self.send_header("Location", site.redirects[path])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if path in site.failing:
                self._send(500, b"boom", "text/plain")
                return
            if path not in site.pages:
                self._send(404, b"not found", "text/plain")
                return
            body = site.pages[path].encode()
            digest = hashlib.sha256(body).hexdigest()
            etag = f'"{digest[:16]}"' if site.etags else ""
            # A date of its own for every version of the page (as a file's mtime would be).
            stamp = formatdate(int(digest[:7], 16), usegmt=True) if site.last_modified else ""
            if (etag and self.headers.get("If-None-Match") == etag) or (
                stamp and self.headers.get("If-Modified-Since") == stamp
            ):
                site.not_modified[path] += 1
                self.send_response(304)
                if etag:
                    self.send_header("ETag", etag)
                self.end_headers()
                return
            self._send(200, body, "text/html; charset=utf-8", etag, stamp)

        def _send(
            self, status: int, body: bytes, media_type: str, etag: str = "", stamp: str = ""
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", media_type)
            self.send_header("Content-Length", str(len(body)))
            if etag:
                self.send_header("ETag", etag)
            if stamp:
                self.send_header("Last-Modified", stamp)
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
