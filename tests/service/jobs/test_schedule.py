"""Scheduled syncs (unit): the job workers queue one sync job per due slot of a source,
whichever process finds it due, none while one is queued or running, and the runner
runs it. The store and registry are the in-memory stand-ins (their contracts: a job id
is created once, tests/service/jobs/fakes.py; tests/service/sources/memory.py); two
runners on the real Weaviate are tests/service/sources/test_sync_integration.py's."""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading
import time
from pathlib import Path
from typing import cast

from loaders import LoadOptions
from service.jobs import SCHEDULE_OWNER, JobRunner, JobSpec, JobStore, SyncScheduler
from service.sources import RegisteredSource, sync_job_id
from service.synopsis import Synopsis
from tests.service.jobs.fakes import MemoryJobStore, ScriptedSynopsis
from tests.service.sources.memory import MemoryRegistry

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)


class Clock:
    """A settable `now`."""

    def __init__(self, at: dt.datetime) -> None:
        self.at = at

    def __call__(self) -> dt.datetime:
        return self.at


def _source(name: str = "docs", **fields: object) -> RegisteredSource:
    base = RegisteredSource(
        name=name,
        kind="sitemap",
        location="https://h/s.xml",
        created_at=T0,
        interval_seconds=3600,
    )
    return dataclasses.replace(base, **fields)  # type: ignore[arg-type]


def _scheduler(
    registry: MemoryRegistry, store: MemoryJobStore, clock: Clock, *, queue_size: int = 100
) -> SyncScheduler:
    return SyncScheduler(
        registry, cast(JobStore, store), queue_size=queue_size, check_seconds=0.0, clock=clock
    )


def _sync_jobs(store: MemoryJobStore) -> list[str]:
    return sorted(job.id for job in store.jobs.values() if job.spec.kind == "sync")


def test_a_due_source_gets_one_job_per_slot_whoever_finds_it() -> None:
    registry, store, clock = MemoryRegistry(), MemoryJobStore(), Clock(T0 + HOUR / 2)
    registry.add(_source())
    registry.add(_source("manual", interval_seconds=0))
    one, other = _scheduler(registry, store, clock), _scheduler(registry, store, clock)
    [job] = one.enqueue_due()
    assert (job.id, job.state, job.owner, job.spec) == (
        sync_job_id("docs", T0),
        "queued",
        SCHEDULE_OWNER,
        JobSpec(kind="sync", name="docs"),
    )
    assert other.enqueue_due() == []
    assert one.enqueue_due() == []
    assert _sync_jobs(store) == [job.id]


