"""Finding a page's main content without knowing its generator or theme."""

from __future__ import annotations

from typing import Any

from bs4 import BeautifulSoup, Tag

from loaders.html.tree import _HEADINGS, _own_text, _tags

# An id or class that names the main content.
_CONTENT_HINTS = frozenset(
    {
        "content", "contents", "main", "main-content", "maincontent", "main_content",
        "page-content", "pagecontent", "document", "body", "article", "markdown-body",
        "doc-content", "docs-content", "post-content", "entry-content",
    }
)  # fmt: skip
_MAX_HINTS = 32
# How many levels the main content may descend from the hinted element or the body.
_MAX_NARROWING = 12
# A child holding this share of its parent's own text is the main content instead.
_NARROW_SHARE = 0.85


def _narrowed(tag: Tag) -> Tag:
    """Descend while one child holds nearly all of `tag`'s own (non-link) text and no
    heading is left behind."""
    for _ in range(_MAX_NARROWING):
        total = _own_text(tag)
        if total <= 0:
            return tag
        for child in tag.children:
            if isinstance(child, Tag) and _own_text(child) >= _NARROW_SHARE * total:
                if any(_has_heading(other) for other in tag.children if other is not child):
                    return tag  # the child's section title sits beside it
                tag = child
                break
        else:
            return tag
    return tag


def _has_heading(node: Any) -> bool:
    if not isinstance(node, Tag):
        return False
    return node.name in _HEADINGS or any(tag.name in _HEADINGS for tag in _tags(node))


def _main_content(soup: BeautifulSoup, hinted: list[Tag]) -> tuple[Tag, bool]:
    """The element holding the page's main content, and whether it is a semantic one."""
    role_main = soup.find(True, {"role": "main"})
    if isinstance(role_main, Tag):
        return role_main, True
    main = soup.find("main")
    scope: Tag = main if isinstance(main, Tag) else soup
    articles = scope.find_all("article")
    if len(articles) == 1:
        return articles[0], True
    if isinstance(main, Tag):
        return main, True
    body = soup.find("body")
    root: Tag = body if isinstance(body, Tag) else soup
    if hinted:
        best = max(hinted, key=_own_text)
        if _own_text(best) >= 0.5 * _own_text(root):
            root = best
    return _narrowed(root), False
