"""Local sources: single files and directories walked recursively in sorted order."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from langchain_core.documents import Document

from loaders.formats import CONTENT_TYPES_BY_SUFFIX, convert
from loaders.options import LoadOptions
from splitters.base.errors import LoaderError

__all__ = ["SKIPPED_DIRECTORIES", "iter_files", "load_file"]

#: Directory names never descended into: build artefacts that duplicate pages (Sphinx's
#: `_sources` holds the reST of every page as .txt) and tool caches. Hidden directories
#: (a leading dot) are skipped too.
SKIPPED_DIRECTORIES = frozenset({"_sources", "_static", "__pycache__", "node_modules"})


def iter_files(directory: Path) -> Iterator[Path]:
    """Loadable files under `directory`, depth-first in sorted order, without symlink loops."""
    entries = sorted(directory.iterdir(), key=lambda p: p.name)
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            if entry.name in SKIPPED_DIRECTORIES or entry.is_symlink():
                continue
            yield from iter_files(entry)
        elif entry.suffix.lower() in CONTENT_TYPES_BY_SUFFIX and entry.is_file():
            yield entry


def load_file(path: Path, *, options: LoadOptions) -> Iterator[Document]:
    """Documents of one local file; `LoaderError` naming its absolute path on failure."""
    absolute = Path(os.path.abspath(path))
    source = str(absolute)
    content_type = CONTENT_TYPES_BY_SUFFIX.get(absolute.suffix.lower())
    if content_type is None:
        known = ", ".join(sorted(CONTENT_TYPES_BY_SUFFIX))
        raise LoaderError(f"unsupported file type (expected one of {known})", source=source)
    try:
        size = absolute.stat().st_size
        if size > options.max_bytes:
            raise LoaderError(
                f"{size} bytes exceeds the size cap of {options.max_bytes} bytes", source=source
            )
        data = absolute.read_bytes()
    except OSError as exc:
        raise LoaderError(f"cannot read file: {exc.strerror or exc}", source=source) from exc
    yield from convert(
        data,
        content_type=content_type,
        source=source,
        fallback_title=absolute.stem,
        options=options,
        base_url=absolute.as_uri(),
    )
