"""Markdown → blocks: the units between which the token splitter may cut.

A block is a paragraph-like run of non-blank lines (a paragraph, a list, a table,
an indented code block, …), a fenced code block (opener to closer, blank lines
included), or an ATX header line. Blank lines separate text blocks; a fence opener
or a header line also ends the text block before it, as in CommonMark.

Every block records its span in the source text, so a run of consecutive blocks can
be re-joined with the source's own separators and the result is an exact slice.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from splitters.base.markdown_syntax import Fence, opening_fence, parse_atx_header

__all__ = ["Block", "BlockKind", "parse_blocks"]


class BlockKind(enum.Enum):
    """What a block holds."""

    TEXT = "text"
    CODE = "code"
    HEADER = "header"


@dataclass(frozen=True, slots=True)
class Block:
    """A block of Markdown.

    Attributes:
        kind: text, fenced code or header line.
        start: offset of the block's first character in the source.
        end: offset just past its last character (no trailing newline).
        fence: the opening fence, for code blocks.
        closed: False for a code block whose fence is never closed.
    """

    kind: BlockKind
    start: int
    end: int
    fence: Fence | None = None
    closed: bool = True


def _is_blank(line: str) -> bool:
    return not line.strip(" \t\r")


def parse_blocks(text: str, start: int = 0, end: int | None = None) -> list[Block]:
    """Split ``text[start:end]`` into blocks, in order.

    The range should not begin or end with blank lines (see
    `splitters.headers.trim_blank_lines`); an unclosed fence runs to `end`.
    """
    stop = len(text) if end is None else end
    blocks: list[Block] = []
    offset = start
    text_start = -1  # start of the open text block, or -1
    text_end = 0
    fence: Fence | None = None
    code_start = 0
    for line in text[start:stop].split("\n"):
        line_end = offset + len(line)
        if fence is not None:
            if fence.is_closed_by(line):
                blocks.append(Block(BlockKind.CODE, code_start, line_end, fence))
                fence = None
        elif _is_blank(line):
            if text_start >= 0:
                blocks.append(Block(BlockKind.TEXT, text_start, text_end))
                text_start = -1
        elif (opener := opening_fence(line)) is not None:
            if text_start >= 0:
                blocks.append(Block(BlockKind.TEXT, text_start, text_end))
                text_start = -1
            fence = opener
            code_start = offset
        elif "#" in line[:4] and parse_atx_header(line) is not None:
            if text_start >= 0:
                blocks.append(Block(BlockKind.TEXT, text_start, text_end))
                text_start = -1
            blocks.append(Block(BlockKind.HEADER, offset, line_end))
        else:
            if text_start < 0:
                text_start = offset
            text_end = line_end
        offset = line_end + 1
    if fence is not None:
        blocks.append(Block(BlockKind.CODE, code_start, stop, fence, closed=False))
    elif text_start >= 0:
        blocks.append(Block(BlockKind.TEXT, text_start, text_end))
    return blocks
