"""HTML → Markdown: the main content of a documentation page, with code blocks byte-exact.

The main content is found without knowing the generator or its theme:

1. semantic elements first: `[role=main]`, the single `<article>`, `<main>`;
2. else the element whose id or class is a content hint (`content`, `main-content`,
   `document`, `body`, …) and holds at least half of the page's own text (text outside
   links), else `<body>`;
3. from there, while one child holds nearly all of the own text (`_NARROW_SHARE`), that
   child: a column of links beside the text (a site menu) is left behind.

Evident non-content is removed from the page first (scripts, styles, inline SVG
diagrams' text, dialogs and modals, hidden elements), then inside the main content:
`nav`, `footer`, forms, navigation/search/banner ARIA roles, elements whose class or id
words say breadcrumb, table of contents, navigation bar, pager, menu or previous/next,
"edit this page" and previous/next links, logo links (an image and no text), links
whose target carries data (over `_MAX_LINK_CHARS`), page-local tables of contents
(lists of links to the page's own sections), and asides or sidebars that are link lists
or short untitled notes (a footnote, `role=note`, or a titled aside is kept). A main
content without an `<h1>` gets one from the page's `<title>`, so every chunk of the page
has a header path (a semantic main content is left as it is).

Code blocks never pass through markdownify: each `<pre>` is swapped for a placeholder,
the rest is converted, and the placeholder is replaced by a fence around the `<pre>`'s
exact text. The fence is longer than any backtick run in the code and always starts
at column 0, even when the `<pre>` sat in a list item or a table cell, so a fenced
block's content is always the `<pre>` text byte for byte. Nothing inside a `<pre>` is
ever removed.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import lxml.html
import markdownify
from bs4 import BeautifulSoup, Comment, Tag, XMLParsedAsHTMLWarning
from bs4.element import Doctype, NavigableString, PreformattedString
from lxml import etree
from markdownify import ATX, BACKSLASH, MarkdownConverter

from splitters.base.markdown_syntax import fence_block, header_id_attribute

__all__ = ["HtmlPage", "html_to_markdown", "links"]

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
# Link text above this share of an element's text makes it a link list.
_LINK_LIST_SHARE = 0.6
_LINK_LIST_MIN_LINKS = 3
# A page-local table of contents is nothing but its links.
_LOCAL_TOC_SHARE = 0.9
# A link target longer than this carries data, not the address of a page.
_MAX_LINK_CHARS = 300
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".bmp")
_WORDS = re.compile(r"[^a-z0-9]+")
# Text of a permalink anchor: Sphinx and MkDocs use ¶, other generators #, § or 🔗, or an
# icon font's private-use glyph (any text without a letter or digit counts).
_PERMALINK_MARKS = {"", "¶", "#", "§", "🔗"}
# Never a heading's words: ¶, icon-font glyphs (private-use code points, such as the
# U+F0C1 link icon of MkDocs' theme) and invisible format characters (zero-width spaces).
_GLYPHS = re.compile("[¶\ue000-\uf8ff\U000f0000-\U0010ffff\u200b-\u200f\u2060\ufeff]")
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "dd", "details", "div", "dl", "dt",
        "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
        "h6", "header", "hr", "li", "main", "nav", "ol", "p", "section", "summary", "table",
        "tbody", "td", "tfoot", "th", "thead", "tr", "ul", "br",
    }
)  # fmt: skip
_LANGUAGE_CLASS = re.compile(r"^(?:highlight|language|lang|sourceCode)-(.+)$")
# Sphinx highlight languages that mean "no particular language".
_NO_LANGUAGE = {"none", "text", "default-text", "plain", "plaintext", "nohighlight"}
_LANGUAGE_ALIASES = {"python3": "python", "py": "python", "py3": "python", "default": "python"}
# Private-use characters: markdownify neither escapes nor collapses them.
_PLACEHOLDER = "\ue000{}\ue001"
_PLACEHOLDER_RE = re.compile("\ue000(\\d+)\ue001")
# A heading's anchor, until the Markdown is written (then a `{#id}` attribute).
_ANCHOR_PLACEHOLDER = "\ue002{}\ue003"
_ANCHOR_PLACEHOLDER_RE = re.compile("[ \t]*\ue002(\\d+)\ue003")
# Ids written as header attributes: those `{#id}` can hold (splitters.base.markdown_syntax).
_ANCHOR_ID = re.compile(r"[A-Za-z0-9_:.\-]+")
_BLANK_RUNS = re.compile(r"\n{3,}")
_LXML_PARSER = lxml.html.HTMLParser(huge_tree=True)
_EXTRACT_NEWLINES = re.compile(r"^(\n*)((?:.*[^\n])?)(\n*)$", flags=re.DOTALL)
# What may surround a placeholder on its line without being text: indentation, quote
# markers, table pipes, list bullets.
_NOT_TEXT = " \t>|-*+"


@dataclass(frozen=True, slots=True)
class HtmlPage:
    """The Markdown of a page's main content and its title (None when it has none)."""

    markdown: str
    title: str | None


