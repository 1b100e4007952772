"""Markdown code fences: writing one around exact text, and finding them in a document."""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["fence_block", "first_h1", "iter_fenced"]

_BACKTICK_RUNS = re.compile(r"`+")
# CommonMark: up to 3 spaces of indentation, then 3+ backticks or tildes.
_OPENING = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_ATX_H1 = re.compile(r"^ {0,3}#(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")


def fence_block(code: str, language: str = "") -> str:
    """Wrap `code` in a backtick fence longer than any backtick run inside it.

    The content between the fence lines is `code` exactly, plus a final newline when
    `code` does not end with one.
    """
    longest = max((len(run) for run in _BACKTICK_RUNS.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    body = code if code.endswith("\n") else code + "\n"
    return f"{fence}{language}\n{body}{fence}"


def iter_fenced(markdown: str) -> Iterator[tuple[bool, str]]:
    """Split `markdown` into consecutive (is_code, text) pieces that join back to it.

    A code piece runs from its opening fence line to its closing fence line inclusive;
    a fence is closed only by the same character repeated at least as often with
    nothing after it, and an unclosed fence runs to the end of the document.
    """
    lines = markdown.splitlines(keepends=True)
    prose: list[str] = []
    index = 0
    while index < len(lines):
        match = _OPENING.match(lines[index].rstrip("\r\n"))
        if match is None or (match.group(2)[0] == "`" and "`" in match.group(3)):
            prose.append(lines[index])
            index += 1
            continue
        if prose:
            yield False, "".join(prose)
            prose = []
        char, size = match.group(2)[0], len(match.group(2))
        closing = re.compile(rf"^ {{0,3}}{re.escape(char)}{{{size},}}[ \t]*$")
        end = index + 1
        while end < len(lines) and not closing.match(lines[end].rstrip("\r\n")):
            end += 1
        yield True, "".join(lines[index : end + 1])
        index = end + 1
    if prose:
        yield False, "".join(prose)


def first_h1(markdown: str) -> str | None:
    """Text of the first ATX level-1 header outside code, or None."""
    for is_code, piece in iter_fenced(markdown):
        if is_code:
            continue
        for line in piece.splitlines():
            match = _ATX_H1.match(line)
            if match and match.group(1):
                return match.group(1).strip()
    return None
