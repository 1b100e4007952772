"""In-memory stand-ins for unit tests of the job runner's own logic.

`MemoryJobStore` keeps `JobStore`'s contract (the methods the runner and the queue call,
with the same semantics: a claim is won once per attempt; `finish` writes only over the
attempt and worker given, and gives the job's slot back when it writes an end) in a
dict. `ScriptedSynopsis` stands in for the core a job runs through: each URL job runs the
function the test registered for its URL; a sync job runs the real sync over an in-memory
registry and index (tests/service/sources/memory.py). The real Weaviate and ingest are the
integration tests' (tests/service/api/test_api_jobs.py).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from typing import Any

from loaders import LoadOptions
from service.index.records import now
from service.ingest.report import IngestEvent, IngestReport
from service.jobs.records import Job, JobSpec, JobState
from service.sources import RegisteredSource, sync_source
from tests.service.sources.memory import MemoryIndex, MemoryRegistry

#: What a scripted ingest does: it gets the pipeline's event callback.
Script = Callable[[Callable[[IngestEvent], None]], IngestReport]


class MemoryJobStore:
    """The job store's contract over a dict (thread-safe)."""

    def __init__(self) -> None:
        self.jobs: dict[str, Job] = {}
        self.claims: dict[tuple[str, int], str] = {}
        self.updates: list[tuple[str, dict[str, Any]]] = []
        self.released: list[str] = []
        self._lock = threading.Lock()

    def create(self, job: Job) -> None:
        with self._lock:
            assert job.id not in self.jobs
            self.jobs[job.id] = job

    def create_once(self, job: Job) -> bool:
        with self._lock:
            if job.id in self.jobs:
                return False
            self.jobs[job.id] = job
            return True

    def replace(self, job: Job) -> None:
        with self._lock:
            self.jobs[job.id] = job

    def update(self, job_id: str, **changes: Any) -> None:
        with self._lock:
            self.updates.append((job_id, changes))
            self.jobs[job_id] = dataclasses.replace(self.jobs[job_id], **changes)

    def finish(self, job_id: str, *, attempt: int, worker: str, **changes: Any) -> bool:
        with self._lock:
            current = self.jobs.get(job_id)
            if (
                current is None
                or current.state != "running"
                or current.attempt != attempt
                or current.worker != worker
            ):
                return False
            self.updates.append((job_id, changes))
            self.jobs[job_id] = dataclasses.replace(current, **changes)
        if changes.get("state") not in ("queued", "running"):
            self.release(job_id)
        return True

    def release(self, job_id: str) -> None:
        """Give back the job's slot of its owner's share (recorded)."""
        with self._lock:
            self.released.append(job_id)

    def claim(self, job: Job, *, worker: str) -> bool:
        with self._lock:
            if (job.id, job.attempt) in self.claims:
                return False
            self.claims[(job.id, job.attempt)] = worker
            current = self.jobs.get(job.id)
            if current is None or current.state != "queued" or current.attempt != job.attempt:
                return False
            stamp = now()
            self.jobs[job.id] = dataclasses.replace(
                current, state="running", worker=worker, started_at=stamp, heartbeat_at=stamp
            )
            return True

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self.jobs.get(job_id)

    def in_states(self, states: Sequence[JobState], *, oldest_first: bool = True) -> list[Job]:
        with self._lock:
            found = [job for job in self.jobs.values() if job.state in states]
        return sorted(found, key=lambda job: job.created_at, reverse=not oldest_first)

    def count(self, states: Sequence[JobState], *, owner: str | None = None) -> int:
        return sum(owner in (None, job.owner) for job in self.in_states(states))

    def queue(self, url: str, *, spec: JobSpec | None = None) -> Job:
        """A new queued URL job (what `JobQueue.submit_url` stores), or one of `spec`."""
        job = Job(
            id=f"job-{len(self.jobs) + 1}",
            state="queued",
            owner="tester",
            spec=spec or JobSpec(kind="url", url=url),
            created_at=now(),
        )
        self.create(job)
        return job


class ScriptedSynopsis:
    """What a job runs through: `ingest` runs the script registered for the URL;
    `sync_registered` syncs a source of `registry` into `index` as the real one does
    (without its hold on the source)."""

    def __init__(self) -> None:
        self.scripts: dict[str, Script] = {}
        self.registry = MemoryRegistry()
        self.index = MemoryIndex()
        self.synced: list[str] = []

    @property
    def registered_sources(self) -> MemoryRegistry:
        return self.registry

    def sync_registered(
        self,
        name: str,
        *,
        options: LoadOptions | None = None,
        on_event: Callable[[IngestEvent], None] | None = None,
    ) -> RegisteredSource:
        source = self.registry.require(name)
        synced = sync_source(self.index, source, options=options or LoadOptions())
        self.registry.save(synced)
        self.synced.append(name)
        return synced

    def ingest(
        self,
        sources: Sequence[str],
        *,
        options: object = None,
        on_event: Callable[[IngestEvent], None],
        version: str = "",
    ) -> IngestReport:
        [url] = sources
        return self.scripts[url](on_event)
