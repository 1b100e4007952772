"""What reading a registered source found before anything is written (`Scan`), and what
the scans of every kind share: counting a page as added, changed or unchanged, and
judging the text blocks repeated across a site's pages again from their fingerprints.
The directory's scan is here too; the web's are in `service.sources.web`, a git
repository's in `service.sources.repository`."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from langchain_core.documents import Document

from loaders import LoadOptions, load
from loaders.boilerplate import block_keys, repeated_keys
from loaders.documents import CONTENT_HASH, CONTENT_TYPE, HTML, SOURCE
from loaders.files import iter_files
from service.sources.records import PageState, RegisteredSource, SyncReport
from splitters.base.errors import LoaderError

__all__ = ["Scan", "count", "html_keys", "judged", "scan_directory"]

T = TypeVar("T")


@dataclasses.dataclass(kw_only=True)
class Scan:
    """What reading a source found, before anything is written."""

    listed: set[str] = dataclasses.field(default_factory=set)  # pages that exist now
    states: dict[str, PageState] = dataclasses.field(default_factory=dict)  # new states
    pending: set[str] = dataclasses.field(default_factory=set)  # states valid once ingested
    documents: Iterable[Document] = ()
    commit: str = ""  # git: the commit read


def count(report: SyncReport, previous: PageState | None, new_hash: str) -> None:
    """Count a page read now as added (not known), unchanged (the same hash) or changed."""
    if previous is None:
        report.added += 1
    elif previous.hash == new_hash:
        report.unchanged += 1
    else:
        report.changed += 1


def html_keys(documents: Iterable[Document]) -> frozenset[int] | None:
    """The block fingerprints of a page's HTML document (None: it has none, so it is not
    counted among the site's pages)."""
    html = [d for d in documents if d.metadata.get(CONTENT_TYPE) == HTML]
    return block_keys(html[0].page_content) if html else None


def judged(
    counted: list[tuple[T, frozenset[int] | None]], *, drop: bool
) -> Iterator[tuple[tuple[T, frozenset[int] | None], frozenset[int]]]:
    """Each page (with its block fingerprints) and the fingerprints to drop from it as
    repeated across the site (`loaders.boilerplate.repeated_keys`; none when `drop` is
    off), in order."""
    if drop:
        return repeated_keys((item, item[1]) for item in counted)
    return ((item, frozenset()) for item in counted)


def _file_states(root: Path) -> dict[str, os.stat_result]:
    return {os.path.abspath(path): path.stat() for path in iter_files(root)}


def scan_directory(source: RegisteredSource, options: LoadOptions, report: SyncReport) -> Scan:
    """Read a directory again when any file's size or mtime changed, or a file came or
    went (then all of it, as `synopsis ingest DIR` loads it); else nothing."""
    root = Path(source.location)
    if not root.is_dir():
        raise LoaderError("not a directory (any more)", source=source.location)
    files = _file_states(root)
    previous = source.pages
    scan = Scan()
    if set(files) == set(previous) and all(
        previous[path].size == stat.st_size and previous[path].mtime_ns == stat.st_mtime_ns
        for path, stat in files.items()
    ):
        report.unchanged += len(files)
        scan.listed = set(files)
        scan.states = dict(previous)
        return scan

    def failed(error: LoaderError) -> None:
        report.failed.append(str(error))
        scan.listed.add(error.source)  # its state is unknown: kept

    def classified(documents: Iterator[Document]) -> Iterator[Document]:
        for document in documents:
            page = str(document.metadata[SOURCE])
            digest = str(document.metadata[CONTENT_HASH])
            stat = files.get(page)
            count(report, previous.get(page), digest)
            scan.listed.add(page)
            scan.states[page] = PageState(
                hash=digest,
                size=stat.st_size if stat else -1,
                mtime_ns=stat.st_mtime_ns if stat else -1,
            )
            scan.pending.add(page)
            yield document

    scan.documents = classified(load([str(root)], options=options, on_error=failed))
    return scan
