"""Removing what is not content: from the whole page first, then inside the main content."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from bs4 import BeautifulSoup, Tag

from loaders.html.content import _CONTENT_HINTS, _MAX_HINTS
from loaders.html.tree import (
    _HEADINGS,
    _WORDS,
    _attribute,
    _decompose,
    _gone,
    _in_heading,
    _inside_pre,
    _link_stats,
    _tags,
    _text_length,
    _tokens,
    _words,
)

# Removed from the whole page before the main content is looked for.
_PAGE_DROP_TAGS = frozenset(
    {
        "script", "style", "noscript", "template", "iframe", "object", "embed", "svg",
        "dialog", "button", "input", "select", "textarea",
    }
)  # fmt: skip
_PAGE_DROP_ROLES = frozenset({"dialog", "alertdialog"})
_PAGE_DROP_WORDS = frozenset({"modal", "hidden", "cookie", "cookies", "consent"})
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
# Removed inside the main content.
_DROP_TAGS = frozenset({"nav", "footer", "form"})
_DROP_ROLES = frozenset({"navigation", "search", "banner", "contentinfo"})
_DROP_WORDS = frozenset(
    {
        "breadcrumb", "breadcrumbs", "toc", "navbar", "nav", "navigation", "pager",
        "pagination", "menu", "related", "headerlink", "edit", "prev", "previous", "next",
        "skip",
    }
)  # fmt: skip
# Additionally removed when the main content is not a semantic element.
_BODY_DROP_TAGS = frozenset({"header"})
# Tangential content: removed when it is a link list or a short untitled note.
_ASIDE_ROLES = frozenset({"complementary"})
_ASIDE_WORDS = frozenset({"sidebar", "aside"})
_ASIDE_MIN_CHARS = 200
# Only these are removed for their class or id words: a link or a span inside the text
# ("toc-backref", "headerlink") is content, or is handled on its own.
_CONTAINERS = frozenset(
    {
        "div", "section", "ul", "ol", "dl", "table", "details", "aside", "header", "p",
        "span", "li", "form", "menu",
    }
)  # fmt: skip
# Link text above this share of an element's text makes it a link list.
_LINK_LIST_SHARE = 0.6
_LINK_LIST_MIN_LINKS = 3
# A page-local table of contents is nothing but its links.
_LOCAL_TOC_SHARE = 0.9
# A link target longer than this carries data, not the address of a page.
_MAX_LINK_CHARS = 300
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".bmp")


def _is_link_list(tag: Tag) -> bool:
    total, linked, count = _link_stats(tag)
    return count >= _LINK_LIST_MIN_LINKS and linked >= _LINK_LIST_SHARE * total


def _is_hidden(attrs: dict[str, Any]) -> bool:
    if "hidden" in attrs or str(attrs.get("aria-hidden", "")).strip().lower() == "true":
        return True
    style = attrs.get("style")
    return isinstance(style, str) and _HIDDEN_STYLE.search(style) is not None


def _drop_page_noise(soup: BeautifulSoup) -> list[Tag]:
    """Remove what is never content anywhere on the page; return the content-hinted tags."""
    doomed: list[Tag] = []
    hinted: list[Tag] = []
    for node in soup.descendants:
        if not isinstance(node, Tag):
            continue
        attrs = node.attrs
        if node.name in _PAGE_DROP_TAGS:
            doomed.append(node)
        elif not attrs:
            continue
        elif (
            _attribute(node, "role") in _PAGE_DROP_ROLES
            or _attribute(node, "aria-modal") == "true"
            or _is_hidden(attrs)
            or not _PAGE_DROP_WORDS.isdisjoint(_words(node))
        ):
            if node.name != "pre" and not _inside_pre(node):
                doomed.append(node)
        elif len(hinted) < _MAX_HINTS and not _CONTENT_HINTS.isdisjoint(_tokens(node)):
            hinted.append(node)
    _decompose(doomed)
    return [tag for tag in hinted if not _gone(tag)]


def _is_tangential_noise(tag: Tag) -> bool:
    """An aside or sidebar that is a link list or a short note without a title."""
    if any(_attribute(t, "role") == "note" for t in (tag, *_tags(tag))):
        return False  # footnotes
    if _is_link_list(tag):
        return True
    titled = any(t.name in _HEADINGS or "title" in _words(t) for t in (tag, *_tags(tag)))
    return not titled and _text_length(tag) < _ASIDE_MIN_CHARS


def _section_ids(root: Tag) -> set[str]:
    """Ids of the page's headings and of the sections they open."""
    ids: set[str] = set()
    for tag in _tags(root):
        if tag.name in _HEADINGS:
            for holder in (tag, tag.parent):
                ident = holder.get("id") if isinstance(holder, Tag) else None
                if isinstance(ident, str):
                    ids.add(ident)
    return ids


