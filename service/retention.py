"""Retention: what the service keeps, for how long, and the sweep that removes the rest.

Without it nothing expired: a failed job's uploads stayed for ever (only `done` removes
them), and jobs, claims and conversations piled up. A `Sweeper` removes, per the
settings (`SYNOPSIS_*_RETENTION_DAYS`; 0 keeps for ever):

- jobs that ended more than `jobs_retention_days` ago, with their uploads, claims and
  slot;
- the uploads of jobs that ended without `done` (kept so that a retry can run) after
  `uploads_retention_days` — a retry then asks for the files again — and upload folders
  no job refers to, as old;
- conversations not updated for `conversations_retention_days` (with their slot);
- and, whatever the settings: leases that ended (an ingest's hold on a source outlived by
  its process), claims that can decide nothing any more, job and conversation slots whose
  holder is gone (taken over an hour ago), and deletes of sources that stopped part-way.

Each service process sweeps every `retention_sweep_seconds` on a thread of its own
(`start`); every step is idempotent, so several processes sweeping at once only repeat
each other. A step that fails (Weaviate down) is logged and tried again next time.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from service.index.records import now
from service.ingest.delete import finish_deletions
from service.ingest.locks import SourceLocks
from service.jobs.records import ACTIVE_STATES, JOB_STATES, RETRYABLE_STATES
from service.jobs.runner import upload_dir
from service.jobs.store import JobStore

if TYPE_CHECKING:
    from service.synopsis import Synopsis

__all__ = ["SweepReport", "Sweeper"]

log = logging.getLogger(__name__)

#: A slot younger than this may belong to a request still reading its body.
SLOT_GRACE = dt.timedelta(hours=1)
#: An ended lease is removed this long after its end (its holder could be just late).
LEASE_GRACE = dt.timedelta(minutes=1)
_DAY = dt.timedelta(days=1)
_ENDED = tuple(state for state in JOB_STATES if state not in ACTIVE_STATES)


@dataclasses.dataclass
class SweepReport:
    """What one sweep removed; `failed` names the steps that raised."""

    jobs: int = 0
    uploads: int = 0
    claims: int = 0
    conversations: int = 0
    leases: int = 0
    slots: int = 0
    deletes: int = 0
    failed: list[str] = dataclasses.field(default_factory=list)

    def summary_line(self) -> str:
        """One line for the log."""
        counts = ", ".join(
            f"{value} {name}"
            for name, value in dataclasses.asdict(self).items()
            if name != "failed" and value
        )
        failed = f"; failed: {', '.join(self.failed)}" if self.failed else ""
        return (counts or "nothing to remove") + failed


class Sweeper:
    """Removes what the retention settings no longer keep (see the module docstring)."""

    def __init__(
        self,
        synopsis: Synopsis,
        jobs: JobStore,
        *,
        uploads: Path,
        clock: Callable[[], dt.datetime] = now,
    ) -> None:
        self.synopsis = synopsis
        self.jobs = jobs
        self.uploads = uploads
        self.settings = synopsis.settings
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the thread ---------------------------------------------------------------------

    def start(self) -> None:
        """Sweep every `retention_sweep_seconds` on a thread (the first after a minute at
        most, so that a restart does not wait an hour)."""
        interval = self.settings.retention.sweep_seconds
        if interval <= 0:
            return
        self._thread = threading.Thread(
            target=self._sweep_forever, args=(interval,), name="retention", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop sweeping (a sweep under way ends first, within its calls' deadlines)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _sweep_forever(self, interval: float) -> None:
        wait = min(interval, 60.0)
        while not self._stop.wait(timeout=wait):
            started = time.monotonic()
            report = self.sweep()
            seconds = time.monotonic() - started
            log.info("retention sweep (%.1f s): %s", seconds, report.summary_line())
            wait = interval

    # -- one sweep ----------------------------------------------------------------------

    def sweep(self) -> SweepReport:
        """One pass over everything; each step on its own (a failure is reported)."""
        report = SweepReport()
        steps: list[tuple[str, Callable[[SweepReport], None]]] = [
            ("jobs", self._old_jobs),
            ("uploads", self._old_uploads),
            ("claims", self._spent_claims),
            ("conversations", self._idle_conversations),
            ("leases", self._ended_leases),
            ("slots", self._orphan_slots),
            ("deletes", self._stopped_deletes),
        ]
        for name, step in steps:
            if self._stop.is_set():
                break
            try:
                step(report)
            except Exception as exc:  # Weaviate down: the next sweep tries again
                log.warning("retention sweep: %s failed: %s: %s", name, type(exc).__name__, exc)
                report.failed.append(name)
        return report

    def _cutoff(self, days: float) -> dt.datetime | None:
        return self._clock() - days * _DAY if days > 0 else None

    def _old_jobs(self, report: SweepReport) -> None:
        cutoff = self._cutoff(self.settings.retention.jobs_days)
        if cutoff is None:
            return
        for job in self.jobs.ended_before(cutoff, _ENDED):
            report.uploads += self._remove_upload(job.id)
            self.jobs.delete(job.id)
            report.jobs += 1

    def _old_uploads(self, report: SweepReport) -> None:
        cutoff = self._cutoff(self.settings.retention.uploads_days)
        if cutoff is None:
            return
        for job in self.jobs.ended_before(cutoff, RETRYABLE_STATES):
            if job.spec.kind == "files":
                report.uploads += self._remove_upload(job.id)
        if not self.uploads.is_dir():
            return
        # Folders no job refers to (a process stopped between the files and the job).
        for folder in self.uploads.iterdir():
            modified = dt.datetime.fromtimestamp(folder.stat().st_mtime, dt.UTC)
            if folder.is_dir() and modified < cutoff and self.jobs.get(folder.name) is None:
                report.uploads += self._remove_upload(folder.name)

    def _remove_upload(self, job_id: str) -> int:
        folder = upload_dir(self.uploads, job_id)
        if not folder.exists():
            return 0
        shutil.rmtree(folder, ignore_errors=True)
        return 1

    def _spent_claims(self, report: SweepReport) -> None:
        report.claims += self.jobs.remove_spent_claims()

    def _idle_conversations(self, report: SweepReport) -> None:
        cutoff = self._cutoff(self.settings.retention.conversations_days)
        if cutoff is None:
            return
        conversations = self.synopsis.conversations
        for conversation_id in conversations.idle_since(cutoff):
            conversations.delete(conversation_id)
            report.conversations += 1

    def _ended_leases(self, report: SweepReport) -> None:
        report.leases += self.jobs.leases.remove_ended(before=self._clock() - LEASE_GRACE)

    def _orphan_slots(self, report: SweepReport) -> None:
        taken_before = self._clock() - SLOT_GRACE
        for job_id in self.jobs.slot_holders(taken_before=taken_before):
            job = self.jobs.get(job_id)
            if job is None or job.state not in ACTIVE_STATES:
                self.jobs.release(job_id)
                report.slots += 1
        report.slots += self.synopsis.conversations.release_orphan_slots(taken_before=taken_before)

    def _stopped_deletes(self, report: SweepReport) -> None:
        store = self.synopsis.store
        if not store.exists():
            return
        with SourceLocks(store.leases, seconds=self.settings.ingest.lock_seconds) as locks:
            report.deletes += len(finish_deletions(store, locks=locks))
