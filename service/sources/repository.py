"""The scan of a registered git repository: the commit its ref names now, and only the
files whose blob ids differ from the last sync's (`loaders.git`, `service.sources.sync`)."""

from __future__ import annotations

from langchain_core.documents import Document

from loaders import LoadOptions
from loaders.boilerplate import without_blocks
from loaders.documents import CONTENT_TYPE, HTML
from loaders.git import GitFile, file_documents, resolve_commit, tree_files
from service.sources.records import PageState, RegisteredSource, SyncReport
from service.sources.scan import Scan, count, html_keys, judged
from splitters.base.errors import LoaderError

__all__ = ["scan_git"]


def scan_git(source: RegisteredSource, options: LoadOptions, report: SyncReport) -> Scan:
    """Read the files of `source`'s ref that differ from the last sync's; `LoaderError`
    when the repository or the ref cannot be read (nothing is listed then)."""
    repository = source.location
    ref = source.ref or "HEAD"
    commit = resolve_commit(repository, ref)
    previous = source.pages
    scan = Scan(commit=commit)
    if commit == source.commit and previous and all(s.hash for s in previous.values()):
        report.unchanged += len(previous)  # the commit the last completed sync indexed
        scan.listed = set(previous)
        scan.states = dict(previous)
        return scan
    prefix = f"{repository}@{ref}/"
    # A file whose blob is the one the last sync indexed is not read: its block
    # fingerprints are in its state (what `git diff --raw` of the two commits compares).
    loaded: dict[str, tuple[Document, ...]] = {}
    counted: list[tuple[GitFile, frozenset[int] | None]] = []
    for file in tree_files(repository, commit, source.subpath):
        page = prefix + file.path
        known = previous.get(page)
        if known is not None and known.hash == file.blob:
            counted.append((file, None if known.blocks is None else frozenset(known.blocks)))
            continue
        try:
            loaded[page] = tuple(file_documents(repository, file, source=page, options=options))
        except LoaderError as error:
            report.failed.append(str(error))
            scan.listed.add(page)  # its state is unknown: kept
            continue
        counted.append((file, html_keys(loaded[page])))
    documents: list[Document] = []
    for (file, blocks), doomed in judged(counted, drop=options.drop_repeated_blocks):
        page = prefix + file.path
        known = previous.get(page)
        dropped = tuple(sorted(doomed))
        scan.listed.add(page)
        read = loaded.get(page)
        if read is None:
            assert known is not None  # not read: known with this blob
            report.unchanged += 1
            scan.states[page] = known
            if dropped == known.dropped:
                continue
            # The files around it changed which of its blocks are repeats: read it again.
            try:
                read = tuple(file_documents(repository, file, source=page, options=options))
            except LoaderError as error:
                report.failed.append(str(error))
                continue
        else:
            count(report, known, file.blob)
        scan.states[page] = PageState(
            hash=file.blob,
            blocks=None if blocks is None else tuple(sorted(blocks)),
            dropped=dropped,
        )
        documents.extend(
            without_blocks(d, doomed) if d.metadata.get(CONTENT_TYPE) == HTML else d for d in read
        )
        scan.pending.add(page)
    scan.documents = documents
    return scan
