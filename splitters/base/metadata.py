"""Metadata keys that the splitters write, as named constants, and the page markers.

Loaders provide ``source``, ``title``, ``content_type`` and ``content_hash``; the
splitters add the keys below and never remove a loader's key.

A PDF's pages travel through its Markdown as marker lines (`page_marker`), and its
document carries ``page_start``/``page_end``; `splitters.chunk_documents` reads the
markers and gives every chunk its own ``page_start``/``page_end``. The syntax and the
keys are defined here, in the base both libraries share: the PDF loader writes the
markers and page keys, the splitters read them.
"""

from __future__ import annotations

import re

__all__ = [
    "ANCHOR",
    "CHUNK_INDEX",
    "HEADERS",
    "HEADER_KEYS",
    "PAGE_END",
    "PAGE_MARKER",
    "PAGE_START",
    "START_INDEX",
    "TOKENS",
    "header_key",
    "page_marker",
]

#: Ordered list of the enclosing header texts, outermost (H1 side) first.
HEADERS = "headers"

#: ``"Header 1"`` … ``"Header 6"``: the text of the enclosing header of that level.
#: A level with no enclosing header is absent, not empty.
HEADER_KEYS: tuple[str, ...] = tuple(f"Header {level}" for level in range(1, 7))

#: The id of the nearest enclosing header that has one (a ``{#id}`` attribute, which the
#: HTML loader writes for a heading with an id): where a link to the section points.
#: Absent when no enclosing header has one.
ANCHOR = "anchor"

#: 0-based position of a chunk among the chunks of its source document.
CHUNK_INDEX = "chunk_index"

#: cl100k_base token count of the chunk's ``page_content``.
TOKENS = "tokens"

#: Character offset of the chunk in the text it was split from (``add_start_index``).
START_INDEX = "start_index"

#: First and last 1-based page of a PDF document, and of each of its chunks.
PAGE_START = "page_start"
PAGE_END = "page_end"
#: A PDF's Markdown marks where each page starts with a line `<!-- page N -->` (an HTML
#: comment: invisible when rendered). `splitters.chunk_documents` removes the markers and
#: gives every chunk the pages it spans.
PAGE_MARKER = re.compile(r"^<!-- page (\d+) -->$")


def header_key(level: int) -> str:
    """The metadata key of a header of `level` (1–6), e.g. ``"Header 2"``."""
    return HEADER_KEYS[level - 1]


def page_marker(page: int) -> str:
    """The line that marks the start of 1-based `page` in a PDF's Markdown."""
    return f"<!-- page {page} -->"
