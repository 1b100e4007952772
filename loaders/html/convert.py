"""markdownify's converter, and the flat text for pages nested too deeply for it."""

from __future__ import annotations

import re
from typing import Any

import markdownify
from bs4 import Comment, Tag
from bs4.element import Doctype, NavigableString
from markdownify import ATX, BACKSLASH, MarkdownConverter

from loaders.html.tree import _HEADINGS, _gone

_BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "dd", "details", "div", "dl", "dt",
        "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
        "h6", "header", "hr", "li", "main", "nav", "ol", "p", "section", "summary", "table",
        "tbody", "td", "tfoot", "th", "thead", "tr", "ul", "br",
    }
)  # fmt: skip
_BLANK_RUNS = re.compile(r"\n{3,}")
_EXTRACT_NEWLINES = re.compile(r"^(\n*)((?:.*[^\n])?)(\n*)$", flags=re.DOTALL)
# markdownify's stubs leave these out.
_MARKDOWNIFY: Any = markdownify
should_remove_whitespace_inside = _MARKDOWNIFY.should_remove_whitespace_inside
should_remove_whitespace_outside = _MARKDOWNIFY.should_remove_whitespace_outside


class _Converter(MarkdownConverter):
    """markdownify's converter without its per-element search for a `<pre>` ancestor.

    `process_tag` is markdownify 1.2's, except that "inside a `<pre>`" is read from the
    parent tags it already passes down instead of `node.find_parent("pre")`, which cost a
    quarter of the conversion time. (Our code blocks are placeholders by then anyway.)
    tests/loaders/test_html_convert.py checks that it converts every fixture page as
    markdownify's own converter does, so a markdownify that changes the method is noticed.
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


def _escape_cell_pipes(cells: list[Tag]) -> None:
    """A `|` inside a table cell would end the cell in a GFM table: escape it."""
    for cell in cells:
        if _gone(cell):
            continue
        for text in list(cell.find_all(string=True)):
            if "|" in text and not isinstance(text, Comment):
                text.replace_with(text.replace("|", "\\|"))


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
