"""`synopsis reindex` on the real stack: a copy with the same counts, found the same way."""

from __future__ import annotations

import dataclasses

import pytest

from service.ingest.report import IngestReport
from service.query.search import SearchRequest
from service.settings import Settings
from service.synopsis import Synopsis
from tests.support.corpus import CONTROLFLOW
from tests.support.invariants import assert_invariants

pytestmark = pytest.mark.integration


def test_reindex_copies_chunks_and_summaries_without_llm_calls(
    core: Synopsis, core_settings: Settings, controlflow: IngestReport
) -> None:
    copy_settings = core_settings.with_overrides(collection_prefix="TestReindexCopy")
    copy = Synopsis.open(copy_settings)
    try:
        copy.store.drop()
        calls_before = copy.summarizer.calls
        report = copy.reindex(core_settings.external.collection_prefix)
        found = assert_invariants(copy.store)
        original = assert_invariants(core.store)
        assert (report.originals, report.summaries) == (
            original.originals[CONTROLFLOW],
            original.summaries[CONTROLFLOW],
        )
        assert found.originals[CONTROLFLOW] == original.originals[CONTROLFLOW]
        assert copy.summarizer.calls == calls_before  # no LLM call
        query = SearchRequest(
            query="print numbers from 1 to 30 with range", k=3, source=CONTROLFLOW
        )
        # Found the same way: the same first hit, and the copy's first three among the
        # original's first five (the copy's vectors come from other batches, so scores
        # differ in their last digits and near ties may swap).
        copied = [h.id for h in copy.search(query)]
        indexed = [h.id for h in core.search(dataclasses.replace(query, k=5))]
        assert copied[0] == indexed[0]
        assert set(copied) <= set(indexed)
        # The copy's sources are complete: ingesting them again changes nothing.
        again = copy.ingest([CONTROLFLOW])
        assert (again.unchanged_sources, again.llm_calls) == (1, 0)
    finally:
        copy.store.drop()
        copy.close()
