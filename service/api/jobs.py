"""`/jobs`: the jobs a write key has submitted (ingests, syncs of registered sources) —
state, progress, cancel, retry."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import msgspec
from litestar import Controller, Litestar, Request, Response, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import FromPath, Parameter
from litestar.status_codes import HTTP_200_OK, HTTP_202_ACCEPTED

from loaders import LoadOptions
from loaders.addresses import AddressPolicy
from service.api.metrics import record_ingest, record_sync
from service.api.openapi import KEY_REQUIRED, error_responses
from service.api.security import caller_id, require_write
from service.errors import JobsUnavailableError
from service.index.replication import Replication
from service.ingest.load_options import load_options
from service.jobs.queue import JobQueue
from service.jobs.records import Job
from service.jobs.runner import JobRunner
from service.jobs.schedule import SyncScheduler
from service.jobs.store import JobStore
from service.retention import Sweeper
from service.settings import Settings
from service.synopsis import Synopsis

__all__ = [
    "JobController",
    "JobList",
    "JobView",
    "accepted",
    "opened_for_jobs",
    "provide_job_queue",
    "running_jobs",
]

JobQueueDependency = NamedDependency[JobQueue]

# Weaviate answers at most QUERY_MAXIMUM_RESULTS (10,000 by default) objects of a query,
# counting the skipped ones: offset + limit must stay within it.
_MAX_OFFSET = 10_000 - 100
_OFFSET = f"Jobs to skip (at most {_MAX_OFFSET}: Weaviate reads at most 10,000 per query)."


def opened_for_jobs(state: State, name: str) -> Any:
    """`state.<name>`, which `running_jobs` opened; `JobsUnavailableError` (503) when this
    app has no jobs (`create_app` opens them only over a real `Synopsis`)."""
    value = getattr(state, name, None)
    if value is None:
        raise JobsUnavailableError("jobs are not available in this process")
    return value


def provide_job_queue(state: State) -> JobQueue:
    """The job queue `create_app`'s lifespan opened."""
    queue: JobQueue = opened_for_jobs(state, "job_queue")
    return queue


class JobFileView(msgspec.Struct, kw_only=True):
    """One uploaded file of a job."""

    source: str
    content_type: str
    size: int


class JobRequestView(msgspec.Struct, kw_only=True):
    """What the job was asked to do: ingest a URL or files, or sync a registered source
    (`name`)."""

    kind: str  # "url", "files" or "sync"
    url: str | None = None
    crawl_depth: int | None = None
    max_pages: int | None = None
    files: list[JobFileView] = msgspec.field(default_factory=list)
    name: str | None = None
    version: str | None = None  # url, files: the version label of their chunks


class JobView(msgspec.Struct, kw_only=True):
    """A job: its state, progress per stage, the ingest report and errors per source.

    `state`: queued, running, done, failed, interrupted (its worker stopped; retry it) or
    cancelled. `reason` says why a job failed, was interrupted or cancelled.
    """

    id: str
    state: str
    request: JobRequestView
    progress: dict[str, Any]
    report: dict[str, Any]
    errors: list[str]
    sources: list[str]
    reason: str
    attempt: int
    cancel_requested: bool
    created_at: dt.datetime
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None

    @classmethod
    def from_job(cls, job: Job) -> JobView:
        """The response form of a stored job."""
        spec = job.spec
        if spec.kind == "url":
            request = JobRequestView(
                kind="url",
                url=spec.url,
                crawl_depth=spec.crawl_depth,
                max_pages=spec.max_pages,
                version=spec.version or None,
            )
        elif spec.kind == "sync":
            request = JobRequestView(kind="sync", name=spec.name)
        else:
            request = JobRequestView(
                kind="files",
                files=[
                    JobFileView(source=f.source, content_type=f.content_type, size=f.size)
                    for f in spec.files
                ],
                version=spec.version or None,
            )
        return cls(
            id=job.id,
            state=job.state,
            request=request,
            progress=job.progress.to_dict(),
            report=dict(job.report),
            errors=list(job.errors),
            sources=list(job.sources),
            reason=job.reason,
            attempt=job.attempt,
            cancel_requested=job.cancel_requested,
            created_at=job.created_at,
            started_at=job.started_at,
            finished_at=job.finished_at,
        )


class JobList(msgspec.Struct, kw_only=True):
    """A page of the caller's jobs, newest first."""

    jobs: list[JobView]
    total: int
    limit: int
    offset: int


def accepted(job: Job) -> Response[JobView]:
    """`202 Accepted` with the job and its `Location`."""
    return Response(
        JobView.from_job(job),
        status_code=HTTP_202_ACCEPTED,
        headers={"Location": f"/jobs/{job.id}"},
    )


