"""What the HTTP API does with jobs: submit, look up, list, cancel, retry.

Nothing here waits on the ingest itself: a submitted job is stored `queued` and some
process's `JobRunner` claims it. Jobs belong to the caller (API key) that created them;
another caller sees none of them.
"""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from service.errors import JobNotFoundError, JobStateError, QueueFullError, SourceBusyError
from service.index.records import now
from service.jobs.records import ACTIVE_STATES, RETRYABLE_STATES, Job, JobFile, JobSpec
from service.jobs.runner import upload_dir
from service.jobs.store import JobStore

__all__ = ["JobQueue", "NewFile", "active_sync"]

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, kw_only=True)
class NewFile:
    """A file to ingest as it arrived: its bytes, the source name and the content type."""

    data: bytes
    source: str
    content_type: str
    title: str = ""


def active_sync(jobs: JobStore, name: str) -> Job | None:
    """The queued or running sync job of the registered source `name`, if there is one."""
    for job in jobs.in_states(ACTIVE_STATES):
        if job.spec.kind == "sync" and job.spec.name == name:
            return job
    return None


class JobQueue:
    """Submits and manages jobs in one job store, within the queue's limits."""

    def __init__(
        self,
        jobs: JobStore,
        *,
        uploads: Path,
        queue_size: int,
        per_owner: int,
        on_submit: Callable[[], None] = lambda: None,
        retry_after: int = 30,
    ) -> None:
        self.jobs = jobs
        self.uploads = uploads
        self.queue_size = queue_size
        self.per_owner = per_owner
        self.retry_after = retry_after
        self._on_submit = on_submit

    def reserve(self, owner: str) -> str:
        """A job id with its place in the queue and in `owner`'s share, taken now —
        before a request's body is read, so that a full share costs no upload. The
        share is counted in slots (`JobStore.reserve`): two requests of one key at once
        cannot both take its last place. `QueueFullError` when there is none; give an id
        that no job was made of back with `release`."""
        self._admit_queue()
        job_id = str(uuid.uuid4())
        self._take_slot(owner, job_id)
        return job_id

    def release(self, job_id: str) -> None:
        """Give back a reserved job id that no job was made of."""
        self.jobs.release(job_id)

    def submit_url(
        self,
        owner: str,
        url: str,
        *,
        crawl_depth: int,
        max_pages: int,
        job_id: str | None = None,
        version: str = "",
    ) -> Job:
        """Queue the ingest of `url` (and its crawl), under `job_id` if one was reserved,
        its chunks labelled `version` (empty: none)."""
        job_id = job_id or self.reserve(owner)
        spec = JobSpec(
            kind="url", url=url, crawl_depth=crawl_depth, max_pages=max_pages, version=version
        )
        try:
            return self._create(owner, spec, job_id=job_id)
        except BaseException:
            self.release(job_id)
            raise

    def submit_sync(self, owner: str, name: str) -> Job:
        """Queue a sync of the registered source `name`. `SourceBusyError` while a sync
        job of it is queued or running (two requests at once may both queue one: the
        second then fails as busy when it runs, as a sync holds its source)."""
        active = active_sync(self.jobs, name)
        if active is not None:
            raise SourceBusyError(f"a sync of {name} is {active.state} already: job {active.id}")
        job_id = self.reserve(owner)
        try:
            return self._create(owner, JobSpec(kind="sync", name=name), job_id=job_id)
        except BaseException:
            self.release(job_id)
            raise

    def submit_files(
        self,
        owner: str,
        files: Sequence[NewFile],
        *,
        job_id: str | None = None,
        version: str = "",
    ) -> Job:
        """Keep `files` under the uploads directory and queue their ingest, under `job_id`
        if one was reserved, their chunks labelled `version` (empty: none)."""
        job_id = job_id or self.reserve(owner)
        folder = upload_dir(self.uploads, job_id)
        stored: list[JobFile] = []
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for index, item in enumerate(files):
                name = _UNSAFE_NAME.sub("_", Path(item.source).name)[:80] or "file"
                path = folder / f"{index:03d}-{name}"
                path.write_bytes(item.data)
                stored.append(
                    JobFile(
                        path=str(path),
                        source=item.source,
                        content_type=item.content_type,
                        title=item.title,
                        size=len(item.data),
                    )
                )
            spec = JobSpec(kind="files", files=tuple(stored), version=version)
            return self._create(owner, spec, job_id=job_id)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            self.release(job_id)
            raise

    def get(self, owner: str, job_id: str) -> Job:
        """The caller's job `job_id`."""
        job = self.jobs.get(job_id)
        if job is None or job.owner != owner:
            raise JobNotFoundError(f"no job {job_id}")
        return job

    def recent(self, owner: str, *, limit: int, offset: int) -> tuple[list[Job], int]:
        """The caller's jobs, newest first, and how many there are."""
        return self.jobs.recent(owner=owner, limit=limit, offset=offset), self.jobs.total(
            owner=owner
        )

    def cancel(self, owner: str, job_id: str) -> Job:
        """Cancel a queued job at once; ask a running one to stop at its next step."""
        job = self.get(owner, job_id)
        if job.state == "queued":
            self.jobs.update(
                job.id,
                state="cancelled",
                cancel_requested=True,
                reason="cancelled before it started",
                finished_at=now(),
            )
            self.jobs.release(job.id)
        elif job.state == "running":
            self.jobs.update(job.id, cancel_requested=True)
        else:
            raise JobStateError(f"job {job_id} is {job.state}: only queued or running jobs cancel")
        return self.get(owner, job_id)

    def retry(self, owner: str, job_id: str) -> Job:
        """Queue a failed, interrupted or cancelled job again (a new attempt)."""
        job = self.get(owner, job_id)
        if job.state not in RETRYABLE_STATES:
            raise JobStateError(
                f"job {job_id} is {job.state}: only {', '.join(RETRYABLE_STATES)} jobs retry"
            )
        missing = [item.source for item in job.spec.files if not Path(item.path).is_file()]
        if missing:
            raise JobStateError(
                f"job {job_id}'s uploaded files are gone ({', '.join(missing)}): upload again"
            )
        if job.spec.kind == "sync" and (active := active_sync(self.jobs, job.spec.name)):
            raise SourceBusyError(
                f"a sync of {job.spec.name} is {active.state} already: job {active.id}"
            )
        self._admit_queue()
        self._take_slot(owner, job.id)
        again = Job(
            id=job.id,
            state="queued",
            owner=job.owner,
            spec=job.spec,
            created_at=job.created_at,
            attempt=job.attempt + 1,
            sources=job.sources,
        )
        try:
            self.jobs.replace(again)
        except BaseException:
            self.release(job.id)
            raise
        self._on_submit()
        return again

    def _admit_queue(self) -> None:
        queued = self.jobs.count(["queued"])
        if queued >= self.queue_size:
            raise QueueFullError(
                f"the job queue is full ({queued} queued jobs, SYNOPSIS_JOBS_QUEUE_SIZE="
                f"{self.queue_size}); try again later",
                retry_after=self.retry_after,
            )

    def _take_slot(self, owner: str, job_id: str) -> None:
        if not self.jobs.reserve(owner, job_id, limit=self.per_owner):
            raise QueueFullError(
                f"this API key has {self.per_owner} queued or running jobs "
                f"(SYNOPSIS_JOBS_PER_KEY={self.per_owner}); wait for one to end",
                retry_after=self.retry_after,
            )

    def _create(self, owner: str, spec: JobSpec, *, job_id: str) -> Job:
        job = Job(id=job_id, state="queued", owner=owner, spec=spec, created_at=now())
        self.jobs.create(job)
        self._on_submit()
        return replace(job)
