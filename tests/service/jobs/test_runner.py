"""The job runner's own logic (unit): a job stuck in a call, a cancel, the wall-clock limit,
final states of older attempts, the poller's back-off, and sync jobs of registered
sources.

The store and the ingest are in-memory stand-ins (tests/service/jobs/fakes.py); each
scripted ingest says what the real pipeline would do: emit events, hang in a call (no
event at all), or wait for summaries (the pipeline's "wait" events). Every wait on a
condition is polled with a bound.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from loaders import LoadOptions
from service.errors import ConfigurationError
from service.ingest.report import IngestEvent, IngestReport
from service.jobs.queue import active_sync
from service.jobs.records import Job, JobSpec
from service.jobs.runner import JobRunner
from service.jobs.store import JobStore
from service.settings import Settings
from service.sources import RegisteredSource, SyncReport
from service.synopsis import Synopsis
from tests.service.jobs.fakes import MemoryJobStore, Script, ScriptedSynopsis

Emit = Callable[[IngestEvent], None]


def _until(condition: Callable[[], bool], seconds: float = 5.0) -> float:
    """Poll `condition` until it holds; the seconds it took (the test fails past `seconds`)."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < seconds, "condition not reached in time"
        time.sleep(0.01)
    return time.monotonic() - started


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at the end of each test, so no scripted call is left hanging."""
    event = threading.Event()
    yield event
    event.set()


def hangs(release: threading.Event) -> Script:
    """Writes a source's chunks, then hangs in a call (no event) until `release`."""

    def run(emit: Emit) -> IngestReport:
        emit(IngestEvent(stage="write", source="a", done=3, total=3))
        release.wait(timeout=30)
        return IngestReport(sources=1)

    return run


def waits_for_summaries(release: threading.Event) -> Script:
    """Waits for summaries that never come: a "wait" event every 10 ms until `release`."""

    def run(emit: Emit) -> IngestReport:
        emit(IngestEvent(stage="write", source="a", done=3, total=3))
        while not release.wait(timeout=0.01):
            emit(IngestEvent(stage="wait", source="a"))
        return IngestReport(sources=1)

    return run


def keeps_going(emit: Emit) -> IngestReport:
    """Progress every 10 ms, for ever (until told to stop)."""
    while True:
        emit(IngestEvent(stage="summarize", source="a", done=1, total=1000))
        time.sleep(0.01)


def quick(emit: Emit) -> IngestReport:
    emit(IngestEvent(stage="source", source="b", message="complete"))
    return IngestReport(sources=1)


def _runner(store: MemoryJobStore, synopsis: ScriptedSynopsis, **options: Any) -> JobRunner:
    settings: dict[str, Any] = {
        "lease_seconds": 1.0,
        "poll_seconds": 0.02,
        "stall_seconds": 60.0,
        "grace_seconds": 0.3,
        **options,
    }
    return JobRunner(
        cast(Synopsis, synopsis),
        cast(JobStore, store),
        uploads=Path("/nonexistent-uploads"),
        options=LoadOptions,
        **settings,
    )


def _stored(store: MemoryJobStore, job: Job) -> Job:
    found = store.get(job.id)
    assert found is not None
    return found


def _state(store: MemoryJobStore, job: Job) -> str:
    return _stored(store, job).state


def test_a_job_stuck_in_a_call_is_interrupted_at_the_stall_limit_and_frees_its_slot(
    release: threading.Event,
) -> None:
    store, synopsis = MemoryJobStore(), ScriptedSynopsis()
    synopsis.scripts = {"http://stuck": hangs(release), "http://next": quick}
    stuck, following = store.queue("http://stuck"), store.queue("http://next")
    runner = _runner(store, synopsis, stall_seconds=0.4, workers=1)
    runner.start()
    try:
        _until(lambda: _state(store, stuck) == "interrupted")
        # The stuck call has not returned, yet the next job runs in the freed slot.
        _until(lambda: _state(store, following) == "done")
    finally:
        runner.stop()
    job = _stored(store, stuck)
    assert "no progress for" in job.reason
    assert "SYNOPSIS_JOBS_STALL_SECONDS=0.4" in job.reason
    # Heartbeats stopped with the progress: none after the job stood still past the limit.
    beats = [c["heartbeat_at"] for i, c in store.updates if i == stuck.id and "heartbeat_at" in c]
    assert job.started_at is not None
    assert all((beat - job.started_at).total_seconds() <= 0.4 + 0.1 for beat in beats)
    release.set()  # the call returns now: what the thread reports is not recorded
    time.sleep(0.1)
    assert _state(store, stuck) == "interrupted"
    assert store.released == [stuck.id, following.id]  # each gave back its key's slot


def waits_for_its_source(release: threading.Event) -> Script:
    """Waits for a source another ingest holds: a "held" event every 10 ms until `release`."""

    def run(emit: Emit) -> IngestReport:
        while not release.wait(timeout=0.01):
            emit(IngestEvent(stage="held", source="a", message="another ingest of a holds it"))
        emit(IngestEvent(stage="source", source="a", message="complete"))
        return IngestReport(sources=1)

    return run


