"""The Synopsis a command opens.

Commands call `session.open_synopsis(...)` through this module, so a test replaces it in
one place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.cli.output import note
from service.settings import Settings

if TYPE_CHECKING:  # the heavy modules load only in the commands that need them
    from service.synopsis import Synopsis

__all__ = ["open_synopsis"]


def open_synopsis(settings: Settings) -> Synopsis:
    """Open the index and the models `settings` name (starting the local stack if it is
    configured), showing progress on stderr."""
    from service.synopsis import Synopsis

    return Synopsis.open(settings, progress=note)
