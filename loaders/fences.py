"""Markdown code fences for loaders: writing one around exact text, and the first H1
outside code (fences are found by `splitters.fences`)."""

from __future__ import annotations

import re

from splitters.fences import iter_code_blocks

__all__ = ["fence_block", "first_h1"]

_BACKTICK_RUNS = re.compile(r"`+")
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


def first_h1(markdown: str) -> str | None:
    """Text of the first ATX level-1 header outside code, or None."""
    blocks = list(iter_code_blocks(markdown))
    offset = 0
    for line in markdown.split("\n"):
        start, offset = offset, offset + len(line) + 1
        if any(block.start <= start <= block.end for block in blocks):
            continue  # a "# comment" inside code is not a header
        match = _ATX_H1.match(line.rstrip("\r"))
        if match and match.group(1):
            return match.group(1).strip()
    return None