def test_a_job_waiting_for_a_source_another_ingest_holds_is_not_stalled(
    release: threading.Event,
) -> None:
    # The wait for a source has its own bound (the lock wait); past the stall limit the
    # job is still alive, and ends done once the source is free.
    store, synopsis = MemoryJobStore(), ScriptedSynopsis()
    synopsis.scripts = {"http://held": waits_for_its_source(release)}
    job = store.queue("http://held")
    runner = _runner(store, synopsis, stall_seconds=0.2, workers=1)
    runner.start()
    try:
        _until(lambda: _state(store, job) == "running")
        time.sleep(0.6)  # three stall limits
        assert _state(store, job) == "running"
        release.set()
        _until(lambda: _state(store, job) == "done")
    finally:
        runner.stop()


def test_a_cancel_reaches_a_job_waiting_for_summaries_at_once(release: threading.Event) -> None:
    store, synopsis = MemoryJobStore(), ScriptedSynopsis()
    synopsis.scripts = {"http://slow": waits_for_summaries(release)}
    job = store.queue("http://slow")
    runner = _runner(store, synopsis, grace_seconds=30.0)
    runner.start()
    try:
        _until(lambda: _state(store, job) == "running")
        store.update(job.id, cancel_requested=True)
        seconds = _until(lambda: _state(store, job) == "cancelled")
    finally:
        runner.stop()
    assert seconds < 1.0  # the poller's next tick, then the job's next wait event
    assert _stored(store, job).reason == "cancelled on request"
    assert runner.running_ids() == []


def test_a_cancel_of_a_job_inside_a_call_is_recorded_after_the_grace(
    release: threading.Event,
) -> None:
    store, synopsis = MemoryJobStore(), ScriptedSynopsis()
    synopsis.scripts = {"http://stuck": hangs(release)}
    job = store.queue("http://stuck")
    runner = _runner(store, synopsis, grace_seconds=0.3)
    runner.start()
    try:
        _until(lambda: _state(store, job) == "running")
        store.update(job.id, cancel_requested=True)
        seconds = _until(lambda: _state(store, job) == "cancelled")
    finally:
        runner.stop()
    assert 0.3 <= seconds < 2.0
    assert "given up" in _stored(store, job).reason
    assert runner.running_ids() == []


def test_a_stop_waits_for_a_stopping_job_to_end_so_it_can_release_its_leases(
    release: threading.Event,
) -> None:
    """Shutdown: a job waiting for summaries ends at its next wait event and then releases
    its sources' leases (here: its cleanup) before the service closes its client."""
    released = threading.Event()

    def run(emit: Emit) -> IngestReport:
        try:
            return waits_for_summaries(release)(emit)
        finally:
            time.sleep(0.2)  # releasing the leases through the client
            released.set()

    store, synopsis = MemoryJobStore(), ScriptedSynopsis()
    synopsis.scripts = {"http://slow": run}
    job = store.queue("http://slow")
    runner = _runner(store, synopsis, grace_seconds=5.0)
    runner.start()
    _until(lambda: runner.running_ids() == [job.id])
    runner.stop()
    assert released.is_set()
    assert _state(store, job) == "interrupted"
    assert _stored(store, job).reason == "the service stopped during the job"


def test_a_stop_waits_no_longer_than_the_grace_for_a_job_inside_a_call(
    release: threading.Event,
) -> None:
    inside = threading.Event()

    def run(emit: Emit) -> IngestReport:
        emit(IngestEvent(stage="write", source="a", done=3, total=3))
        inside.set()
        release.wait(timeout=30)
        return IngestReport(sources=1)

    store, synopsis = MemoryJobStore(), ScriptedSynopsis()
    synopsis.scripts = {"http://stuck": run}
    job = store.queue("http://stuck")
    runner = _runner(store, synopsis, grace_seconds=0.3)
    runner.start()
    assert inside.wait(timeout=5)
    started = time.monotonic()
    runner.stop()
    assert 0.3 <= time.monotonic() - started < 2.0
    assert _state(store, job) == "interrupted"


def test_a_job_over_its_wall_clock_limit_is_interrupted() -> None:
    store, synopsis = MemoryJobStore(), ScriptedSynopsis()
    synopsis.scripts = {"http://long": keeps_going}
    job = store.queue("http://long")
    runner = _runner(store, synopsis, max_seconds=0.5)
    runner.start()
    try:
        seconds = _until(lambda: _state(store, job) == "interrupted")
    finally:
        runner.stop()
    assert seconds < 2.0
    stored = _stored(store, job)
    assert "ran longer than SYNOPSIS_JOBS_MAX_SECONDS=0.5 s" in stored.reason


def test_a_final_state_of_an_older_attempt_is_not_written_over_a_newer_one(
    release: threading.Event,
) -> None:
    store, synopsis = MemoryJobStore(), ScriptedSynopsis()
    synopsis.scripts = {"http://page": hangs(release)}
    job = store.queue("http://page")
    runner = _runner(store, synopsis)
    runner.tick()  # claims it; no poller thread, so nothing watches the job meanwhile
    assert runner.running_ids() == [job.id]
    # Another process took the job for dead and a retry runs as attempt 2 elsewhere.
    store.update(job.id, state="running", attempt=2, worker="worker-elsewhere")
    release.set()
    _until(lambda: runner.running_ids() == [])
    stored = _stored(store, job)
    assert (stored.state, stored.attempt, stored.worker) == (
        "running",
        2,
        "worker-elsewhere",
    )


