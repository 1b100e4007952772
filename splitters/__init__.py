"""Markdown → header-aware, token-bounded chunks that keep code blocks intact.

* `MarkdownHeaderSplitter` (``splitters.headers``): sections at ATX headers outside code.
* `MarkdownTokenSplitter` (``splitters.tokens``): balanced chunks of at most N tokens.
* `chunk_documents` (``splitters.pipeline``): both, over a stream of loader documents.
"""

from __future__ import annotations

from splitters.headers import (
    DEFAULT_UNWANTED_HEADERS,
    DroppedSection,
    Header,
    MarkdownHeaderSplitter,
    Section,
)
from splitters.metadata import CHUNK_INDEX, HEADER_KEYS, HEADERS, START_INDEX, TOKENS
from splitters.pipeline import chunk_documents
from splitters.tokens import Chunk, MarkdownTokenSplitter

__all__ = [
    "CHUNK_INDEX",
    "DEFAULT_UNWANTED_HEADERS",
    "HEADERS",
    "HEADER_KEYS",
    "START_INDEX",
    "TOKENS",
    "Chunk",
    "DroppedSection",
    "Header",
    "MarkdownHeaderSplitter",
    "MarkdownTokenSplitter",
    "Section",
    "chunk_documents",
]
