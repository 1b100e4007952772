"""`MarkdownHeaderSplitter`: Markdown → sections at ATX headers outside code.

Only ATX headers (``# Title`` … ``###### Title``, indented at most three spaces,
optional closing ``#`` run) start a section; they are found by
`splitters.base.markdown_syntax.iter_atx_headers`. A ``# comment`` line inside a fenced
code block is code, and an unclosed fence runs to the end of the text, so nothing
after it is taken for a header. Setext headers (a line underlined with ``===`` or
``---``) are *not* recognised: our loaders emit ATX headers only, and an underline
is too easily confused with a thematic break or a table; such text stays in the
section as ordinary lines.

A section's content is an exact slice of the input (no whitespace inside it is
touched), with the blank lines around it trimmed. Sections whose content is empty
are not returned.
"""

from __future__ import annotations

import copy
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.documents import Document
from langchain_text_splitters import TextSplitter

from splitters.base.markdown_syntax import Header, iter_atx_headers
from splitters.base.metadata import ANCHOR, HEADERS, START_INDEX, header_key

__all__ = [
    "DEFAULT_UNWANTED_HEADERS",
    "DroppedSection",
    "MarkdownHeaderSplitter",
    "Section",
    "trim_blank_lines",
]

#: Sections under these headers (compared case-insensitively) are dropped by default.
DEFAULT_UNWANTED_HEADERS: tuple[str, ...] = ("Table of Contents", "This Page", "Navigation")

_LEADING_BLANK_LINES = re.compile(r"(?:[ \t\r]*\n)*")


@dataclass(frozen=True, slots=True)
class Section:
    """A run of Markdown under one header path.

    Attributes:
        content: the section's Markdown, an exact slice of the input.
        headers: the enclosing headers, outermost first.
        start: offset of `content` in the input.
    """

    content: str
    headers: tuple[Header, ...]
    start: int

    def header_metadata(self) -> dict[str, Any]:
        """``headers`` (list of texts, H1 side first), ``Header N`` keys, and ``anchor``
        (the innermost header's that has one) when a header has an anchor."""
        metadata: dict[str, Any] = {HEADERS: [h.text for h in self.headers]}
        for header in self.headers:
            metadata[header_key(header.level)] = header.text
            if header.anchor:
                metadata[ANCHOR] = header.anchor
        return metadata


@dataclass(frozen=True, slots=True)
class DroppedSection:
    """A section left out because it sits under an unwanted header."""

    headers: tuple[Header, ...]
    content: str
    start: int


def trim_blank_lines(text: str, start: int, end: int) -> tuple[int, int]:
    """Narrow ``text[start:end]`` to exclude leading and trailing blank lines.

    A blank line holds only spaces, tabs or a carriage return; other whitespace
    (NBSP, form feed, …) counts as content. Trailing spaces of the last non-blank
    line are kept; a final carriage return is not.
    """
    match = _LEADING_BLANK_LINES.match(text, start, end)
    if match is not None:
        start = match.end()
    while end > start:
        newline = text.rfind("\n", start, end)
        line_start = newline + 1 if newline >= 0 else start
        if text[line_start:end].strip(" \t\r"):
            break
        end = newline if newline >= 0 else start
    if end > start and text[end - 1] == "\r":
        end -= 1
    return start, end


class MarkdownHeaderSplitter(TextSplitter):
    """Split Markdown into sections at ATX headers that are outside fenced code.

    Like every other splitter here it follows the `TextSplitter` contract:
    `split_text` returns the sections' contents as strings, while
    `create_documents`/`split_documents` return `Document`s whose metadata is the
    input's (deep-copied per section) plus ``headers`` (ordered list, H1 side
    first) and ``Header 1`` … ``Header 6`` for the levels present.

    Sections under an unwanted header (its own header or any enclosing one matches,
    case-insensitively) are dropped; the drops of the latest call are listed in
    `dropped`, and each is also passed to `on_dropped` if given.
    """

    def __init__(
        self,
        *,
        unwanted_headers: Sequence[str] = DEFAULT_UNWANTED_HEADERS,
        strip_headers: bool = True,
        add_start_index: bool = False,
        on_dropped: Callable[[DroppedSection], None] | None = None,
    ) -> None:
        """Create a header splitter.

        Args:
            unwanted_headers: header texts whose sections (and subsections) are dropped.
            strip_headers: when False, a section's content starts with its header line.
            add_start_index: add ``start_index`` (offset in the input) to metadata.
            on_dropped: called with every dropped section, as it is found.
        """
        super().__init__(
            chunk_size=sys.maxsize,
            chunk_overlap=0,
            add_start_index=add_start_index,
            strip_whitespace=False,
        )
        self._unwanted = frozenset(h.strip().casefold() for h in unwanted_headers)
        self._strip_headers = strip_headers
        self._on_dropped = on_dropped
        self.dropped: list[DroppedSection] = []

    def split_sections(self, text: str) -> list[Section]:
        """Split `text` into its non-empty, wanted sections, in order."""
        self.dropped = []
        sections: list[Section] = []
        stack: list[Header] = []
        unwanted_depth = 0  # how many headers on the stack are unwanted
        section_start = 0
        for offset, header in iter_atx_headers(text):
            self._emit(text, section_start, offset, tuple(stack), unwanted_depth, out=sections)
            while stack and stack[-1].level >= header.level:
                if stack.pop().text.casefold() in self._unwanted:
                    unwanted_depth -= 1
            stack.append(header)
            if header.text.casefold() in self._unwanted:
                unwanted_depth += 1
            if self._strip_headers:
                newline = text.find("\n", offset)
                section_start = len(text) + 1 if newline < 0 else newline + 1
            else:
                section_start = offset
        self._emit(text, section_start, len(text), tuple(stack), unwanted_depth, out=sections)
        return sections

    def _emit(
        self,
        text: str,
        start: int,
        end: int,
        headers: tuple[Header, ...],
        unwanted_depth: int,
        *,
        out: list[Section],
    ) -> None:
        start, end = trim_blank_lines(text, start, min(end, len(text)))
        if start >= end:
            return
        if unwanted_depth:
            dropped = DroppedSection(headers=headers, content=text[start:end], start=start)
            self.dropped.append(dropped)
            if self._on_dropped is not None:
                self._on_dropped(dropped)
            return
        out.append(Section(content=text[start:end], headers=headers, start=start))

    def split_text(self, text: str) -> list[str]:
        """Return the contents of the wanted, non-empty sections of `text`."""
        return [section.content for section in self.split_sections(text)]

    def create_documents(
        self, texts: list[str], metadatas: list[dict[Any, Any]] | None = None
    ) -> list[Document]:
        """One `Document` per section, with the input's metadata plus header metadata."""
        metadatas_ = metadatas or [{}] * len(texts)
        documents: list[Document] = []
        for text, metadata in zip(texts, metadatas_, strict=True):
            documents.extend(self._section_documents(text, metadata))
        return documents

    def _section_documents(self, text: str, metadata: dict[Any, Any]) -> Iterable[Document]:
        for section in self.split_sections(text):
            section_metadata = copy.deepcopy(metadata)
            section_metadata.update(section.header_metadata())
            if self._add_start_index:
                section_metadata[START_INDEX] = section.start
            yield Document(page_content=section.content, metadata=section_metadata)
