"""The search modes, in a module light enough for `--help` and request schemas."""

from __future__ import annotations

from typing import Literal

__all__ = ["DEFAULT_MODE", "MODES", "Mode"]

Mode = Literal["joint", "summaries", "originals", "both", "fused"]
MODES: tuple[Mode, ...] = ("joint", "summaries", "originals", "both", "fused")
#: Each chunk scored together with its summary: measured best (docs/eval.md).
DEFAULT_MODE: Mode = "joint"
