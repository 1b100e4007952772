"""The errors the libraries raise or catch, and the base class of every Synopsis error.

`SynopsisError` and the errors `splitters` and `loaders` raise (or, for `ModelError`,
catch: an `ImageCaptioner` raises it) are defined here, in the base both libraries share
(`splitters.base`), so that neither needs anything from `service` or from the other.
`service.errors` re-exports them with the rest of the one hierarchy: catching
`service.errors.SynopsisError` catches these too.

They are not in `loaders`, where `LoaderError` is raised, because `service.errors` is
imported by the CLI at start-up and importing any `loaders` module loads the loaders
package, which the CLI must not do before a command needs it. This module imports
nothing, and `splitters/__init__.py` loads its submodules only on first use.
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "LoaderError",
    "ModelError",
    "SplitterError",
    "SynopsisError",
    "UnsafeUrlError",
]


class SynopsisError(Exception):
    """Base class of every error Synopsis raises on purpose."""


class ConfigurationError(SynopsisError):
    """A setting is missing, malformed or contradictory."""


class LoaderError(SynopsisError):
    """A source cannot be read or converted to Markdown."""

    def __init__(self, message: str, *, source: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source


class UnsafeUrlError(LoaderError):
    """A URL is refused before any connection: its scheme is not http or https, or its
    host is (or resolves to) an address the fetch policy does not allow, such as a
    loopback, private or cloud metadata address. `reason` says which, without the URL."""

    def __init__(self, message: str, *, source: str) -> None:
        super().__init__(message, source=source)
        self.reason = message


class SplitterError(SynopsisError):
    """Markdown cannot be split as asked."""


class ModelError(SynopsisError):
    """The chat or embedding model failed, timed out or answered unusably."""
