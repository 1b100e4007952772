"""HTML → Markdown: the main content of a documentation page, with code blocks byte-exact.

Main content is the first of: `[role=main]` (Sphinx, Read the Docs, Furo), the single
`<article>` (MkDocs/Material), `<main>`, and finally `<body>` without navigation,
headers, footers, asides and sidebars.

Code blocks never pass through markdownify: each `<pre>` is swapped for a placeholder,
the rest is converted, and the placeholder is replaced by a fence around the `<pre>`'s
exact text. The fence is longer than any backtick run in the code and always starts
at column 0, even when the `<pre>` sat in a list item or a table cell, so a fenced
block's content is always the `<pre>` text byte for byte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Comment, Tag
from bs4.element import NavigableString
from markdownify import ATX, BACKSLASH, MarkdownConverter

from splitters.markdown_syntax import fence_block

__all__ = ["MAX_MARKUP_TAGS", "HtmlPage", "html_to_markdown", "links"]

#: Pages with more tags than this (counted as `<` characters) are refused rather than
#: converted: conversion costs ~50 µs per element, and no documentation page comes near
#: (the largest page of the Python docs has about 35,000).
MAX_MARKUP_TAGS = 500_000

# Elements that never carry content we want, by tag name, class, role and id. Matched by
# hand rather than with CSS selectors: soupsieve costs seconds on a large Sphinx page.
_DROP_TAGS = frozenset(
    {
        "script", "style", "noscript", "template", "iframe", "object", "embed", "button",
        "input", "select", "textarea", "nav", "footer",
    }
)  # fmt: skip
_DROP_CLASSES = frozenset(
    {"sphinxsidebar", "related", "headerlink", "md-content__button", "md-source-file"}
)
_DROP_ROLES = frozenset({"navigation", "search"})
# Additionally dropped when we fall back to the whole `<body>`.
_BODY_DROP_TAGS = frozenset({"header", "aside", "form"})
_BODY_DROP_CLASSES = frozenset({"sidebar", "toc", "breadcrumbs", "breadcrumb"})
_BODY_DROP_ROLES = frozenset({"banner", "contentinfo", "complementary"})
_BODY_DROP_IDS = frozenset({"sidebar", "toc"})
# Text of a permalink anchor: Sphinx and MkDocs use ¶, other generators #, § or 🔗.
_PERMALINK_MARKS = {"", "¶", "#", "§", "🔗"}
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
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
_BLANK_RUNS = re.compile(r"\n{3,}")
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


_CONVERTER = MarkdownConverter(
    heading_style=ATX,
    bullets="-",
    newline_style=BACKSLASH,
    escape_asterisks=False,
    escape_underscores=False,
    escape_misc=False,
    table_infer_header=True,
)


def _classes(tag: Tag) -> list[str]:
    value: Any = tag.get("class")
    if isinstance(value, str):
        return value.split()
    return list(value or [])


def _language(pre: Tag) -> str:
    """The language of a code block from classes on the `<pre>`, its `<code>` or ancestors."""
    candidates: list[Tag] = [pre]
    code = pre.find("code")
    if isinstance(code, Tag):
        candidates.insert(0, code)
    candidates.extend(list(pre.parents)[:6])
    for tag in candidates:
        for cls in _classes(tag):
            match = _LANGUAGE_CLASS.match(cls)
            if match:
                name = match.group(1).lower()
                if name in _NO_LANGUAGE:
                    return ""
                return _LANGUAGE_ALIASES.get(name, name)
    return ""


def _main_content(soup: BeautifulSoup) -> tuple[Tag, bool]:
    """The element holding the page's main content, and whether it is the body fallback."""
    for candidate in (soup.select_one("[role=main]"),):
        if candidate is not None:
            return candidate, False
    main = soup.find("main")
    scope: Tag = main if isinstance(main, Tag) else soup
    articles = scope.find_all("article")
    if len(articles) == 1:
        return articles[0], False
    if isinstance(main, Tag):
        return main, False
    body = soup.find("body")
    return (body if isinstance(body, Tag) else soup), True