@dataclass(frozen=True, slots=True)
class _Code:
    text: str
    language: str


@dataclass(slots=True)
class _Tags:
    """The tags of a subtree that the conversion steps work on, found in one walk."""

    anchors: list[Tag] = field(default_factory=list)
    images: list[Tag] = field(default_factory=list)
    headings: list[Tag] = field(default_factory=list)
    pres: list[Tag] = field(default_factory=list)
    cells: list[Tag] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)

    @classmethod
    def of(cls, root: Tag) -> _Tags:
        found = cls()
        for tag in root.descendants:
            if not isinstance(tag, Tag):
                if isinstance(tag, Comment):
                    found.comments.append(tag)
                continue
            name = tag.name
            if name == "a":
                found.anchors.append(tag)
            elif name == "img":
                found.images.append(tag)
            elif name in _HEADINGS or name == "dt":
                found.headings.append(tag)
            elif name == "pre":
                found.pres.append(tag)
            elif name in ("td", "th"):
                found.cells.append(tag)
        return found


# markdownify's stubs leave these out.
_MARKDOWNIFY: Any = markdownify
should_remove_whitespace_inside = _MARKDOWNIFY.should_remove_whitespace_inside
should_remove_whitespace_outside = _MARKDOWNIFY.should_remove_whitespace_outside


class _Converter(MarkdownConverter):
    """markdownify's converter without its per-element search for a `<pre>` ancestor.

    `process_tag` is markdownify 1.2's, except that "inside a `<pre>`" is read from the
    parent tags it already passes down instead of `node.find_parent("pre")`, which cost a
    quarter of the conversion time. (Our code blocks are placeholders by then anyway.)
    """

    def process_tag(self, node: Tag, parent_tags: set[str] | None = None) -> str:
        if parent_tags is None:
            parent_tags = set()
        remove_inside = should_remove_whitespace_inside(node)

        def can_ignore(el: Any) -> bool:
            if isinstance(el, Tag):
                return False
            if isinstance(el, Comment | Doctype):
                return True
            if isinstance(el, NavigableString):
                if str(el).strip() != "":
                    return False
                if remove_inside and (not el.previous_sibling or not el.next_sibling):
                    return True
                return bool(
                    should_remove_whitespace_outside(el.previous_sibling)
                    or should_remove_whitespace_outside(el.next_sibling)
                )
            return el is None

        children = [el for el in node.children if not can_ignore(el)]
        inside_pre = node.name == "pre" or "pre" in parent_tags
        child_tags = set(parent_tags)
        child_tags.add(node.name)
        if node.name in _HEADINGS or node.name in {"td", "th"}:
            child_tags.add("_inline")
        if node.name in {"pre", "code", "kbd", "samp"}:
            child_tags.add("_noformat")
        converter: Any = self
        strings = [converter.process_element(el, parent_tags=child_tags) for el in children]
        strings = [text for text in strings if text]
        if not inside_pre:
            collapsed = [""]  # so the first lookback works
            for string in strings:
                match = _EXTRACT_NEWLINES.match(string)
                assert match is not None
                leading, content, trailing = match.groups()
                if collapsed[-1] and leading:
                    previous = collapsed.pop()
                    leading = "\n" * min(2, max(len(previous), len(leading)))
                collapsed.extend([leading, content, trailing])
            strings = collapsed
        text = "".join(strings)
        convert = converter.get_conv_fn_cached(node.name)
        if convert is not None:
            text = convert(node, text, parent_tags=parent_tags)
        return str(text)


