"""The search page at `/`: one HTML file, its script, style sheet and icon (`web/`).

The page calls `POST /search` and a streamed `POST /ask` from the browser with the read
key the user enters (kept in the tab's sessionStorage); serving the page itself needs no
key. The files are read once, at import, and sent with a Content-Security-Policy that
allows only this origin's script, style and requests.
"""

from __future__ import annotations

from pathlib import Path

from litestar import Controller, Response, get

__all__ = ["PAGE_HEADERS", "PageController"]

_WEB = Path(__file__).resolve().parent / "web"
_FILES = {
    name: (_WEB / name).read_bytes() for name in ("index.html", "app.js", "style.css", "icon.svg")
}

#: Sent with every file of the page.
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def _file(name: str, media_type: str) -> Response[bytes]:
    # Litestar adds `; charset=utf-8` to a text/* media type.
    return Response(_FILES[name], media_type=media_type, headers=PAGE_HEADERS)


class PageController(Controller):
    """The search page and its two assets; left out of the OpenAPI schema."""

    include_in_schema = False

    @get("/", media_type="text/html")
    async def page(self) -> Response[bytes]:
        """The search page."""
        return _file("index.html", "text/html")

    @get("/ui/app.js", media_type="text/javascript")
    async def script(self) -> Response[bytes]:
        """The page's script."""
        return _file("app.js", "text/javascript")

    @get("/ui/style.css", media_type="text/css")
    async def style(self) -> Response[bytes]:
        """The page's style sheet."""
        return _file("style.css", "text/css")

    @get("/ui/icon.svg", media_type="image/svg+xml")
    async def icon(self) -> Response[bytes]:
        """The page's icon."""
        return _file("icon.svg", "image/svg+xml")
