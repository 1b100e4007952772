"""What every command runs with: its errors as one line, and the Synopsis it opens.

Commands call `session.open_synopsis(...)` through this module, so a test replaces it in
one place.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from service.edges.cli.output import note
from service.errors import SynopsisError
from service.settings import Settings

if TYPE_CHECKING:  # the heavy modules load only in the commands that need them
    from service.synopsis import Synopsis

__all__ = ["one_line_errors", "open_synopsis"]

F = TypeVar("F", bound=Callable[..., Any])


def one_line_errors(command: F) -> F:
    """Turn a SynopsisError into a click error: one clear message, exit code 1."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except SynopsisError as exc:
            raise click.ClickException(str(exc)) from exc

    return wrapper  # type: ignore[return-value]


def open_synopsis(settings: Settings) -> Synopsis:
    """Open the index and the models `settings` name (starting the local stack if it is
    configured), showing progress on stderr."""
    from service.synopsis import Synopsis

    return Synopsis.open(settings, progress=note)
