"""The job runner of one service process: claims queued jobs and runs them.

Every `synopsis serve` process (each of `--workers N`) runs one `JobRunner`. A poller
thread, every `jobs_poll_seconds`:

1. marks `interrupted` every running job whose heartbeat is older than the lease (its
   process stopped or was killed; any process may do this, for any worker's job);
2. for the jobs this process runs: writes their heartbeat (every third of the lease) and
   reads whether a cancel was asked (by a request to any process) or whether another
   process gave the job up as interrupted — either stops the job at its next event;
3. claims queued jobs, oldest first, while fewer than `jobs_workers` run here. The claim
   (`JobStore.claim`) is won by one process only.

A job runs on a worker thread through the same core as `synopsis ingest`
(`service.jobs.execute`); progress is written at most once a second. Stopping the
runner (service shutdown) marks this process's running jobs `interrupted`, so a restart
shows them so at once; a killed process's jobs are found by their stale heartbeat.
"""

from __future__ import annotations

import datetime as dt
import logging
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from loaders import LoadOptions
from service.errors import SynopsisError
from service.index.records import now
from service.ingest.pipeline import IngestEvent, IngestReport
from service.jobs.execute import run_spec
from service.jobs.records import Job, JobState, ProgressTracker
from service.jobs.store import JobStore

if TYPE_CHECKING:
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
    # "cancelled": a cancel was asked; "lost": another process marked it interrupted, or
    # this process is shutting down and marks it so itself — the runner writes nothing.
    stop_reason: str = ""
    last_beat: float = field(default_factory=time.monotonic)


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
        worker_id: str | None = None,
        on_report: Callable[[IngestReport], None] | None = None,
    ) -> None:
        self.synopsis = synopsis
        self.jobs = jobs
        self.uploads = uploads
        self.workers = max(1, workers)  # 0 (API-only) is handled by not starting one
        self.lease = lease_seconds
        self.poll = poll_seconds
        self.worker_id = worker_id or f"worker-{uuid.uuid4().hex[:12]}"
        self._options = options
        self._on_report = on_report or (lambda _report: None)
        self._running: dict[str, _Running] = {}
        # Final states a Weaviate outage kept from being written, by job id.
        self._unrecorded: dict[str, dict[str, object]] = {}
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
            item.stop_reason = "lost"
            item.stop.set()
            self._finish(item.job, "interrupted", reason=reason)
        if self._poller is not None:
            self._poller.join(timeout=self.poll + 5)
        # A job thread still inside a model call ends at its next event; do not wait (its
        # state says interrupted already, and a retry converges).

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
            self._wake.wait(timeout=self.poll * min(2**failures, 30))
            self._wake.clear()

    def tick(self) -> None:
        """One round of the poller (public so tests can drive it without the thread)."""
        self._record_pending()
        self._reap_stale()
        self._watch_own()
        self._claim_queued()

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
                    reason=f"its worker ({job.worker or 'unknown'}) stopped: no heartbeat "
                    f"for {silent:.0f} s; retry with POST /jobs/{job.id}/retry",
                )

    def _watch_own(self) -> None:
        with self._lock:
            running = list(self._running.values())
        for item in running:
            stored = self.jobs.get(item.job.id)
            if stored is None or stored.state != "running" or stored.worker != self.worker_id:
                item.stop_reason = "lost"
                item.stop.set()
                continue
            if stored.cancel_requested:
                item.stop_reason = "cancelled"
                item.stop.set()
                continue
            if time.monotonic() - item.last_beat >= self.lease / 3:
                self.jobs.update(item.job.id, heartbeat_at=now())
                item.last_beat = time.monotonic()

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
            tracker.observe(event, at=time.monotonic())
            if item.stop.is_set():
                raise _Stop
            if time.monotonic() - last_flush >= _FLUSH_SECONDS:
                last_flush = time.monotonic()
                self.jobs.update(job.id, progress=tracker.progress, sources=tracker.sources)

        state: JobState = "failed"
        reason = ""
        report: IngestReport | None = None
        try:
            report = run_spec(self.synopsis, job.spec, options=self._options(), on_event=on_event)
            self._on_report(report)
            if report.failed and report.sources == 0:
                reason = "no source could be loaded (see errors)"
            else:
                state = "done"
        except _Stop:
            state, reason = "cancelled", "cancelled on request"
        except SynopsisError as exc:
            reason = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # a bug or a dependency failure: the job says which
            log.exception("job %s failed", job.id)
            reason = f"{type(exc).__name__}: {exc}"
        finally:
            with self._lock:
                self._running.pop(job.id, None)
        if item.stop_reason == "lost":
            return  # another process (or our own shutdown) has set its state
        if state == "done":  # before the state says so: a client may look at once
            shutil.rmtree(upload_dir(self.uploads, job.id), ignore_errors=True)
        self._finish(
            job,
            state,
            reason=reason,
            progress=tracker,
            report=report,
        )
        self.wake()

    def _finish(
        self,
        job: Job,
        state: JobState,
        *,
        reason: str,
        progress: ProgressTracker | None = None,
        report: IngestReport | None = None,
    ) -> None:
        changes: dict[str, object] = {"state": state, "reason": reason, "finished_at": now()}
        if progress is not None:
            changes.update(
                progress=progress.progress, sources=progress.sources, errors=progress.errors
            )
        if report is not None:
            changes["report"] = _report_dict(report)
        try:
            self.jobs.update(job.id, **changes)
        except Exception as exc:  # Weaviate down: written by a later tick once it is back
            log.warning("job %s: could not record %s yet: %s", job.id, state, exc)
            with self._lock:
                self._unrecorded[job.id] = changes

    def _record_pending(self) -> None:
        """Write the final states that could not be written when their jobs ended."""
        with self._lock:
            pending = dict(self._unrecorded)
        for job_id, changes in pending.items():
            self.jobs.update(job_id, **changes)
            with self._lock:
                self._unrecorded.pop(job_id, None)


def _report_dict(report: IngestReport) -> dict[str, object]:
    raw = asdict(report)
    raw["seconds"] = {stage: round(value, 2) for stage, value in report.seconds.items()}
    raw["wall_seconds"] = round(report.wall_seconds, 2)
    return raw
