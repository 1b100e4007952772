"""Scheduled syncs: the job workers queue a sync job for each registered source that is
due (`service.sources.schedule`).

Every process that runs jobs looks, at most every `check_seconds`, from its poller
(`JobRunner.tick`). A due source gets a job only when no sync job of it is queued or
running, and that job's id is derived from the source's name and its due slot
(`sync_job_id`): every process that finds the source due at the same slot creates the
same job, which Weaviate stores once (`JobStore.create_once`); the job is then claimed by
one worker, as every job is. A slot's job that failed is not queued again: the next
slot comes one interval after the sync's end (stored by the sync) or, when the sync
stored nothing (it never started, the process was killed), one interval after the slot.
Scheduled jobs belong to `SCHEDULE_OWNER` (no API key's share of the queue), and are not
queued while the queue holds `queue_size` jobs.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from typing import Protocol

from service.index.records import now
from service.jobs.records import ACTIVE_STATES, Job, JobSpec
from service.jobs.store import JobStore
from service.sources import RegisteredSource, due_slot, sync_job_id

__all__ = ["SCHEDULE_OWNER", "SyncScheduler"]

log = logging.getLogger(__name__)

#: The owner of scheduled sync jobs (no API key is named so: keys' callers are `key-…`).
SCHEDULE_OWNER = "schedule"


class _Registry(Protocol):
    def exists(self) -> bool: ...

    def list(self, *, pages: bool = True) -> list[RegisteredSource]: ...


class SyncScheduler:
    """Queues the due syncs of one registry's sources as jobs of one job store."""

    def __init__(
        self,
        registry: _Registry,
        jobs: JobStore,
        *,
        queue_size: int,
        check_seconds: float = 10.0,
        clock: Callable[[], dt.datetime] = now,
    ) -> None:
        self.registry = registry
        self.jobs = jobs
        self.queue_size = queue_size
        self.check_seconds = check_seconds
        self._clock = clock
        self._last_check: float | None = None
        self._full_reported = False

    def tick(self) -> list[Job]:
        """`enqueue_due` when `check_seconds` have passed since the last look."""
        moment = time.monotonic()
        if self._last_check is not None and moment - self._last_check < self.check_seconds:
            return []
        self._last_check = moment
        return self.enqueue_due()

    def enqueue_due(self) -> list[Job]:
        """Queue a sync job for each due source that has none queued or running; the jobs
        this call created (another process may have created the others)."""
        if not self.registry.exists():
            return []  # nothing was ever registered: do not create the collection
        at = self._clock()
        due = [
            (source, slot)
            for source in self.registry.list(pages=False)
            if (slot := due_slot(source, at)) is not None
        ]
        if not due:
            return []
        active = self.jobs.in_states(ACTIVE_STATES)
        syncing = {job.spec.name for job in active if job.spec.kind == "sync"}
        queued = sum(job.state == "queued" for job in active)
        created: list[Job] = []
        for source, slot in due:
            if source.name in syncing:
                continue
            if queued >= self.queue_size:
                if not self._full_reported:
                    log.warning("scheduled syncs wait: the job queue is full (%d queued)", queued)
                    self._full_reported = True
                break
            job = Job(
                id=sync_job_id(source.name, slot),
                state="queued",
                owner=SCHEDULE_OWNER,
                spec=JobSpec(kind="sync", name=source.name),
                created_at=now(),
            )
            if self.jobs.create_once(job):
                created.append(job)
                queued += 1
                log.info("scheduled sync of %s queued as job %s", source.name, job.id)
        else:
            self._full_reported = False
        return created
