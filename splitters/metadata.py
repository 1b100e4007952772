"""Metadata keys that the splitters write, as named constants.

Loaders provide ``source``, ``title``, ``content_type`` and ``content_hash``; the
splitters add the keys below and never remove a loader's key.
"""

from __future__ import annotations

__all__ = [
    "CHUNK_INDEX",
    "HEADERS",
    "HEADER_KEYS",
    "START_INDEX",
    "TOKENS",
    "header_key",
]

#: Ordered list of the enclosing header texts, outermost (H1 side) first.
HEADERS = "headers"

#: ``"Header 1"`` … ``"Header 6"``: the text of the enclosing header of that level.
#: A level with no enclosing header is absent, not empty.
HEADER_KEYS: tuple[str, ...] = tuple(f"Header {level}" for level in range(1, 7))

#: 0-based position of a chunk among the chunks of its source document.
CHUNK_INDEX = "chunk_index"

#: cl100k_base token count of the chunk's ``page_content``.
TOKENS = "tokens"

#: Character offset of the chunk in the text it was split from (``add_start_index``).
START_INDEX = "start_index"


def header_key(level: int) -> str:
    """The metadata key of a header of `level` (1–6), e.g. ``"Header 2"``."""
    return HEADER_KEYS[level - 1]