_CONVERTER = _Converter(
    heading_style=ATX,
    bullets="-",
    newline_style=BACKSLASH,
    escape_asterisks=False,
    escape_underscores=False,
    escape_misc=False,
    table_infer_header=True,
)


def _tags(root: Tag) -> Iterator[Tag]:
    for node in root.descendants:
        if isinstance(node, Tag):
            yield node


def _classes(tag: Tag) -> list[str]:
    value: Any = tag.get("class")
    if isinstance(value, str):
        return value.split()
    return list(value or [])


@functools.lru_cache(maxsize=4096)
def _class_tokens(value: str) -> frozenset[str]:
    return frozenset(value.lower().split())


@functools.lru_cache(maxsize=4096)
def _class_words(value: str) -> frozenset[str]:
    return frozenset(word for word in _WORDS.split(value.lower()) if word)


def _class_value(tag: Tag) -> str:
    value: Any = tag.attrs.get("class")
    return value if isinstance(value, str) else " ".join(value or ())


def _tokens(tag: Tag) -> frozenset[str]:
    """The class names and the id of `tag`, lower-cased."""
    tokens = _class_tokens(_class_value(tag))
    ident = tag.attrs.get("id")
    return tokens | {ident.lower()} if isinstance(ident, str) and ident else tokens


def _words(tag: Tag) -> frozenset[str]:
    """The words of `tag`'s class names (split at anything not a letter or digit) and its
    whole id. An id is not split: generators derive ids from the content ("c.PyIter_Next",
    "buffer-related-functions"), while class names come from the theme."""
    words = _class_words(_class_value(tag))
    ident = tag.attrs.get("id")
    return words | {ident.lower()} if isinstance(ident, str) and ident else words


def _attribute(tag: Tag, name: str) -> str:
    value = tag.attrs.get(name)
    return value.strip().lower() if isinstance(value, str) else ""


def _inside_pre(tag: Tag) -> bool:
    return any(parent.name == "pre" for parent in tag.parents)


def _in_heading(tag: Tag) -> bool:
    return any(parent.name in _HEADINGS for parent in tag.parents)


def _text_length(tag: Tag) -> int:
    """Characters of visible text in `tag`, whitespace left out."""
    return sum(
        len("".join(node.split()))
        for node in tag.descendants
        if isinstance(node, NavigableString) and not isinstance(node, PreformattedString)
    )


def _link_stats(tag: Tag) -> tuple[int, int, int]:
    """(text characters, of which in links, number of links) of `tag`."""
    total = _text_length(tag)
    links = [a for a in _tags(tag) if a.name == "a"] if tag.name != "a" else [tag]
    return total, sum(_text_length(a) for a in links), len(links)


def _own_text(tag: Tag) -> int:
    """Text characters of `tag` outside links: what a reader reads rather than clicks."""
    total, linked, _ = _link_stats(tag)
    return total - linked


def _is_link_list(tag: Tag) -> bool:
    total, linked, count = _link_stats(tag)
    return count >= _LINK_LIST_MIN_LINKS and linked >= _LINK_LIST_SHARE * total


