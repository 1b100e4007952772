"""The real corpus: the Python 3.11 HTML docs (Debian's python3.11-doc), the session's
one load of it (the `python_docs` fixture, tests/conftest.py), and its "More Control Flow
Tools" page, which the core integration tests ingest once per session into the
`TestCore` collections (the `core` and `controlflow` fixtures, tests/service/conftest.py).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import fcntl
import multiprocessing
import pickle
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from unittest import mock

from langchain_core.documents import Document

import loaders
from loaders import LoadOptions, load
from loaders.files import iter_files, load_file
from service.errors import LoaderError

__all__ = [
    "CONTROLFLOW",
    "CONTROLFLOW_CHUNKS",
    "CONTROLFLOW_HEAD",
    "CONTROLFLOW_HEAD_CHUNKS",
    "CORE_PREFIX",
    "PYTHON_DOCS",
    "LoadedCorpus",
    "load_python_docs",
    "shared_python_docs",
    "write_controlflow_markdown",
]

#: Debian's python3.11-doc: every page of the Python 3.11 HTML documentation.
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")


@dataclasses.dataclass(frozen=True)
class LoadedCorpus:
    """`PYTHON_DOCS` as `loaders.load` yields it, with the errors it reported and the time."""

    documents: list[Document]
    errors: list[LoaderError]
    seconds: float


def _converted(path: Path) -> list[Document] | None:
    """One file's Documents as `load` would get them by default; None when it fails (the
    main process then converts it again itself, so the error is the loader's own)."""
    try:
        return list(load_file(path, options=LoadOptions()))
    except LoaderError:
        return None


def load_python_docs(*, workers: int = 2) -> LoadedCorpus:
    """`load([str(PYTHON_DOCS)], on_error=...)`, timed: the real `load` walks the
    directory, orders the pages, reports the errors and drops the blocks repeated across
    the site; only each file's conversion to Markdown (`loaders.files.load_file`, nearly
    all of the time) is done beforehand by `workers` processes, and `load` is handed
    those Documents where it would convert the file itself. A file that failed, or a
    call with other options, is converted in this process as usual.
    """
    started = time.monotonic()
    files = list(iter_files(PYTHON_DOCS))
    # Spawned, not forked: the session's clients run threads a fork must not copy.
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        converted = dict(zip(files, pool.map(_converted, files, chunksize=8), strict=True))

    def prepared(path: Path, *, options: LoadOptions) -> Iterator[Document]:
        documents = converted.get(path) if options == LoadOptions() else None
        return iter(documents) if documents is not None else load_file(path, options=options)

    errors: list[LoaderError] = []
    with mock.patch.object(loaders, "load_file", prepared):
        documents = list(load([str(PYTHON_DOCS)], on_error=errors.append))
    return LoadedCorpus(documents, errors, time.monotonic() - started)


def shared_python_docs(path: Path) -> LoadedCorpus:
    """`load_python_docs()` once for every process that asks with the same `path`: the
    first one loads the docs and saves them there, under an exclusive lock of the file;
    the others wait for the lock and read the saved copy."""
    with path.with_suffix(".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if path.exists():
                loaded: LoadedCorpus = pickle.loads(path.read_bytes())
                return loaded
            corpus = load_python_docs()
            path.write_bytes(pickle.dumps(corpus, protocol=pickle.HIGHEST_PROTOCOL))
            return corpus
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


#: The "More Control Flow Tools" page.
CONTROLFLOW = "/usr/share/doc/python3.11/html/tutorial/controlflow.html"
#: Chunks of CONTROLFLOW at the default 500 tokens (`synopsis chunk` lists them).
CONTROLFLOW_CHUNKS = 34
#: The collections the session ingests CONTROLFLOW into (`core_settings`).
CORE_PREFIX = "TestCore"

#: A numbered section's header line in the page's Markdown ("## 4.3. The `range()` …").
_SECTION_HEADER = re.compile(r"^#{2,6} (\d+(?:\.\d+)+)\. ", re.M)
#: Sections of CONTROLFLOW that a short copy keeps (`write_controlflow_markdown(path,
#: CONTROLFLOW_HEAD)`), and its chunks: the title's, 4.1, 4.2 and the two of 4.3.
CONTROLFLOW_HEAD = ("4.1", "4.2", "4.3")
CONTROLFLOW_HEAD_CHUNKS = 5


def write_controlflow_markdown(path: Path, sections: Sequence[str] = ()) -> Path:
    """The real page as the loader sees it, saved as Markdown at `path`: whole, or its
    title's text and only the numbered `sections`, each without its subsections. List a
    subsection's parent with it (`("4.8", "4.8.6")`): a chunk's header path is part of
    its identity.

    A copy of the HTML elsewhere would not do: the loader resolves its relative links
    against the file's location, so every chunk with a link would differ. The Markdown
    keeps the page's absolute links, so its chunks equal the page's (a section's chunks
    depend only on its header path and its text) and their summaries come from the cache:
    a short copy costs the embeddings of its few chunks, not of the page's 34.
    """
    [page] = load([CONTROLFLOW])
    markdown = page.page_content
    if sections:
        headers = list(_SECTION_HEADER.finditer(markdown))
        ends = [header.start() for header in headers[1:]] + [len(markdown)]
        kept = [
            markdown[header.start() : end]
            for header, end in zip(headers, ends, strict=True)
            if header.group(1) in sections
        ]
        assert len(kept) == len(sections), f"not every section of {sections} is on the page"
        markdown = markdown[: headers[0].start()] + "".join(kept)
    path.write_text(markdown, encoding="utf-8")
    return path
