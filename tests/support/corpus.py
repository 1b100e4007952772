"""The real corpus: the Python 3.11 HTML docs (Debian's python3.11-doc), the session's
one load of it (the `python_docs` fixture, tests/conftest.py), and its "More Control Flow
Tools" page, which the core integration tests ingest once per session into the
`TestCore` collections (the `core` and `controlflow` fixtures, tests/service/conftest.py).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path

from langchain_core.documents import Document

from loaders import load
from service.errors import LoaderError

__all__ = [
    "CONTROLFLOW",
    "CONTROLFLOW_CHUNKS",
    "CONTROLFLOW_HEAD",
    "CONTROLFLOW_HEAD_CHUNKS",
    "CORE_PREFIX",
    "PYTHON_DOCS",
    "LoadedCorpus",
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
