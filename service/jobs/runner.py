"""The job runner of one service process: claims queued jobs and runs them.

Every `synopsis serve` process (each of `--workers N`) runs one `JobRunner`. A poller
thread, every `jobs_poll_seconds`:

1. marks `interrupted` every running job whose heartbeat is older than the lease (its
   process stopped or was killed, or the job stopped making progress; any process may
   do this, for any worker's job);
2. for the jobs this process runs: reads whether a cancel was asked (by a request to any
   process) or whether another process gave the job up; stops a job that made no
   progress for `stall` seconds (a call that hangs) or ran longer than `max_seconds`
   (`interrupted`, naming the setting); and writes the heartbeat of each job that made
   progress within `stall` seconds (every third of the lease). The heartbeat says the job
   moves, not that this poller runs: a job stuck in a call stops beating;
3. claims queued jobs, oldest first, while fewer than `jobs_workers` run here. The claim
   (`JobStore.claim`) is won by one process only;
4. queues the syncs of registered sources that are due (`service.jobs.schedule`), when
   it was given a scheduler.

A job runs on a worker thread through the same core as `synopsis ingest` and `synopsis
sources sync` (`service.jobs.execute`); progress is written at most once a second. A job
told to stop stops at its next event, or within half a second while it waits for
summaries (the pipeline's "wait" events); one still inside another call after `grace` seconds (every
call has a deadline, so it returns eventually) is given up: the poller records its
state and its slot is free, and what the thread does when its call returns is not
recorded. Every final state is written only over the attempt and worker it belongs to
(`JobStore.finish`), so an older attempt's late end never overwrites a newer one.
Stopping the runner (service shutdown) marks this process's running jobs `interrupted`,
so a restart shows them so at once, and waits (`grace` seconds at most) for their threads
to end, so that they release their sources' leases before the service closes its client
and a retry need not wait for the leases to run out; a killed process's jobs are found by
their stale heartbeat.
"""

from __future__ import annotations

import datetime as dt
import logging
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from loaders import LoadOptions
from service.errors import SynopsisError
from service.index.records import now
from service.ingest.report import IngestEvent, IngestReport
from service.jobs.execute import JobOutcome, run_spec
from service.jobs.records import Job, JobState, ProgressTracker
from service.jobs.store import JobStore
from service.settings import Settings

if TYPE_CHECKING:
    from service.jobs.schedule import SyncScheduler
    from service.sources import SyncReport
    from service.synopsis import Synopsis

__all__ = ["JobRunner", "upload_dir"]

log = logging.getLogger(__name__)

_FLUSH_SECONDS = 1.0


def upload_dir(uploads: Path, job_id: str) -> Path:
    """Where the files of job `job_id` are kept until it is done."""
    return uploads / job_id


class _Stop(Exception):
    """Raised from the progress callback to stop a running job (not an error)."""


@dataclass
class _Running:
    """A job this process runs: its id and attempt, and why it should stop, if it should."""

    job: Job
    stop: threading.Event = field(default_factory=threading.Event)
    # "cancelled": a cancel was asked; "interrupted": it stalled or ran over its limit
    # (`reason` says which); "lost": another process marked it interrupted, or this
    # process recorded its state itself (shutdown, or the job did not stop in time) —
    # the job's thread writes nothing.
    stop_reason: str = ""
    reason: str = ""
    started: float = field(default_factory=time.monotonic)
    last_progress: float = field(default_factory=time.monotonic)  # of its last event
    stop_asked: float | None = None  # when `stop` was set
    last_beat: float = field(default_factory=time.monotonic)
    ended: threading.Event = field(default_factory=threading.Event)  # its thread returned

    def ask_stop(self, why: str, reason: str = "") -> None:
        """Tell the job's thread to stop (at its next event or wait)."""
        if self.stop.is_set():
            return
        self.stop_reason, self.reason = why, reason
        self.stop_asked = time.monotonic()
        self.stop.set()


