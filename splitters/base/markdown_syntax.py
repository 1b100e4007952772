"""The Markdown syntax of Synopsis: fenced code blocks and ATX headers, read and written.

Every package that looks at Markdown structure uses this module, so that a fence or a
header means the same thing everywhere: the loaders (writing fences around code,
finding a title), the splitters (sections and blocks) and the service (telling the
prose of a chunk from its code, with `iter_segments`).

Fenced code follows CommonMark 0.31 §4.5, restricted to what a line scanner can see
(fences inside block quotes or deeper list indentation are not recognised):

* an opening fence is a run of at least three backticks or three tildes, indented
  by at most three spaces, optionally followed by an info string; a backtick
  fence's info string may not contain a backtick (so "```x```" is inline code);
* a fence is closed only by a line of the *same* character, at least as long as
  the opener, indented by at most three spaces, followed only by spaces or tabs
  (no info string);
* a fence that is never closed runs to the end of the document.

ATX headers follow CommonMark §4.2: one to six ``#`` indented by at most three spaces,
then a space, a tab or the end of the line; an optional closing ``#`` run (preceded by
a space or a tab, or alone) is not part of the text. Setext headers are not recognised.

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
    "Header",
    "Segment",
    "closing_fence",
    "fence_block",
    "fences_balanced",
    "header_id_attribute",
    "iter_atx_headers",
    "iter_code_blocks",
    "iter_segments",
    "opening_fence",
    "parse_atx_header",
]

_OPENER = re.compile(r"( {0,3})(`{3,}|~{3,})([^\r]*)\r?\Z")
_CLOSER = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*\r?\Z")
_BACKTICK_RUNS = re.compile(r"`+")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+([^\r]*?))?[ \t]*\r?\Z")
_CLOSING_HASHES = re.compile(r"(?:\A|[ \t]+)#+\Z")
# A trailing `{#id}` (or `{#id .class key=value}`) attribute of a header's text.
_HEADER_ID = re.compile(r"(?:\A|[ \t]+)\{#([A-Za-z0-9_:.\-]+)(?:[ \t][^{}]*)?\}\Z")


# -- fenced code ------------------------------------------------------------------------


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


def fence_block(code: str, language: str = "") -> str:
    """Wrap `code` in a backtick fence longer than any backtick run inside it.

    No line of `code` can close such a fence, so the content between the fence lines
    is `code` exactly, plus a final newline when `code` does not end with one.
    """
    longest = max((len(run) for run in _BACKTICK_RUNS.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    body = code if code.endswith("\n") else code + "\n"
    return f"{fence}{language}\n{body}{fence}"


# -- prose and code ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of a Markdown text: prose, or one fenced code block with its fence lines.

    Attributes:
        text: the segment, an exact slice of the text.
        start: offset of `text` in the text.
        fence: the opening fence of a code segment; None for prose.
    """

    text: str
    start: int
    fence: Fence | None = None

    @property
    def is_code(self) -> bool:
        """Whether this segment is a fenced code block."""
        return self.fence is not None


def iter_segments(text: str) -> Iterator[Segment]:
    """Yield `text` cut into prose and fenced-code segments, in order.

    The segments' texts joined are `text` exactly, and none is empty. A code segment
    runs from the first character of its opening fence line to the last character of
    its closing fence line (the newlines around it belong to the prose), or, for a
    fence that is never closed, to the end of the text without its final newline.
    Fences follow the rules above: "```" inside a "````" block is code, not a closer.
    """
    position = 0
    for block in iter_code_blocks(text):
        if block.start > position:
            yield Segment(text[position : block.start], position)
        yield Segment(text[block.start : block.end], block.start, block.fence)
        position = block.end
    if position < len(text):
        yield Segment(text[position:], position)


# -- ATX headers ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Header:
    """One ATX header: its level (1–6), its text (closing ``#`` run and attributes
    removed) and its anchor: the id of a trailing ``{#id}`` attribute (Pandoc's and
    kramdown's header identifiers; the HTML loader writes one for a heading with an id),
    empty when it has none."""

    level: int
    text: str
    anchor: str = ""


def parse_atx_header(line: str) -> Header | None:
    """Parse `line` (without its newline) as an ATX header, or return None."""
    match = _ATX.match(line)
    if match is None:
        return None
    hashes, raw = match.groups()
    text = _CLOSING_HASHES.sub("", raw or "").strip(" \t")
    anchor = ""
    attribute = _HEADER_ID.search(text)
    if attribute is not None:
        anchor = attribute.group(1)
        text = _CLOSING_HASHES.sub("", text[: attribute.start()]).strip(" \t")
    return Header(level=len(hashes), text=text, anchor=anchor)


def header_id_attribute(anchor: str) -> str:
    """The attribute that gives a header line `anchor` (`parse_atx_header` reads it)."""
    return f"{{#{anchor}}}"


def iter_atx_headers(text: str) -> Iterator[tuple[int, Header]]:
    """Yield the offset of the line and the header of every ATX header outside fenced code.

    A ``# comment`` inside a code block is code, and nothing after a fence that is
    never closed is a header.
    """
    offset = 0
    fence: Fence | None = None
    for line in text.split("\n"):
        if fence is not None:
            if fence.is_closed_by(line):
                fence = None
        elif "#" in line[:4] and (header := parse_atx_header(line)) is not None:
            yield offset, header
        else:
            fence = opening_fence(line)
        offset += len(line) + 1
