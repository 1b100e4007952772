"""Deprecated alias of the fence half of `splitters.markdown_syntax`; import from there.

Kept only because `scripts/bench_splitters.py` still imports it; delete this module once
that script imports `splitters.markdown_syntax`. It defines nothing.
"""

from __future__ import annotations

from splitters.markdown_syntax import (
    CodeBlock,
    Fence,
    closing_fence,
    fences_balanced,
    iter_code_blocks,
    opening_fence,
)

__all__ = [
    "CodeBlock",
    "Fence",
    "closing_fence",
    "fences_balanced",
    "iter_code_blocks",
    "opening_fence",
]
