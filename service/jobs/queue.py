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

from service.errors import JobNotFoundError, JobStateError, QueueFullError
from service.index.records import now
from service.jobs.records import ACTIVE_STATES, RETRYABLE_STATES, Job, JobFile, JobSpec
from service.jobs.runner import upload_dir
from service.jobs.store import JobStore

__all__ = ["JobQueue", "NewFile"]

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, kw_only=True)
class NewFile:
    """A file to ingest as it arrived: its bytes, the source name and the content type."""

    data: bytes
    source: str
    content_type: str
    title: str = ""


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

    def submit_url(self, owner: str, url: str, *, crawl_depth: int, max_pages: int) -> Job:
        """Queue the ingest of `url` (and its crawl)."""
        self._admit(owner)
        spec = JobSpec(kind="url", url=url, crawl_depth=crawl_depth, max_pages=max_pages)
        return self._create(owner, spec, job_id=str(uuid.uuid4()))

    def submit_files(self, owner: str, files: Sequence[NewFile]) -> Job:
        """Keep `files` under the uploads directory and queue their ingest."""
        self._admit(owner)
        job_id = str(uuid.uuid4())
        folder = upload_dir(self.uploads, job_id)
        folder.mkdir(parents=True, exist_ok=True)
        stored: list[JobFile] = []
        try:
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
            return self._create(owner, JobSpec(kind="files", files=tuple(stored)), job_id=job_id)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
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
        self._admit(owner)
        again = Job(
            id=job.id,
            state="queued",
            owner=job.owner,
            spec=job.spec,
            created_at=job.created_at,
            attempt=job.attempt + 1,
            sources=job.sources,
        )
        self.jobs.replace(again)
        self._on_submit()
        return again

    def _admit(self, owner: str) -> None:
        queued = self.jobs.count(["queued"])
        if queued >= self.queue_size:
            raise QueueFullError(
                f"the job queue is full ({queued} queued jobs, SYNOPSIS_JOBS_QUEUE_SIZE="
                f"{self.queue_size}); try again later",
                retry_after=self.retry_after,
            )
        mine = self.jobs.count(ACTIVE_STATES, owner=owner)
        if mine >= self.per_owner:
            raise QueueFullError(
                f"this API key has {mine} queued or running jobs (SYNOPSIS_JOBS_PER_KEY="
                f"{self.per_owner}); wait for one to end",
                retry_after=self.retry_after,
            )

    def _create(self, owner: str, spec: JobSpec, *, job_id: str) -> Job:
        job = Job(id=job_id, state="queued", owner=owner, spec=spec, created_at=now())
        self.jobs.create(job)
        self._on_submit()
        return replace(job)
