"""The real corpus: the Python 3.11 HTML docs (Debian's python3.11-doc), and the session's
one load of it (the `python_docs` fixture, tests/conftest.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from langchain_core.documents import Document

from service.errors import LoaderError

__all__ = ["PYTHON_DOCS", "LoadedCorpus"]

#: Debian's python3.11-doc: every page of the Python 3.11 HTML documentation.
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")


@dataclasses.dataclass(frozen=True)
class LoadedCorpus:
    """`PYTHON_DOCS` as `loaders.load` yields it, with the errors it reported and the time."""

    documents: list[Document]
    errors: list[LoaderError]
    seconds: float
