"""Link targets: the page's links for a crawl, and relative ones made absolute."""

from __future__ import annotations

from urllib.parse import urljoin

from loaders.html.parse import _parse
from loaders.html.tree import _gone, _Tags


def _absolutize(tags: _Tags, base_url: str | None) -> None:
    if not base_url:
        return
    for attribute, found in (("href", tags.anchors), ("src", tags.images)):
        for tag in found:
            if _gone(tag):
                continue
            value = tag.get(attribute)
            if isinstance(value, str) and value and not value.startswith(("javascript:", "data:")):
                tag[attribute] = urljoin(base_url, value.strip())


def links(html: str, *, base_url: str) -> list[str]:
    """Absolute targets of the `<a href>` links in `html`, fragments removed, in order."""
    soup = _parse(html)
    found: list[str] = []
    for anchor in soup.find_all("a", href=True):
        href = anchor.get("href")
        if not isinstance(href, str) or href.startswith(("#", "javascript:", "mailto:")):
            continue
        found.append(urljoin(base_url, href.strip()).split("#", 1)[0])
    return found