def _gone(tag: Tag) -> bool:
    """Whether `tag` was decomposed. (bs4's `decomposed` property looks the attribute up
    with `getattr`, which on a live tag becomes a search of its whole subtree.)"""
    return bool(vars(tag).get("_decomposed", False))


def _decompose(doomed: list[Tag]) -> None:
    for tag in doomed:
        if not _gone(tag):
            tag.decompose()


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


def _language(pre: Tag) -> str:
    """The language of a code block from classes on the `<pre>`, its `<code>` or ancestors."""
    candidates: list[Tag] = [pre]
    code = next((tag for tag in _tags(pre) if tag.name == "code"), None)
    if code is not None:
        candidates.insert(0, code)
    for number, parent in enumerate(pre.parents):
        if number == 6:
            break
        candidates.append(parent)
    for tag in candidates:
        for cls in _classes(tag):
            match = _LANGUAGE_CLASS.match(cls)
            if match:
                name = match.group(1).lower()
                if name in _NO_LANGUAGE:
                    return ""
                return _LANGUAGE_ALIASES.get(name, name)
    return ""


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


def _restore_anchors(markdown: str, anchors: list[str]) -> str:
    """The placeholders of `_mark_anchors` as header attributes (`{#id}`); one that did
    not end up on a header line (a heading inside a table, say) is removed."""

    def attribute(match: re.Match[str]) -> str:
        line_start = markdown.rfind("\n", 0, match.start()) + 1
        if markdown[line_start:].lstrip(" ").startswith("#"):
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


def _enclosing(tag: Tag, name: str) -> Tag | None:
    for parent in tag.parents:
        if parent.name == name:
            return parent
    return None


def _extract_code(pres: list[Tag], soup: BeautifulSoup) -> list[_Code]:
    """Swap every outermost `<pre>` for a placeholder; return the code in order."""
    codes: list[_Code] = []
    for pre in pres:
        if _gone(pre) or _enclosing(pre, "pre") is not None:
            continue
        cell = _enclosing(pre, "td")
        if cell is not None and {"linenos", "linenodiv"} & set(_classes(cell)):
            pre.decompose()  # line numbers of a Pygments table, not code
            continue
        codes.append(_Code(text=pre.get_text(), language=_language(pre)))
        holder = soup.new_tag("div")
        holder.string = _PLACEHOLDER.format(len(codes) - 1)
        # A Pygments line-number table holds one block: replace the whole table.
        table = next(
            (
                parent
                for parent in pre.parents
                if parent.name == "table" and "highlighttable" in _classes(parent)
            ),
            None,
        )
        (table if table is not None else pre).replace_with(holder)
    return codes


def _escape_cell_pipes(cells: list[Tag]) -> None:
    """A `|` inside a table cell would end the cell in a GFM table: escape it."""
    for cell in cells:
        if _gone(cell):
            continue
        for text in list(cell.find_all(string=True)):
            if "|" in text and not isinstance(text, Comment):
                text.replace_with(text.replace("|", "\\|"))


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


def _restore_code(markdown: str, codes: list[_Code]) -> str:
    """Tidy the converted text and put each code block back as a fence at column 0.

    Trailing spaces and runs of blank lines are trimmed outside code only: a fenced block
    is appended as one item, so its content is never looked at.
    """
    out: list[str] = []

    def blank() -> None:
        if out and out[-1]:
            out.append("")

    for raw in markdown.split("\n"):
        line = raw.rstrip()
        if "\ue000" not in line:
            if line:
                out.append(line)
            else:
                blank()
            continue
        position = 0
        for match in _PLACEHOLDER_RE.finditer(line):
            before = line[position : match.start()]
            if before.strip(_NOT_TEXT):
                out.append(before.rstrip())
            blank()
            code = codes[int(match.group(1))]
            out.extend([fence_block(code.text, code.language), ""])
            position = match.end()
        after = line[position:]
        if after.strip(_NOT_TEXT):
            out.append(after.strip())
    return "\n".join(out).strip("\n")