def test_two_schedulers_at_once_create_one_job() -> None:
    registry, store, clock = MemoryRegistry(), MemoryJobStore(), Clock(T0)
    registry.add(_source())
    schedulers = [_scheduler(registry, store, clock) for _ in range(8)]
    start = threading.Barrier(len(schedulers))
    created: list[int] = []

    def run(scheduler: SyncScheduler) -> None:
        start.wait()
        created.append(len(scheduler.enqueue_due()))

    threads = [threading.Thread(target=run, args=(s,)) for s in schedulers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (sorted(created), len(_sync_jobs(store))) == ([0] * 7 + [1], 1)


def test_no_second_job_while_one_is_queued_or_running_even_in_a_later_slot() -> None:
    registry, store, clock = MemoryRegistry(), MemoryJobStore(), Clock(T0)
    registry.add(_source())
    scheduler = _scheduler(registry, store, clock)
    [job] = scheduler.enqueue_due()
    clock.at = T0 + 3 * HOUR  # a later slot: still one job while it is queued...
    assert scheduler.enqueue_due() == []
    store.update(job.id, state="running")  # ...or running
    assert scheduler.enqueue_due() == []
    # A sync queued by hand (POST /sources/{name}/sync) counts as well.
    store.update(job.id, state="done")
    store.queue("", spec=JobSpec(kind="sync", name="docs"))
    assert scheduler.enqueue_due() == []


def test_the_next_slot_is_an_interval_after_the_last_sync_ended() -> None:
    registry, store, clock = MemoryRegistry(), MemoryJobStore(), Clock(T0)
    registry.add(_source())
    scheduler = _scheduler(registry, store, clock)
    [first] = scheduler.enqueue_due()
    store.update(first.id, state="done")
    ended = T0 + dt.timedelta(minutes=10)
    registry.save(_source(synced_at=ended, attempted_at=ended))
    clock.at = ended + HOUR - dt.timedelta(seconds=1)
    assert scheduler.enqueue_due() == []
    clock.at = ended + HOUR
    [second] = scheduler.enqueue_due()
    assert second.id == sync_job_id("docs", ended + HOUR) != first.id


def test_a_slot_whose_job_failed_before_the_sync_stored_anything_waits_for_the_next() -> None:
    registry, store, clock = MemoryRegistry(), MemoryJobStore(), Clock(T0)
    registry.add(_source())
    scheduler = _scheduler(registry, store, clock)
    [job] = scheduler.enqueue_due()
    store.update(job.id, state="failed")  # e.g. the process was killed: nothing stored
    clock.at = T0 + HOUR / 2
    assert scheduler.enqueue_due() == []  # the same slot: its job exists
    clock.at = T0 + HOUR
    [again] = scheduler.enqueue_due()
    assert again.id == sync_job_id("docs", T0 + HOUR)


def test_a_full_queue_holds_scheduled_syncs_back() -> None:
    registry, store, clock = MemoryRegistry(), MemoryJobStore(), Clock(T0)
    registry.add(_source("a"))
    registry.add(_source("b"))
    store.queue("https://h/page")
    scheduler = _scheduler(registry, store, clock, queue_size=2)
    assert [job.spec.name for job in scheduler.enqueue_due()] == ["a"]
    assert scheduler.enqueue_due() == []
    store.update(_sync_jobs(store)[0], state="done")
    assert [job.spec.name for job in scheduler.enqueue_due()] == ["b"]


def test_the_registry_is_read_without_page_states_and_only_every_check() -> None:
    reads: list[bool] = []

    class CountingRegistry(MemoryRegistry):
        def list(self, *, pages: bool = True) -> list[RegisteredSource]:
            reads.append(pages)
            return super().list(pages=pages)

    registry, store = CountingRegistry(), MemoryJobStore()
    registry.add(_source(interval_seconds=0))
    scheduler = SyncScheduler(
        registry, cast(JobStore, store), queue_size=10, check_seconds=60.0, clock=Clock(T0)
    )
    assert scheduler.tick() == []
    assert scheduler.tick() == []  # within check_seconds: not read
    assert reads == [False]


def test_the_runner_queues_and_runs_a_due_sync(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Alpha\n\nAlpha explains the widget.\n")
    store, synopsis = MemoryJobStore(), ScriptedSynopsis()
    synopsis.registry.add(
        RegisteredSource(
            name="guide",
            kind="directory",
            location=str(tmp_path),
            created_at=T0,
            interval_seconds=3600,
        )
    )
    runners = [
        JobRunner(
            cast(Synopsis, synopsis),
            cast(JobStore, store),
            uploads=tmp_path / "uploads",
            options=LoadOptions,
            poll_seconds=0.02,
            lease_seconds=1.0,
            scheduler=SyncScheduler(
                synopsis.registry, cast(JobStore, store), queue_size=10, check_seconds=0.0
            ),
        )
        for _ in range(2)
    ]
    for runner in runners:
        runner.start()
    try:
        deadline = time.monotonic() + 5
        while synopsis.registry.require("guide").synced_at is None:
            assert time.monotonic() < deadline, store.jobs
            time.sleep(0.01)
        time.sleep(0.2)  # ten more polls of each: nothing more is due
    finally:
        for runner in runners:
            runner.stop()
    [job] = store.jobs.values()
    assert (job.state, job.owner, job.report["added"]) == ("done", SCHEDULE_OWNER, 1)
    assert synopsis.synced == ["guide"]