def test_a_job_reaped_by_another_process_keeps_that_state(release: threading.Event) -> None:
    store, synopsis = MemoryJobStore(), ScriptedSynopsis()
    synopsis.scripts = {"http://page": hangs(release)}
    job = store.queue("http://page")
    runner = _runner(store, synopsis)
    runner.tick()
    store.update(job.id, state="interrupted", reason="no heartbeat for 31 s")
    release.set()
    _until(lambda: runner.running_ids() == [])
    assert _state(store, job) == "interrupted"


@pytest.mark.parametrize(("poll", "lease"), [(1.0, 30.0), (0.2, 3.0), (0.05, 1.0)])
def test_the_poll_back_off_stays_below_a_third_of_the_lease(poll: float, lease: float) -> None:
    runner = _runner(MemoryJobStore(), ScriptedSynopsis(), poll_seconds=poll, lease_seconds=lease)
    waits = [runner.backoff(failures) for failures in range(0, 100)]
    assert waits[0] == poll
    assert waits[1] == min(2 * poll, lease / 4)
    assert max(waits) < lease / 3


def test_the_poll_interval_must_be_below_a_third_of_the_lease() -> None:
    with pytest.raises(ConfigurationError, match="SYNOPSIS_JOBS_POLL_SECONDS"):
        Settings().with_overrides(jobs_poll_seconds=10.0, jobs_lease_seconds=30.0)
    assert (
        Settings().with_overrides(jobs_poll_seconds=9.0, jobs_lease_seconds=30.0).jobs.poll_seconds
        == 9.0
    )


# -- sync jobs ----------------------------------------------------------------------------


def _directory_source(path: Path) -> RegisteredSource:
    return RegisteredSource(
        name="guide",
        kind="directory",
        location=str(path),
        created_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    )


def test_a_sync_job_syncs_the_source_and_keeps_its_report(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Alpha\n\nAlpha explains the widget.\n")
    store, synopsis = MemoryJobStore(), ScriptedSynopsis()
    synopsis.registry.add(_directory_source(tmp_path))
    job = store.queue("", spec=JobSpec(kind="sync", name="guide"))
    synced: list[tuple[str, SyncReport]] = []
    runner = _runner(store, synopsis, on_sync=lambda name, report: synced.append((name, report)))
    runner.tick()
    _until(lambda: _state(store, job) == "done")
    stored = _stored(store, job)
    source = synopsis.registry.require("guide")
    assert source.last_report is not None
    assert stored.report == {
        "source": "guide",
        **source.last_report.to_dict(),
        "summary": source.last_report.summary_line(),
    }
    assert (stored.report["added"], stored.report["completed"], stored.reason) == (1, True, "")
    assert source.synced_at is not None
    assert synced == [("guide", source.last_report)]


def test_a_sync_that_did_not_complete_fails_its_job_with_the_failures(tmp_path: Path) -> None:
    store, synopsis = MemoryJobStore(), ScriptedSynopsis()
    synopsis.registry.add(_directory_source(tmp_path / "gone"))
    job = store.queue("", spec=JobSpec(kind="sync", name="guide"))
    runner = _runner(store, synopsis)
    runner.tick()
    _until(lambda: _state(store, job) == "failed")
    stored = _stored(store, job)
    assert stored.reason.startswith("the sync of guide did not complete (1 failures)")
    assert stored.report["completed"] is False
    assert len(stored.errors) == 1
    assert "not a directory" in stored.errors[0]
    assert synopsis.registry.require("guide").synced_at is None


def test_a_sync_of_a_source_no_longer_registered_fails_its_job() -> None:
    store, synopsis = MemoryJobStore(), ScriptedSynopsis()
    job = store.queue("", spec=JobSpec(kind="sync", name="gone"))
    runner = _runner(store, synopsis)
    runner.tick()
    _until(lambda: _state(store, job) == "failed")
    assert _stored(store, job).reason.startswith("SourceNotFoundError: no source is registered")


def test_the_active_sync_of_a_source_is_found() -> None:
    store = MemoryJobStore()
    assert active_sync(cast(JobStore, store), "guide") is None
    other = store.queue("", spec=JobSpec(kind="sync", name="other"))
    store.queue("https://h/")
    assert active_sync(cast(JobStore, store), "guide") is None
    job = store.queue("", spec=JobSpec(kind="sync", name="guide"))
    assert active_sync(cast(JobStore, store), "guide") == job
    store.update(job.id, state="running")
    assert active_sync(cast(JobStore, store), "guide") == store.get(job.id)
    store.update(job.id, state="done")
    assert active_sync(cast(JobStore, store), "guide") is None
    assert active_sync(cast(JobStore, store), "other") == other
