"""Markdown → header-aware, token-bounded chunks that keep code blocks intact.

* `MarkdownHeaderSplitter` (``splitters.headers``): sections at ATX headers outside code.
* `MarkdownTokenSplitter` (``splitters.tokens``): balanced chunks of at most N tokens.
* `chunk_documents` (``splitters.pipeline``): both, over a stream of loader documents.
* ``splitters.base.markdown_syntax``: the Markdown syntax (fences, ATX headers) every package
  of Synopsis reads and writes.

The names below are imported from their modules on first use, so that importing a
light module such as ``splitters.base.errors`` (which `service.errors` re-exports, and the
CLI imports at start-up) does not load LangChain and the tokenizer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from splitters.base.markdown_syntax import Header
    from splitters.base.metadata import CHUNK_INDEX, HEADER_KEYS, HEADERS, START_INDEX, TOKENS
    from splitters.headers import (
        DEFAULT_UNWANTED_HEADERS,
        DroppedSection,
        MarkdownHeaderSplitter,
        Section,
    )
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

# Where each public name is defined.
_MODULES = {
    "CHUNK_INDEX": "splitters.base.metadata",
    "DEFAULT_UNWANTED_HEADERS": "splitters.headers",
    "HEADERS": "splitters.base.metadata",
    "HEADER_KEYS": "splitters.base.metadata",
    "START_INDEX": "splitters.base.metadata",
    "TOKENS": "splitters.base.metadata",
    "Chunk": "splitters.tokens",
    "DroppedSection": "splitters.headers",
    "Header": "splitters.base.markdown_syntax",
    "MarkdownHeaderSplitter": "splitters.headers",
    "MarkdownTokenSplitter": "splitters.tokens",
    "Section": "splitters.headers",
    "chunk_documents": "splitters.pipeline",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