class JobController(Controller):
    """Ingest jobs (write keys only; each key sees its own)."""

    path = "/jobs"
    security = KEY_REQUIRED
    tags = ("jobs",)
    guards = [require_write]  # noqa: RUF012 - Litestar reads it as a class attribute

    @get(
        operation_id="listJobs",
        summary="The caller's recent jobs, newest first",
        responses=error_responses(400, 401, 403, 503),
    )
    async def list_jobs(
        self,
        request: Request[Any, Any, Any],
        job_queue: JobQueueDependency,
        limit: Annotated[int, Parameter(ge=1, le=100, description="Jobs per page.")] = 20,
        offset: Annotated[int, Parameter(ge=0, le=_MAX_OFFSET, description=_OFFSET)] = 0,
    ) -> JobList:
        """Recent jobs with their state and progress."""
        jobs, total = await asyncio.to_thread(
            job_queue.recent, caller_id(request), limit=limit, offset=offset
        )
        return JobList(
            jobs=[JobView.from_job(job) for job in jobs], total=total, limit=limit, offset=offset
        )

    @get(
        "/{job_id:str}",
        operation_id="getJob",
        summary="One job's state and progress",
        responses=error_responses(400, 401, 403, 404, 503),
    )
    async def get_job(
        self, request: Request[Any, Any, Any], job_queue: JobQueueDependency, job_id: FromPath[str]
    ) -> JobView:
        """The job; 404 when there is none with this id for this key."""
        job = await asyncio.to_thread(job_queue.get, caller_id(request), job_id)
        return JobView.from_job(job)

    @delete(
        "/{job_id:str}",
        operation_id="cancelJob",
        summary="Cancel a queued or running job",
        status_code=HTTP_200_OK,
        responses=error_responses(400, 401, 403, 404, 409, 503),
    )
    async def cancel_job(
        self, request: Request[Any, Any, Any], job_queue: JobQueueDependency, job_id: FromPath[str]
    ) -> JobView:
        """A queued job is cancelled at once; a running one stops at its next step (what it
        wrote stays consistent: ingestion is idempotent per source). 409 when it ended."""
        job = await asyncio.to_thread(job_queue.cancel, caller_id(request), job_id)
        return JobView.from_job(job)

    @post(
        "/{job_id:str}/retry",
        operation_id="retryJob",
        summary="Run a failed, interrupted or cancelled job again",
        status_code=HTTP_202_ACCEPTED,
        responses=error_responses(400, 401, 403, 404, 409, 429, 503),
    )
    async def retry_job(
        self, request: Request[Any, Any, Any], job_queue: JobQueueDependency, job_id: FromPath[str]
    ) -> Response[JobView]:
        """Queue a new attempt; it converges, as ingestion is idempotent. 409 otherwise."""
        job = await asyncio.to_thread(job_queue.retry, caller_id(request), job_id)
        return accepted(job)


@asynccontextmanager
async def running_jobs(
    app: Litestar, synopsis: Synopsis, settings: Settings
) -> AsyncIterator[None]:
    """Open the job store (creating its collections), the queue and this process's runner
    (which also queues the scheduled syncs of registered sources) on `app.state`, and
    start the retention sweeper (`service.retention`); stop both at exit (the runner's
    running jobs become `interrupted`)."""
    store = JobStore(
        synopsis.client,
        prefix=settings.external.collection_prefix,
        replication=Replication.from_settings(settings),
    )
    await asyncio.to_thread(store.ensure_schema)
    policy = AddressPolicy.from_allow_list(settings.urls.fetch_allow)
    uploads = settings.stack.data_dir / "uploads"

    def options() -> LoadOptions:
        return dataclasses.replace(load_options(settings), address_policy=policy)

    scheduler = SyncScheduler(
        synopsis.registered_sources, store, queue_size=settings.jobs.queue_size
    )
    runner = JobRunner(
        synopsis,
        store,
        uploads=uploads,
        options=options,
        workers=settings.jobs.workers,
        lease_seconds=settings.jobs.lease_seconds,
        poll_seconds=settings.jobs.poll_seconds,
        stall_seconds=settings.jobs.stall_seconds,
        max_seconds=settings.jobs.max_seconds,
        on_report=record_ingest,
        on_sync=record_sync,
        scheduler=scheduler,
    )
    app.state.jobs = store
    app.state.address_policy = policy
    app.state.job_queue = JobQueue(
        store,
        uploads=uploads,
        queue_size=settings.jobs.queue_size,
        per_owner=settings.jobs.per_key,
        on_submit=runner.wake,
    )
    sweeper = Sweeper(synopsis, store, uploads=uploads)  # retention, in every process
    sweeper.start()
    try:
        if settings.jobs.workers < 1:  # an API-only process: other processes run the jobs
            yield
            return
        runner.start()
        try:
            yield
        finally:
            await asyncio.to_thread(runner.stop)
    finally:
        await asyncio.to_thread(sweeper.stop)