def _is_local_toc(tag: Tag, root: Tag, sections: list[set[str]]) -> bool:
    """A list of nothing but links to the page's own sections: a page-local table of
    contents. (Links to the page's own definitions are content, not a TOC.) `sections`
    caches the section ids of `root`, found on first need."""
    anchors = [a for a in _tags(tag) if a.name == "a"]
    if len(anchors) < _LINK_LIST_MIN_LINKS:
        return False
    if not all(str(a.get("href") or "").startswith("#") for a in anchors):
        return False
    if not sections:
        sections.append(_section_ids(root))
    for anchor in anchors:
        href = str(anchor.get("href") or "")
        if href[1:] not in sections[0]:
            return False
    total, linked, _ = _link_stats(tag)
    return linked >= _LOCAL_TOC_SHARE * total


def _is_noise_link(anchor: Tag) -> bool:
    """An "edit this page", previous/next or logo link, or one that carries data (a
    playground's "Run" link holds the whole example in its URL)."""
    href = str(anchor.get("href") or "")
    if len(href) > _MAX_LINK_CHARS:
        return True
    rel = anchor.get("rel")
    rels = rel.split() if isinstance(rel, str) else list(rel or [])
    if {"prev", "next", "previous"} & {r.lower() for r in rels}:
        return True
    if "/edit/" in href or "edit" in _WORDS.split(_attribute(anchor, "title")):
        return True
    if any(not text.isspace() for text in anchor.strings):
        return False
    if not any(tag.name == "img" for tag in _tags(anchor)):
        return False
    return not urlsplit(href).path.lower().endswith(_IMAGE_SUFFIXES)


def _drop_noise(root: Tag, *, semantic: bool) -> None:
    tags = _DROP_TAGS if semantic else _DROP_TAGS | _BODY_DROP_TAGS
    sections: list[set[str]] = []
    doomed: list[Tag] = []
    for tag in _tags(root):
        name = tag.name
        if name == "pre":
            continue
        if name == "a":
            if _is_noise_link(tag):
                doomed.append(tag)
            continue
        if name not in _CONTAINERS and name not in tags:
            continue
        if not tag.attrs and name in _CONTAINERS and name not in tags:
            is_toc = name in ("ul", "ol") and _is_local_toc(tag, root, sections)
            if is_toc or (name == "aside" and _is_tangential_noise(tag)):
                doomed.append(tag)
            continue
        words = _words(tag)
        role = _attribute(tag, "role")
        if name in tags or role in _DROP_ROLES or not _DROP_WORDS.isdisjoint(words):
            doomed.append(tag)
        elif name == "aside" or role in _ASIDE_ROLES or not _ASIDE_WORDS.isdisjoint(words):
            if _is_tangential_noise(tag):
                doomed.append(tag)
        elif name in ("ul", "ol") and _is_local_toc(tag, root, sections):
            doomed.append(tag)
    _decompose([tag for tag in doomed if not _inside_pre(tag) and not _in_heading(tag)])