class JobRunner:
    """Claims and runs queued jobs of one job store, for one service process."""

    def __init__(
        self,
        synopsis: Synopsis,
        jobs: JobStore,
        *,
        uploads: Path,
        options: Callable[[], LoadOptions],
        workers: int = 1,
        lease_seconds: float = 30.0,
        poll_seconds: float = 1.0,
        stall_seconds: float = 900.0,
        max_seconds: float = 0.0,
        grace_seconds: float = 5.0,
        worker_id: str | None = None,
        on_report: Callable[[IngestReport], None] | None = None,
        on_sync: Callable[[str, SyncReport], None] | None = None,
        scheduler: SyncScheduler | None = None,
    ) -> None:
        self.synopsis = synopsis
        self.jobs = jobs
        self.uploads = uploads
        self.workers = max(1, workers)  # 0 (API-only) is handled by not starting one
        self.lease = lease_seconds
        self.poll = poll_seconds
        self.stall = stall_seconds
        self.max_seconds = max_seconds  # 0: no limit
        self.grace = grace_seconds
        self.worker_id = worker_id or f"worker-{uuid.uuid4().hex[:12]}"
        self._options = options
        self._on_report = on_report or (lambda _report: None)
        self._on_sync = on_sync or (lambda _name, _report: None)
        self.scheduler = scheduler
        self._running: dict[str, _Running] = {}
        # Final states a Weaviate outage kept from being written, by job id.
        self._unrecorded: dict[str, tuple[_Attempt, dict[str, object]]] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._poller: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Start the poller thread."""
        self._poller = threading.Thread(target=self._poll_forever, name="job-poller", daemon=True)
        self._poller.start()

    def wake(self) -> None:
        """Look for queued jobs now rather than at the next poll."""
        self._wake.set()

    def stop(self, *, reason: str = "the service stopped during the job") -> None:
        """Stop polling; mark this process's running jobs `interrupted` with `reason`."""
        self._stopping.set()
        self._wake.set()
        with self._lock:
            running = list(self._running.values())
        for item in running:
            item.ask_stop("lost")
            item.stop_reason = "lost"
            self._finish(item.job, "interrupted", reason=reason)
        if self._poller is not None:
            self._poller.join(timeout=self.poll + 5)
        # A job thread stops at its next event and then releases its sources' leases,
        # through the client the service closes after this: wait for it, `grace` seconds
        # at most. One still inside a model call is not waited for longer (its state says
        # interrupted already; its leases end by themselves, and a retry converges).
        deadline = time.monotonic() + self.grace
        for item in running:
            item.ended.wait(max(0.0, deadline - time.monotonic()))

    def running_ids(self) -> list[str]:
        """The jobs this process runs now."""
        with self._lock:
            return list(self._running)

    # -- polling ------------------------------------------------------------------------

    def _poll_forever(self) -> None:
        failures = 0
        while not self._stopping.is_set():
            try:
                self.tick()
                failures = 0
            except Exception as exc:  # Weaviate down: keep polling, say so once per streak
                failures += 1
                if failures == 1:
                    log.warning("job poller: %s: %s (retrying)", type(exc).__name__, exc)
            self._wake.wait(timeout=self.backoff(failures))
            self._wake.clear()

    def backoff(self, failures: int) -> float:
        """Seconds to the next poll after `failures` failed polls in a row: doubling from
        the poll interval, but below a third of the lease, so that a brief Weaviate
        outage does not cost this process's jobs their heartbeats (others would then
        take them for dead)."""
        return min(self.poll * (1 << min(failures, 16)), max(self.poll, self.lease / 4))

    def tick(self) -> None:
        """One round of the poller (public so tests can drive it without the thread)."""
        self._record_pending()
        self._reap_stale()
        self._watch_own()
        self._claim_queued()
        if self.scheduler is not None and not self._stopping.is_set() and self.scheduler.tick():
            self.wake()  # claim what it queued at once

    def _reap_stale(self) -> None:
        cutoff = now() - dt.timedelta(seconds=self.lease)
        with self._lock:
            mine = set(self._running) | set(self._unrecorded)
        for job in self.jobs.in_states(["running"]):
            if job.id in mine:
                continue
            beat = job.heartbeat_at or job.started_at
            if beat is None or beat < cutoff:
                silent = (now() - beat).total_seconds() if beat else self.lease
                self._finish(
                    job,
                    "interrupted",
                    reason=f"its worker ({job.worker or 'unknown'}) stopped or its job "
                    f"stopped making progress: no heartbeat for {silent:.0f} s; retry with "
                    f"POST /jobs/{job.id}/retry",
                    worker=job.worker,
                )

    def _watch_own(self) -> None:
        with self._lock:
            running = list(self._running.values())
        names = Settings.env_names()
        for item in running:
            if item.stop.is_set():
                self._give_up_if_late(item)
                continue
            stored = self.jobs.get(item.job.id)
            if (
                stored is None
                or stored.state != "running"
                or stored.worker != self.worker_id
                or stored.attempt != item.job.attempt
            ):
                item.ask_stop("lost")
                continue
            if stored.cancel_requested:
                item.ask_stop("cancelled", "cancelled on request")
                continue
            moment = time.monotonic()
            if moment - item.last_progress > self.stall:
                item.ask_stop(
                    "interrupted",
                    f"no progress for {moment - item.last_progress:.0f} s "
                    f"({names['jobs_stall_seconds']}={self.stall:g}): a call to a model or "
                    f"to Weaviate hangs; retry with POST /jobs/{item.job.id}/retry",
                )
                continue
            if self.max_seconds and moment - item.started > self.max_seconds:
                item.ask_stop(
                    "interrupted",
                    f"ran longer than {names['jobs_max_seconds']}={self.max_seconds:g} s; "
                    "what it wrote stays, a retry goes on from there",
                )
                continue
            if moment - item.last_beat >= self.lease / 3:
                self.jobs.update(item.job.id, heartbeat_at=now())
                item.last_beat = moment

    def _give_up_if_late(self, item: _Running) -> None:
        """A job asked to stop that is still inside a call after `grace` seconds: record
        its state now and free its slot (its thread records nothing when it returns)."""
        if item.stop_reason == "lost" or item.stop_asked is None:
            return
        if time.monotonic() - item.stop_asked < self.grace:
            return
        with self._lock:
            if self._running.pop(item.job.id, None) is None:
                return  # it ended meanwhile and recorded its own state
        state: JobState = "cancelled" if item.stop_reason == "cancelled" else "interrupted"
        reason = item.reason + f" (it was inside a call for {self.grace:g} s more; given up)"
        item.stop_reason = "lost"
        log.warning("job %s: %s", item.job.id, reason)
        self._finish(item.job, state, reason=reason)

    def _claim_queued(self) -> None:
        free = self.workers - len(self.running_ids())
        if free <= 0 or self._stopping.is_set():
            return
        for job in self.jobs.in_states(["queued"]):
            if free <= 0 or self._stopping.is_set():
                break
            if self.jobs.claim(job, worker=self.worker_id):
                item = _Running(job=job)
                with self._lock:
                    self._running[job.id] = item
                # A daemon thread per job (at most `workers` at once: `free` counts them):
                # one stuck in a model call must not keep the process from exiting.
                threading.Thread(
                    target=self._run, args=(item,), name=f"job-{job.id[:8]}", daemon=True
                ).start()
                free -= 1

    # -- running ------------------------------------------------------------------------

    def _run(self, item: _Running) -> None:
        job = item.job
        tracker = ProgressTracker()
        last_flush = 0.0

        def on_event(event: IngestEvent) -> None:
            nonlocal last_flush
            if item.stop.is_set():
                raise _Stop
            if event.stage == "wait":  # a chance to stop, not progress ("held" is: a bounded wait)
                return
            item.last_progress = time.monotonic()
            tracker.observe(event, at=item.last_progress)
            if time.monotonic() - last_flush >= _FLUSH_SECONDS:
                last_flush = time.monotonic()
                self.jobs.update(job.id, progress=tracker.progress, sources=tracker.sources)

        state: JobState = "failed"
        reason = ""
        outcome: JobOutcome | None = None
        try:
            outcome = run_spec(self.synopsis, job.spec, options=self._options(), on_event=on_event)
            self._on_outcome(outcome)
            if outcome.failure:
                reason = outcome.failure
            else:
                state = "done"
        except _Stop:
            state = "cancelled" if item.stop_reason == "cancelled" else "interrupted"
            reason = item.reason
        except SynopsisError as exc:
            reason = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # a bug or a dependency failure: the job says which
            log.exception("job %s failed", job.id)
            reason = f"{type(exc).__name__}: {exc}"
        finally:
            with self._lock:
                mine = self._running.pop(job.id, None) is not None
            item.ended.set()
        if item.stop_reason == "lost" or not mine:
            return  # another process, our shutdown or the poller has set its state
        if state == "done":  # before the state says so: a client may look at once
            shutil.rmtree(upload_dir(self.uploads, job.id), ignore_errors=True)
        self._finish(
            job,
            state,
            reason=reason,
            progress=tracker,
            report=None if outcome is None else outcome.report,
        )
        self.wake()

    def _on_outcome(self, outcome: JobOutcome) -> None:
        if outcome.ingest is not None:
            self._on_report(outcome.ingest)
        if outcome.sync is not None:
            self._on_sync(str(outcome.report.get("source", "")), outcome.sync)

    def _finish(
        self,
        job: Job,
        state: JobState,
        *,
        reason: str,
        progress: ProgressTracker | None = None,
        report: dict[str, object] | None = None,
        worker: str | None = None,
    ) -> None:
        """Record `job`'s final state, over its attempt run by `worker` (default: this
        process) only; if Weaviate is down, a later tick writes it."""
        changes: dict[str, object] = {"state": state, "reason": reason, "finished_at": now()}
        if progress is not None:
            changes.update(
                progress=progress.progress, sources=progress.sources, errors=progress.errors
            )
        if report is not None:
            changes["report"] = report
        owner = _Attempt(job.id, job.attempt, self.worker_id if worker is None else worker)
        try:
            self._record(owner, changes)
        except Exception as exc:  # Weaviate down: written by a later tick once it is back
            log.warning("job %s: could not record %s yet: %s", job.id, state, exc)
            with self._lock:
                self._unrecorded[job.id] = (owner, changes)

    def _record(self, owner: _Attempt, changes: dict[str, object]) -> None:
        if not self.jobs.finish(
            owner.job_id, attempt=owner.attempt, worker=owner.worker, **changes
        ):
            log.info(
                "job %s: attempt %d of %s ended after a newer state was recorded; kept that",
                owner.job_id,
                owner.attempt,
                owner.worker or "an unknown worker",
            )

    def _record_pending(self) -> None:
        """Write the final states that could not be written when their jobs ended."""
        with self._lock:
            pending = dict(self._unrecorded)
        for job_id, (owner, changes) in pending.items():
            self._record(owner, changes)
            with self._lock:
                self._unrecorded.pop(job_id, None)


@dataclass(frozen=True)
class _Attempt:
    """Whose final state it is: one attempt of a job, as run by one worker."""

    job_id: str
    attempt: int
    worker: str
