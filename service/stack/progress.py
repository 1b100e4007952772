"""How long-running stack work reports what it is doing."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Progress", "silent"]

#: Receives one human-readable line per step (building, importing, starting, ...).
Progress = Callable[[str], None]


def silent(_message: str) -> None:
    """A `Progress` that reports nothing."""
