"""The whole Python 3.11 HTML documentation, loaded and split (takes a few minutes).

The documents are the session's one load of the corpus (`python_docs` in tests/conftest.py).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from langchain_core.documents import Document

from splitters import MarkdownHeaderSplitter, chunk_documents
from splitters.base.markdown_syntax import fences_balanced, iter_code_blocks

if TYPE_CHECKING:
    from tests.support.corpus import LoadedCorpus

DOCS = Path("/usr/share/doc/python3.11/html")
MAX_TOKENS = 500

pytestmark = [
    pytest.mark.corpus,
    pytest.mark.skipif(not DOCS.is_dir(), reason="python3.11-doc is not installed"),
]


def code_blocks(markdown: str) -> list[tuple[str, str, str]]:
    """(opening line, body, closing line) of every closed fenced block."""
    result = []
    for block in iter_code_blocks(markdown):
        if block.closed:
            lines = markdown[block.start : block.end].split("\n")
            result.append((lines[0], "\n".join(lines[1:-1]), lines[-1]))
    return result


@pytest.fixture(scope="module")
def corpus(python_docs: LoadedCorpus) -> tuple[list[Document], list[Document]]:
    documents = python_docs.documents
    return documents, list(chunk_documents(documents, max_tokens=MAX_TOKENS))


def test_every_page_is_loaded(corpus: tuple[list[Document], list[Document]]) -> None:
    documents, _ = corpus
    assert len(documents) == 530


def test_chunks_are_balanced_nonempty_and_bounded(
    corpus: tuple[list[Document], list[Document]],
) -> None:
    _, chunks = corpus
    assert [c for c in chunks if not fences_balanced(c.page_content)] == []
    assert [c for c in chunks if not c.page_content.strip()] == []
    # Not even the general index's rows of hundreds of links on one line: they are cut.
    assert [c.metadata["tokens"] for c in chunks if c.metadata["tokens"] > MAX_TOKENS] == []


def test_every_code_block_is_intact_or_refenced_in_order(
    corpus: tuple[list[Document], list[Document]],
) -> None:
    documents, chunks = corpus
    by_source: dict[str, list[Document]] = defaultdict(list)
    for chunk in chunks:
        by_source[chunk.metadata["source"]].append(chunk)
    splitter = MarkdownHeaderSplitter()
    checked = refenced = 0
    for document in documents:
        own = by_source[document.metadata["source"]]
        chunk_blocks = [b for c in own for b in code_blocks(c.page_content)]
        for section in splitter.split_sections(document.page_content):
            for opener, body, closer in code_blocks(section.content):
                checked += 1
                whole = f"{opener}\n{body}\n{closer}" if body else f"{opener}\n{closer}"
                if any(whole in c.page_content for c in own):
                    continue
                # Over the limit: consecutive pieces with the same fences rebuild the body
                # (joined by newlines, but a line over the limit is cut inside: compare
                # without them).
                refenced += 1
                flat = body.replace("\n", "")
                assert any(
                    all(b[0] == opener and b[2] == closer for b in chunk_blocks[i:j])
                    and "".join(b[1] for b in chunk_blocks[i:j]).replace("\n", "") == flat
                    for i in range(len(chunk_blocks))
                    for j in range(i + 2, min(i + 200, len(chunk_blocks)) + 1)
                    if chunk_blocks[i][0] == opener
                ), (document.metadata["source"], opener, body[:200])
    assert checked > 1000
    assert refenced < checked // 100
