"""Two ingests of one source at once, on the real Weaviate: the source's lease makes the
second wait for the first, so nothing of either is orphaned.

Without the lease both read the stored chunks before either wrote, each decided from that
what to delete (nothing), and the chunks of the version written first stayed beside the
other's. To make that overlap certain rather than likely, each ingest, once it has split
the source, waits until the other has split it too — or is waiting for the source's
lease (its "held" event), which is what the lease is for.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from langchain_core.documents import Document

from service.errors import SourceBusyError
from service.index.identity import content_hash
from service.index.leases import LEASE_SETTLE_SECONDS
from service.ingest.chunk_records import unique_chunks
from service.ingest.locks import SourceLocks
from service.ingest.report import IngestEvent, IngestReport
from service.settings import Settings
from service.synopsis import Synopsis
from splitters import chunk_documents
from tests.service.test_deadlines import SLACK
from tests.support.invariants import assert_invariants

pytestmark = pytest.mark.integration

PREFIX = "TestSourceLocks"

SOURCE = "locks-test/guide.md"
_COMMON = {
    "Install": "Run `pip install widget` to install it.",
    "Configure": "Set `WIDGET_HOME` to the settings directory.",
    "Run": "Start it with `widget serve`.",
}
VERSIONS = {
    "one": {**_COMMON, "Stop": "Press Ctrl-C to stop the server."},
    "two": {**_COMMON, "Upgrade": "Run `pip install -U widget`.", "Logs": "See `widget.log`."},
}


def _document(version: str) -> Document:
    body = "\n\n".join(f"## {header}\n\n{text}" for header, text in VERSIONS[version].items())
    return Document(page_content=f"# Widget\n\n{body}\n", metadata={"source": SOURCE})


@pytest.fixture(scope="module")
def locks_settings(cheap_settings: Settings) -> Settings:
    """Collections of this module's own; the smallest chat model (summaries only need to
    exist); leases read back after the product's settle time, as takers at the same
    moment need (the suite's settings skip it: tests/conftest.py)."""
    return cheap_settings.with_overrides(
        collection_prefix=PREFIX, lease_settle_seconds=LEASE_SETTLE_SECONDS
    )


@pytest.fixture(scope="module")
def core(locks_settings: Settings) -> Iterator[Synopsis]:
    synopsis = Synopsis.open(locks_settings)
    synopsis.store.drop()
    try:
        yield synopsis
    finally:
        synopsis.store.drop()
        synopsis.close()


@pytest.fixture
def second(locks_settings: Settings, core: Synopsis) -> Iterator[Synopsis]:
    """Another Synopsis on the same collections: a second worker, replica or CLI."""
    other = Synopsis.open(locks_settings)
    try:
        yield other
    finally:
        other.close()


@pytest.fixture
def cleanup(core: Synopsis) -> Iterator[None]:
    yield
    core.delete_source(SOURCE, wait=60)


def _until(condition: Callable[[], bool], seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


def test_two_ingests_of_one_source_at_once_leave_one_version_and_no_orphan(
    core: Synopsis, second: Synopsis, cleanup: None
) -> None:
    split = {"one": threading.Event(), "two": threading.Event()}
    waiting = {"one": threading.Event(), "two": threading.Event()}

    def on_event(version: str) -> Callable[[IngestEvent], None]:
        other = "two" if version == "one" else "one"

        def observe(event: IngestEvent) -> None:
            if event.stage == "held" and "holds it" in event.message:
                waiting[version].set()
            elif event.stage == "split" and event.source == SOURCE:
                split[version].set()
                _until(lambda: split[other].is_set() or waiting[other].is_set())

        return observe

    def ingest(synopsis: Synopsis, version: str) -> IngestReport:
        return synopsis.ingest_documents([_document(version)], on_event=on_event(version))

    with ThreadPoolExecutor(max_workers=2) as pool:
        reports = list(pool.map(ingest, (core, second), ("one", "two")))

    failed = [report.failed for report in reports]
    if failed == [[], []]:
        assert any(waiting[version].is_set() for version in waiting)  # one waited for the other
    else:
        # Both took the lease at the very same moment (Weaviate's check that a lease is
        # new and its write are not one step): after the settle time `confirm` let one
        # write, and the other ended, having written nothing, with the documented message.
        assert sorted(map(len, failed)) == [0, 1], failed
        [message] = [reason for reasons in failed for reason in reasons]
        assert re.fullmatch(
            rf"{re.escape(SOURCE)}: another ingest or delete of it took it at the same "
            r"moment \(.+\); try again",
            message,
        ), message
    found = assert_invariants(core.store)
    record = core.store.source_record(SOURCE)
    assert record is not None
    assert record.status == "complete"
    [last] = [v for v in VERSIONS if content_hash(_document(v).page_content) == record.content_hash]
    # Exactly the chunks of the version written last: none of the other's left behind.
    split_last = chunk_documents([_document(last)], max_tokens=core.settings.ingest.max_tokens)
    chunks = unique_chunks(SOURCE, split_last)
    assert set(core.store.existing_originals(SOURCE)) == set(chunks)
    assert found.originals[SOURCE] == found.summaries[SOURCE] == record.chunks == len(chunks)


def test_of_four_takers_at_the_same_moment_one_holds_the_source(core: Synopsis) -> None:
    core.store.leases.ensure_schema()
    start = threading.Barrier(4)

    def take() -> bool:
        locks = SourceLocks(core.store.leases, seconds=30)
        start.wait(timeout=30)
        try:
            if not locks.acquire(SOURCE, wait=0):
                return False
            locks.confirm(SOURCE)
            time.sleep(1)  # hold it while the others try
            return True
        except SourceBusyError:
            return False
        finally:
            locks.close()

    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(pool.map(lambda _: take(), range(4)))
    assert sorted(outcomes) == [False, False, False, True]
    assert core.store.leases.holder("source\n" + SOURCE) is None  # released


def test_a_delete_of_a_source_an_ingest_holds_is_refused_then_done(
    core: Synopsis, cleanup: None
) -> None:
    core.ingest_documents([_document("one")])
    with SourceLocks(core.store.leases, seconds=30) as ingest:
        assert ingest.acquire(SOURCE, wait=0)
        started = time.monotonic()
        with pytest.raises(SourceBusyError, match="being ingested or deleted"):
            core.delete_source(SOURCE)
        assert time.monotonic() - started < SLACK
    originals, summaries = core.delete_source(SOURCE)
    assert originals == summaries > 0
    assert core.store.source_record(SOURCE) is None