def _drop_noise(root: Tag, *, body: bool) -> None:
    tags = _DROP_TAGS | _BODY_DROP_TAGS if body else _DROP_TAGS
    classes = _DROP_CLASSES | _BODY_DROP_CLASSES if body else _DROP_CLASSES
    roles = _DROP_ROLES | _BODY_DROP_ROLES if body else _DROP_ROLES
    ids = _BODY_DROP_IDS if body else frozenset()
    doomed: list[Tag] = []
    for tag in root.find_all(True):
        if (
            tag.name in tags
            or tag.get("role") in roles
            or tag.get("id") in ids
            or not classes.isdisjoint(_classes(tag))
        ):
            doomed.append(tag)
    for tag in doomed:
        if not tag.decomposed:
            tag.decompose()


def _clean_permalinks(root: Tag) -> None:
    for heading in root.find_all([*_HEADINGS, "dt"]):
        for anchor in heading.find_all("a"):
            href = str(anchor.get("href") or "")
            if href.startswith("#") and anchor.get_text().strip() in _PERMALINK_MARKS:
                anchor.decompose()
        if heading.name in _HEADINGS:
            # Links in a header would end up in every chunk's header path: keep the text.
            for anchor in heading.find_all("a"):
                anchor.unwrap()
        for text in heading.find_all(string=True):
            if "¶" in text:
                text.replace_with(text.replace("¶", ""))


def _absolutize(root: Tag, base_url: str | None) -> None:
    if not base_url:
        return
    for attribute, tags in (("href", root.find_all("a", href=True)), ("src", root.find_all("img"))):
        for tag in tags:
            value = tag.get(attribute)
            if isinstance(value, str) and value and not value.startswith(("javascript:", "data:")):
                tag[attribute] = urljoin(base_url, value.strip())


def _extract_code(root: Tag, soup: BeautifulSoup) -> list[_Code]:
    """Swap every outermost `<pre>` for a placeholder; return the code in order."""
    codes: list[_Code] = []
    for pre in root.find_all("pre"):
        if pre.decomposed or pre.find_parent("pre") is not None:
            continue
        cell = pre.find_parent("td")
        if cell is not None and {"linenos", "linenodiv"} & set(_classes(cell)):
            pre.decompose()  # line numbers of a Pygments table, not code
            continue
        codes.append(_Code(text=pre.get_text(), language=_language(pre)))
        holder = soup.new_tag("div")
        holder.string = _PLACEHOLDER.format(len(codes) - 1)
        # A Pygments line-number table holds one block: replace the whole table.
        table = pre.find_parent("table", class_="highlighttable")
        (table if isinstance(table, Tag) else pre).replace_with(holder)
    return codes


def _escape_cell_pipes(root: Tag) -> None:
    """A `|` inside a table cell would end the cell in a GFM table: escape it."""
    for cell in root.find_all(["td", "th"]):
        for text in cell.find_all(string=True):
            if "|" in text and not isinstance(text, Comment):
                text.replace_with(text.replace("|", "\\|"))


def _heading_text(tag: Tag) -> str:
    return " ".join(tag.get_text().replace("¶", "").split())


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


def html_to_markdown(html: str, *, base_url: str | None = None) -> HtmlPage:
    """Convert the main content of an HTML page to Markdown.

    `base_url` resolves relative links and image sources (a `file://` URL for local files).
    Pages nested too deeply for a recursive converter are flattened to paragraphs and
    fenced code instead of failing.
    """
    soup = BeautifulSoup(html, "lxml")
    main, is_body = _main_content(soup)
    title = _title(soup, main)
    _drop_noise(main, body=is_body)
    for comment in main.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    _clean_permalinks(main)
    _absolutize(main, base_url)
    codes = _extract_code(main, soup)
    _escape_cell_pipes(main)
    try:
        converted = str(_CONVERTER.convert_soup(main))
    except RecursionError:
        converted = _flat_markdown(main)
    markdown = _restore_code(converted, codes)
    return HtmlPage(markdown=markdown + "\n" if markdown else "", title=title)


def links(html: str, *, base_url: str) -> list[str]:
    """Absolute targets of the `<a href>` links in `html`, fragments removed, in order."""
    soup = BeautifulSoup(html, "lxml")
    found: list[str] = []
    for anchor in soup.find_all("a", href=True):
        href = anchor.get("href")
        if not isinstance(href, str) or href.startswith(("#", "javascript:", "mailto:")):
            continue
        found.append(urljoin(base_url, href.strip()).split("#", 1)[0])
    return found
