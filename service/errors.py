"""The one exception hierarchy of Synopsis.

```
SynopsisError                 base of everything Synopsis raises on purpose
├── ConfigurationError        a setting is missing, malformed or contradictory
├── StackError                the local Weaviate/Ollama stack cannot be built, started or reached
│   ├── BuildError            building a server binary or preparing model files failed
│   └── PortInUseError        a port the local stack needs is taken by another process
├── LoaderError               a source cannot be read or converted to Markdown (names the source)
├── SplitterError             Markdown cannot be split as asked
├── ModelError                the chat or embedding model failed or answered unusably
├── StoreError                Weaviate rejected a read or a write
│   └── EmbeddingMismatchError the collection was indexed with another embedding model
├── SearchError               a search request is invalid
└── QuerySetError             an evaluation question set is unreadable or malformed (names the line)
```

Each edge translates these once: the CLI prints one line and exits non-zero, the
HTTP API maps them to a status code and a JSON body.
"""

from __future__ import annotations

__all__ = [
    "BuildError",
    "ConfigurationError",
    "EmbeddingMismatchError",
    "LoaderError",
    "ModelError",
    "PortInUseError",
    "QuerySetError",
    "SearchError",
    "SplitterError",
    "StackError",
    "StoreError",
    "SynopsisError",
]


class SynopsisError(Exception):
    """Base class of every error Synopsis raises on purpose."""


class ConfigurationError(SynopsisError):
    """A setting is missing, malformed or contradictory."""


class StackError(SynopsisError):
    """The local stack (Weaviate, Ollama) cannot be built, started or reached."""


class BuildError(StackError):
    """Building a server binary or preparing model files failed."""


class PortInUseError(StackError):
    """A port the local stack needs is already taken by another process."""

    def __init__(self, message: str, *, port: int) -> None:
        super().__init__(message)
        self.port = port


class LoaderError(SynopsisError):
    """A source cannot be read or converted to Markdown."""

    def __init__(self, message: str, *, source: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source


class SplitterError(SynopsisError):
    """Markdown cannot be split as asked."""


class ModelError(SynopsisError):
    """The chat or embedding model failed, timed out or answered unusably."""


class StoreError(SynopsisError):
    """Weaviate rejected a read or a write."""


class EmbeddingMismatchError(StoreError):
    """The collection was indexed with another embedding model or dimension."""


class SearchError(SynopsisError):
    """A search request is invalid."""


class QuerySetError(SynopsisError):
    """An evaluation question set cannot be read or a line of it is malformed."""
