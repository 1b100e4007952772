"""Holds on sources (unit): one holder at a time, renewed while held, taken over once
ended, and an ingest of a held source waits (or reports it failed past its wait).

The lease store is in memory (tests/service/fake_leases.py); two ingests of one source
on the real Weaviate are tests/service/ingest/test_source_locks_integration.py.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from langchain_core.documents import Document

from service.errors import SourceBusyError
from service.ingest.locks import SourceLocks, holding, source_lease
from service.ingest.pipeline import Ingestor
from service.ingest.report import IngestEvent, IngestReport
from tests.service.fake_leases import MemoryLeases
from tests.service.fakes import MemoryStore
from tests.service.ingest.test_pipeline import CHUNKS, PAGE, SOURCE, _ingestor

OTHER = Document(page_content="# Other\n\nText of another page.\n", metadata={"source": "o.md"})


def _until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def _locks(leases: MemoryLeases, **options: float) -> SourceLocks:
    return SourceLocks(leases, **{"poll": 0.01, "settle": 0.0, **options})


def test_a_second_holder_waits_until_the_first_releases() -> None:
    leases = MemoryLeases()
    with _locks(leases) as first, _locks(leases, wait=5.0) as second:
        assert first.acquire("a.md")
        assert not second.acquire("a.md", wait=0)
        took: list[bool] = []
        waiter = threading.Thread(target=lambda: took.append(second.acquire("a.md")))
        waiter.start()
        time.sleep(0.05)
        assert took == []  # still waiting
        first.release("a.md")
        waiter.join(timeout=5)
        assert took == [True]
        assert leases.holder(source_lease("a.md")) == second.holder


def test_holding_refuses_a_held_source_with_its_message_and_releases_after_the_block() -> None:
    leases = MemoryLeases()
    with _locks(leases) as other:
        assert other.acquire("a.md")
        with (
            pytest.raises(SourceBusyError, match=r"^a.md is busy$"),
            holding(leases, "a.md", seconds=30, busy="a.md is busy"),
        ):
            pytest.fail("the block ran while another holder had the source")
        other.release("a.md")
    with holding(leases, "a.md", seconds=30, busy="a.md is busy") as locks:
        assert locks.held() == ["a.md"]
        assert leases.holder(source_lease("a.md")) == locks.holder
    assert leases.leases == {}


def test_a_lease_its_holder_stopped_renewing_ends_and_is_taken_over() -> None:
    leases = MemoryLeases()
    assert leases.take(source_lease("a.md"), holder="killed-process", seconds=0.2)
    with _locks(leases, wait=5.0) as locks:
        started = time.monotonic()
        assert locks.acquire("a.md")
        assert 0.15 <= time.monotonic() - started < 2
        locks.confirm("a.md")


def test_held_leases_are_renewed_for_as_long_as_they_are_held() -> None:
    leases = MemoryLeases()
    with _locks(leases, seconds=0.3) as holder, _locks(leases) as other:
        assert holder.acquire("a.md")
        _until(lambda: leases.renewals >= 3)  # held for three times its length by now
        assert not other.acquire("a.md", wait=0)
    assert leases.leases == {}  # released on close


def test_a_holder_that_lost_the_race_is_refused_before_it_writes() -> None:
    leases = MemoryLeases()
    with _locks(leases) as locks:
        assert locks.acquire("a.md")
        # Another taker's write landed after ours (the last write wins).
        leases.leases[source_lease("a.md")] = ("other", time.monotonic() + 60)
        with pytest.raises(SourceBusyError, match="another ingest or delete"):
            locks.confirm("a.md")


def _held_ingestor(store: MemoryStore, leases: MemoryLeases, **options: float) -> Ingestor:
    ingestor = _ingestor(store)
    ingestor.leases = leases
    for name, value in options.items():
        setattr(ingestor, name, value)
    return ingestor


def test_an_ingest_of_a_held_source_waits_for_it_then_goes_on() -> None:
    store, leases = MemoryStore(), MemoryLeases()
    assert leases.take(source_lease(SOURCE), holder="another-ingest", seconds=60)
    events: list[IngestEvent] = []
    ingestor = _held_ingestor(store, leases)
    ingestor._emit = events.append
    reports: list[IngestReport] = []
    ingest = threading.Thread(target=lambda: reports.append(ingestor.ingest_documents([PAGE])))
    ingest.start()
    _until(lambda: any(event.stage == "held" for event in events))
    assert store.sources == {}  # nothing of it read or written while the other holds it
    leases.release(source_lease(SOURCE), holder="another-ingest")
    ingest.join(timeout=30)
    [report] = reports
    assert (report.failed, report.new_chunks) == ([], CHUNKS)
    assert store.sources[SOURCE].status == "complete"
    waits = [event for event in events if event.stage == "held"]
    assert waits[0].message == f"another ingest of {SOURCE} holds it"
    assert leases.leases == {}  # released


def test_a_source_held_past_the_wait_is_reported_failed_and_the_others_go_on() -> None:
    store, leases = MemoryStore(), MemoryLeases()
    assert leases.take(source_lease(SOURCE), holder="another-ingest", seconds=60)
    report = _held_ingestor(store, leases, lock_wait_seconds=0.1).ingest_documents([PAGE, OTHER])
    assert report.failed == [
        f"{SOURCE}: another ingest or delete of it still held it after 0.1 s "
        "(SYNOPSIS_INGEST_LOCK_WAIT_SECONDS); not indexed this time"
    ]
    assert report.sources == 1
    assert set(store.sources) == {"o.md"}
    assert {o.source for o in store.originals.values()} == {"o.md"}
    assert leases.holder(source_lease(SOURCE)) == "another-ingest"  # untouched


class _Unreachable(MemoryLeases):
    """Releases fail, as with Weaviate down or hung (each would wait out its deadline)."""

    def __init__(self) -> None:
        super().__init__()
        self.release_calls = 0

    def release(self, name: str, *, holder: str) -> None:
        self.release_calls += 1
        raise TimeoutError("Weaviate does not answer")


def test_closing_stops_at_the_first_failed_release() -> None:
    leases = _Unreachable()
    locks = _locks(leases)
    for source in ("a.md", "b.md", "c.md"):
        assert locks.acquire(source)
    locks.close()
    assert leases.release_calls == 1  # the other two end by themselves
