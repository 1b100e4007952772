"""Sections and pages read back from the real Weaviate, over the session's ingest of the
"More Control Flow Tools" page (tests/service/conftest.py)."""

from __future__ import annotations

import re

import pytest

from loaders import load
from service.index.records import header_path
from service.ingest.report import IngestReport
from service.query.context import ContextRequest
from service.query.search import search_request
from service.synopsis import Synopsis
from splitters.encoding import count_tokens
from tests.support.corpus import CONTROLFLOW, CONTROLFLOW_CHUNKS

pytestmark = pytest.mark.integration

SECTION = "4.7. Defining Functions"
_FENCE = re.compile(r"^```[^\n]*\n.*?^```$", re.MULTILINE | re.DOTALL)


def test_the_chunks_of_a_section_come_in_one_read_in_order(
    core: Synopsis, controlflow: IngestReport
) -> None:
    chunks, _ = core.store.source_chunks(CONTROLFLOW, limit=100)
    section = [c for c in chunks if c.headers and c.headers[-1] == SECTION]
    other = next(c for c in chunks if c.headers and c.headers[-1] != SECTION)
    keys = [
        (CONTROLFLOW, header_path(section[0].headers)),
        (CONTROLFLOW, header_path(other.headers)),
    ]
    found = core.store.section_chunks(keys)
    assert [c.id for c in found[keys[0]]] == [c.id for c in section]
    assert len(section) > 1
    assert all(header_path(c.headers) == keys[1][1] for c in found[keys[1]])


def test_a_search_gives_the_whole_section_of_its_hit(
    core: Synopsis, controlflow: IngestReport
) -> None:
    request = search_request(
        core.settings, "a function that writes the Fibonacci series", k=5, source=CONTROLFLOW
    )
    context = core.search_context(request, ContextRequest(expand="section", max_tokens=5000))
    assert context.tokens <= 5000
    by_section = {p.hit.headers[-1]: p for p in context.passages}
    defining = by_section[SECTION]
    chunks, _ = core.store.source_chunks(CONTROLFLOW, limit=100)
    section = [c for c in chunks if c.headers and c.headers[-1] == SECTION]
    assert defining.complete
    assert defining.chunk_indexes == tuple(c.chunk_index for c in section)
    assert defining.content == "\n\n".join(c.content for c in section)


def test_the_document_read_in_pages_is_every_chunk_once_and_its_code_byte_exact(
    core: Synopsis, controlflow: IngestReport
) -> None:
    pages = []
    offset: int | None = 0
    while offset is not None:
        page = core.read_document(CONTROLFLOW, max_tokens=2000, offset=offset)
        assert count_tokens(page.text) <= 2000
        pages.append(page)
        offset = page.next_offset
    assert sum(page.count for page in pages) == CONTROLFLOW_CHUNKS
    assert [page.offset for page in pages[1:]] == [page.offset + page.count for page in pages[:-1]]
    text = "\n\n".join(page.text for page in pages)
    [loaded] = load([CONTROLFLOW])
    code = _FENCE.findall(loaded.page_content)
    assert code
    assert [block for block in code if block not in text] == []
