"""Throwaway local stacks: the type of the `isolated_settings` fixture (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable

from service.settings import Settings

__all__ = ["IsolatedSettings"]

#: Builds settings for a throwaway local stack: its own data dir under tmp_path and ports
#: shifted by `offset` from the shared stack's. The binary cache stays shared, so nothing
#: is rebuilt.
IsolatedSettings = Callable[..., Settings]
