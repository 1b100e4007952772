"""`synopsis reindex` on the real stack: a copy with the same counts, found the same way.

The source is the shared page's first sections (`CONTROLFLOW_HEAD`, five chunks) as
Markdown, ingested into collections of its own by the smallest model (`cheap_settings`:
no assertion reads a summary's words); the copy re-embeds its chunks and summaries.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.query.search import SearchRequest
from service.settings import Settings
from service.synopsis import Synopsis
from tests.support.corpus import (
    CONTROLFLOW_HEAD,
    CONTROLFLOW_HEAD_CHUNKS,
    write_controlflow_markdown,
)
from tests.support.invariants import assert_invariants

pytestmark = pytest.mark.integration


@pytest.fixture
def indexed(cheap_settings: Settings) -> Iterator[Synopsis]:
    """A Synopsis on the collections to copy from, dropped before and after."""
    synopsis = Synopsis.open(cheap_settings.with_overrides(collection_prefix="TestReindexFrom"))
    try:
        synopsis.store.drop()
        yield synopsis
    finally:
        synopsis.store.drop()
        synopsis.close()


def test_reindex_copies_chunks_and_summaries_without_llm_calls(
    indexed: Synopsis, tmp_path: Path
) -> None:
    page = str(write_controlflow_markdown(tmp_path / "controlflow.md", CONTROLFLOW_HEAD))
    first = indexed.ingest([page])
    assert (first.new_chunks, first.llm_calls > 0) == (CONTROLFLOW_HEAD_CHUNKS, True), first
    copy_settings = indexed.settings.with_overrides(collection_prefix="TestReindexCopy")
    copy = Synopsis.open(copy_settings)
    try:
        copy.store.drop()
        calls_before = copy.summarizer.calls
        report = copy.reindex(indexed.settings.external.collection_prefix)
        found = assert_invariants(copy.store)
        original = assert_invariants(indexed.store)
        assert (report.sources, report.originals, report.summaries) == (
            1,
            original.originals[page],
            original.summaries[page],
        )
        assert found.originals[page] == original.originals[page] == CONTROLFLOW_HEAD_CHUNKS
        assert copy.summarizer.calls == calls_before  # no LLM call
        query = SearchRequest(query="print numbers from 1 to 30 with range", k=2, source=page)
        # Found the same way: the same first hit, and the copy's first two among the
        # original's first three of the five chunks (the copy's vectors come from other
        # batches, so scores differ in their last digits and near ties may swap).
        copied = [h.id for h in copy.search(query)]
        assert len(copied) == 2
        indexed_hits = [h.id for h in indexed.search(dataclasses.replace(query, k=3))]
        assert copied[0] == indexed_hits[0]
        assert set(copied) <= set(indexed_hits)
        # The copy's sources are complete: ingesting them again changes nothing.
        again = copy.ingest([page])
        assert (again.unchanged_sources, again.llm_calls) == (1, 0)
    finally:
        copy.store.drop()
        copy.close()
