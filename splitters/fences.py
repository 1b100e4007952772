"""CommonMark fenced code blocks: recognising openers and closers, finding blocks.

The rules follow CommonMark 0.31 §4.5, restricted to what a line scanner can see
(fences inside block quotes or deeper list indentation are not recognised):

* an opening fence is a run of at least three backticks or three tildes, indented
  by at most three spaces, optionally followed by an info string; a backtick
  fence's info string may not contain a backtick (so "```x```" is inline code);
* a fence is closed only by a line of the *same* character, at least as long as
  the opener, indented by at most three spaces, followed only by spaces or tabs
  (no info string);
* a fence that is never closed runs to the end of the document.

Lines are separated by ``"\\n"`` only; a ``"\\r"`` before it is tolerated in the
patterns but kept in the text, so every offset refers to the caller's string.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "CodeBlock",
    "Fence",
    "closing_fence",
    "fences_balanced",
    "iter_code_blocks",
    "opening_fence",
]

_OPENER = re.compile(r"( {0,3})(`{3,}|~{3,})([^\r]*)\r?\Z")
_CLOSER = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*\r?\Z")


@dataclass(frozen=True, slots=True)
class Fence:
    """An opening code fence.

    Attributes:
        char: ``"`"`` or ``"~"``.
        length: number of fence characters (at least 3).
        indent: leading spaces before the fence (0–3).
        info: the info string, stripped (e.g. ``"python"``); empty if none.
    """

    char: str
    length: int
    indent: int
    info: str

    @property
    def marker(self) -> str:
        """The fence characters alone, e.g. ``"````"``; also a valid closing line."""
        return self.char * self.length

    def is_closed_by(self, line: str) -> bool:
        """Whether `line` (without its newline) closes this fence."""
        match = _CLOSER.match(line)
        if match is None:
            return False
        run = match.group(1)
        return run[0] == self.char and len(run) >= self.length


def opening_fence(line: str) -> Fence | None:
    """Parse `line` (without its newline) as an opening fence, or return None."""
    if "`" not in line and "~" not in line:
        return None
    match = _OPENER.match(line)
    if match is None:
        return None
    indent, run, info = match.groups()
    if run[0] == "`" and "`" in info:
        return None
    return Fence(char=run[0], length=len(run), indent=len(indent), info=info.strip())


def closing_fence(fence: Fence, line: str) -> bool:
    """Whether `line` closes `fence` (same character, at least as long, no info string)."""
    return fence.is_closed_by(line)


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """A fenced code block found in a text.

    Attributes:
        fence: the opening fence.
        start: offset of the first character of the opening line.
        end: offset just past the last character of the block (past the closing
            fence line's content, excluding its newline; for an unclosed block, the
            end of the text without a trailing newline).
        closed: False when the block runs to the end of the text.
    """

    fence: Fence
    start: int
    end: int
    closed: bool


def iter_code_blocks(text: str) -> Iterator[CodeBlock]:
    """Yield every fenced code block of `text`, in order."""
    offset = 0
    fence: Fence | None = None
    start = 0
    last_end = 0
    for line in text.split("\n"):
        line_end = offset + len(line)
        if fence is None:
            fence = opening_fence(line)
            if fence is not None:
                start = offset
        elif fence.is_closed_by(line):
            yield CodeBlock(fence=fence, start=start, end=line_end, closed=True)
            fence = None
        last_end = line_end
        offset = line_end + 1
    if fence is not None:
        end = last_end - 1 if text.endswith("\n") and last_end > start else last_end
        yield CodeBlock(fence=fence, start=start, end=end, closed=False)


def fences_balanced(text: str) -> bool:
    """True when every fence opened in `text` is closed before its end."""
    return all(block.closed for block in iter_code_blocks(text))