def _flat_markdown(root: Tag) -> str:
    """Text of `root` without recursion, for documents too deeply nested for markdownify.

    Block elements become paragraph breaks and everything else is plain text with its
    whitespace collapsed; code placeholders pass through and are restored later.
    """
    pieces: list[str] = []
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, Comment):
            continue
        if isinstance(node, NavigableString):
            pieces.append(" ".join(str(node).split()) + (" " if str(node)[-1:].isspace() else ""))
            continue
        if not isinstance(node, Tag):
            continue
        if node.name in _BLOCK_TAGS:
            pieces.append("\n\n")
        if node.name in _HEADINGS:
            pieces.append("#" * int(node.name[1]) + " ")
        stack.extend(reversed(node.contents))
    lines = [line.strip() for line in "".join(pieces).split("\n")]
    return _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip("\n")


def _flatten_code(html: str) -> str:
    """`html` with the markup inside every `<pre>` replaced by its text.

    Syntax highlighting wraps every token of a code block in a `<span>`, and building
    BeautifulSoup's tree costs ~50 µs per element, while the code's text is all we
    keep of it. lxml reads and writes the page ~50 times faster than BeautifulSoup
    builds it, so the page is passed through it first. The first `<code>` inside a
    `<pre>` keeps its class (the language). A page lxml cannot read is left as it is.
    """
    try:
        root = lxml.html.document_fromstring(html, parser=_LXML_PARSER)
    except (etree.ParserError, ValueError):
        return html
    changed = False
    for pre in root.iter("pre"):
        if len(pre) == 0 or any(parent.tag == "pre" for parent in pre.iterancestors()):
            continue
        code = next(pre.iter("code"), None)
        language = code.get("class") if code is not None else None
        text = pre.text_content()
        for child in list(pre):
            pre.remove(child)
        if language:
            pre.text = None
            holder = etree.SubElement(pre, "code")
            holder.set("class", language)
            holder.text = text
        else:
            pre.text = text
        changed = True
    return lxml.html.tostring(root, encoding="unicode") if changed else html


def _parse(html: str) -> BeautifulSoup:
    html = _flatten_code(html)
    with warnings.catch_warnings():
        # An XHTML page is still read as HTML, as browsers do.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        # Class attributes stay strings: splitting them into lists for every tag costs
        # more than the few look-ups here.
        return BeautifulSoup(html, "lxml", multi_valued_attributes=None)


def html_to_markdown(
    html: str, *, base_url: str | None = None, main_content: bool = True
) -> HtmlPage:
    """Convert the main content of an HTML page to Markdown.

    `base_url` resolves relative links and image sources (a `file://` URL for local files).
    With `main_content` off, the whole body is converted (for HTML that is all content,
    such as a Word document's). Pages nested too deeply for a recursive converter are
    flattened to paragraphs and fenced code instead of failing.
    """
    soup = _parse(html)
    hinted = _drop_page_noise(soup)
    if main_content:
        main, semantic = _main_content(soup, hinted)
    else:
        body = soup.find("body")
        main, semantic = (body if isinstance(body, Tag) else soup), True
    title = _title(soup, main)
    if main_content:
        _drop_noise(main, semantic=semantic)
    if not semantic:
        _add_title_heading(main, soup)
    tags = _Tags.of(main)
    for comment in tags.comments:
        comment.extract()
    anchors = _mark_anchors(tags.headings)
    _clean_permalinks(tags.headings)
    _absolutize(tags, base_url)
    codes = _extract_code(tags.pres, soup)
    _escape_cell_pipes(tags.cells)
    try:
        converted = str(_CONVERTER.convert_soup(main))
    except RecursionError:
        converted = _flat_markdown(main)
    markdown = _restore_anchors(_restore_code(converted, codes), anchors)
    return HtmlPage(markdown=markdown + "\n" if markdown else "", title=title)


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
