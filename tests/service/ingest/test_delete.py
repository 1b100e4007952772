"""Deleting a source (unit, on the in-memory store): the record is marked first, a delete
stopped at any step is finished by the next ingest, and "unchanged" counts the chunks.

Before, a delete removed the summaries, then the chunks, then the record: stopped between
the last two it left the record `complete` with no chunks, and every later ingest of the
same content skipped the source as unchanged. The kill -9 of a real process between the
steps is tests/service/ingest/test_delete_integration.py.
"""

from __future__ import annotations

import pytest
from langchain_core.documents import Document

from service.ingest.delete import delete_source
from tests.service.fakes import MemoryStore
from tests.service.ingest.test_pipeline import CHUNKS, PAGE, SOURCE, _ingestor

OTHER = Document(page_content="# Other\n\nText of another page.\n", metadata={"source": "o.md"})


def _indexed() -> MemoryStore:
    store = MemoryStore()
    _ingestor(store).ingest_documents([PAGE])
    store.log.clear()
    return store


def _complete(store: MemoryStore) -> None:
    record = store.sources[SOURCE]
    assert (record.status, record.chunks, record.pending) == ("complete", CHUNKS, 0)
    assert len(store.originals) == CHUNKS
    assert {s.original_id for s in store.summaries.values()} == set(store.originals)
    assert store.pending_summaries() == 0


def test_the_record_is_marked_deleting_before_anything_is_removed() -> None:
    store = _indexed()
    assert delete_source(store, SOURCE) == (CHUNKS, CHUNKS)
    assert store.log == [
        "record:deleting",
        "delete:summaries",
        "delete:originals",
        "delete:record",
    ]
    assert (store.sources, store.originals, store.summaries) == ({}, {}, {})


def test_deleting_what_is_not_indexed_removes_nothing() -> None:
    store = _indexed()
    assert delete_source(store, "absent.md") == (0, 0)
    assert store.log == []


@pytest.mark.parametrize("stopped_at", ["delete:summaries", "delete:originals", "delete:record"])
def test_a_delete_stopped_at_any_step_leaves_the_source_marked_and_a_reingest_restores_it(
    stopped_at: str,
) -> None:
    store = _indexed()
    store.fail_on = stopped_at
    with pytest.raises(RuntimeError, match="injected"):
        delete_source(store, SOURCE)
    assert store.sources[SOURCE].status == "deleting"

    store.fail_on = None
    report = _ingestor(store).ingest_documents([PAGE])
    assert report.unchanged_sources == 0
    _complete(store)


@pytest.mark.parametrize("stopped_at", ["delete:summaries", "delete:originals", "delete:record"])
def test_a_delete_stopped_at_any_step_is_finished_by_the_next_ingest_of_anything(
    stopped_at: str,
) -> None:
    store = _indexed()
    store.fail_on = stopped_at
    with pytest.raises(RuntimeError, match="injected"):
        delete_source(store, SOURCE)

    store.fail_on = None
    _ingestor(store).ingest_documents([OTHER])
    assert SOURCE not in store.sources
    assert {o.source for o in store.originals.values()} == {"o.md"}
    assert {s.source for s in store.summaries.values()} == {"o.md"}


def test_unchanged_also_counts_the_chunks() -> None:
    # What a delete stopped before its last step left before records were marked: the
    # record says complete, the chunks are gone.
    store = _indexed()
    store.delete_summaries(list(store.summaries))
    store.delete_originals(list(store.originals))
    report = _ingestor(store).ingest_documents([PAGE])
    assert (report.unchanged_sources, report.new_chunks) == (0, CHUNKS)
    _complete(store)
