"""Headings: their anchors (kept as `{#id}` header attributes), their words without
permalinks or glyphs, and the page's title."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Comment, Tag
from bs4.element import NavigableString

from loaders.html.tree import _HEADINGS, _classes, _gone, _tags
from splitters.base.markdown_syntax import header_id_attribute

# Text of a permalink anchor: Sphinx and MkDocs use ¶, other generators #, § or 🔗, or an
# icon font's private-use glyph (any text without a letter or digit counts).
_PERMALINK_MARKS = {"", "¶", "#", "§", "🔗"}
# Never a heading's words: ¶, icon-font glyphs (private-use code points, such as the
# U+F0C1 link icon of MkDocs' theme) and invisible format characters (zero-width spaces).
_GLYPHS = re.compile("[¶\ue000-\uf8ff\U000f0000-\U0010ffff\u200b-\u200f\u2060\ufeff]")
# A heading's anchor, until the Markdown is written (then a `{#id}` attribute).
_ANCHOR_PLACEHOLDER = "\ue002{}\ue003"
_ANCHOR_PLACEHOLDER_RE = re.compile("[ \t]*\ue002(\\d+)\ue003")
# Ids written as header attributes: those `{#id}` can hold (splitters.base.markdown_syntax).
_ANCHOR_ID = re.compile(r"[A-Za-z0-9_:.\-]+")


def _add_title_heading(root: Tag, soup: BeautifulSoup) -> None:
    """Give a main content without an `<h1>` one from the page's `<title>`."""
    if root.find("h1") is not None:
        return
    title = soup.find("title")
    text = _heading_text(title) if isinstance(title, Tag) else ""
    if text:
        heading = soup.new_tag("h1")
        heading.string = text
        root.insert(0, heading)


def _is_permalink_text(text: str) -> bool:
    """¶, #, §, 🔗, nothing, or an icon-font glyph: no letter or digit in it."""
    return text in _PERMALINK_MARKS or not any(char.isalnum() for char in text)


def _heading_anchor(heading: Tag) -> str:
    """The id a link to `heading`'s section would use: the heading's own, that of the
    section it opens (a `<section>` or `class="section"` parent whose first heading it
    is), or the target of a permalink or named anchor inside it; "" when there is none
    (or not a plain id)."""
    candidates: list[object] = [heading.get("id")]
    parent = heading.parent
    if (
        isinstance(parent, Tag)
        and (parent.name == "section" or "section" in _classes(parent))
        and parent.find(_HEADINGS) is heading
    ):
        candidates.append(parent.get("id"))
    for anchor in (tag for tag in _tags(heading) if tag.name == "a"):
        href = anchor.get("href")
        candidates += [href[1:] if isinstance(href, str) and href.startswith("#") else None]
        candidates += [anchor.get("id"), anchor.get("name")]
    return next((c for c in candidates if isinstance(c, str) and _ANCHOR_ID.fullmatch(c)), "")


def _mark_anchors(headings: list[Tag]) -> list[str]:
    """Put a placeholder at the end of every heading that has an anchor; returns the
    anchors, which `_restore_anchors` writes as `{#id}` header attributes."""
    anchors: list[str] = []
    for heading in headings:
        if heading.name not in _HEADINGS or _gone(heading):
            continue
        anchor = _heading_anchor(heading)
        if anchor:
            heading.append(NavigableString(_ANCHOR_PLACEHOLDER.format(len(anchors))))
            anchors.append(anchor)
    return anchors


#: A Markdown header line's start: spaces, then "#" (matched where a line starts; slicing
#: the rest of the page for each placeholder made a large page's conversion quadratic).
_HEADER_LINE_START = re.compile(r" *#")


def _restore_anchors(markdown: str, anchors: list[str]) -> str:
    """The placeholders of `_mark_anchors` as header attributes (`{#id}`); one that did
    not end up on a header line (a heading inside a table, say) is removed."""

    def attribute(match: re.Match[str]) -> str:
        line_start = markdown.rfind("\n", 0, match.start()) + 1
        if _HEADER_LINE_START.match(markdown, line_start):
            return " " + header_id_attribute(anchors[int(match.group(1))])
        return ""

    return _ANCHOR_PLACEHOLDER_RE.sub(attribute, markdown)


def _clean_permalinks(headings: list[Tag]) -> None:
    for heading in headings:
        if _gone(heading):
            continue
        anchors = [tag for tag in _tags(heading) if tag.name == "a"]
        for anchor in anchors:
            if _is_permalink_anchor(anchor):
                anchor.decompose()
        if heading.name in _HEADINGS:
            # Links in a header would end up in every chunk's header path: keep the text.
            for anchor in anchors:
                if not _gone(anchor):
                    anchor.unwrap()
        for text in list(heading.find_all(string=True)):
            if _ANCHOR_PLACEHOLDER_RE.search(text):
                continue  # the anchor's placeholder (private-use characters of our own)
            if _GLYPHS.search(text):
                text.replace_with(_GLYPHS.sub("", text))


def _heading_text(tag: Tag) -> str:
    """A heading's words: without its permalink anchor, glyphs or invisible characters."""
    words = []
    for text in tag.find_all(string=True):
        if isinstance(text, Comment):
            continue
        anchor = text.find_parent("a")
        if anchor is not None and _is_permalink_anchor(anchor):
            continue
        words.append(str(text))
    return " ".join(_GLYPHS.sub("", "".join(words)).split())


def _is_permalink_anchor(anchor: Tag) -> bool:
    href = str(anchor.get("href") or "")
    return href.startswith("#") and _is_permalink_text(_GLYPHS.sub("", anchor.get_text()).strip())


def _title(soup: BeautifulSoup, main: Tag) -> str | None:
    h1 = main.find("h1")
    if isinstance(h1, Tag) and _heading_text(h1):
        return _heading_text(h1)
    title = soup.find("title")
    if isinstance(title, Tag) and _heading_text(title):
        return _heading_text(title)
    return None
