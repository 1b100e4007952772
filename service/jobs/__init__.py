"""Ingest jobs of the HTTP API: durable records in Weaviate, a bounded queue, and a
runner per service process that claims each job once (see `service.jobs.runner`)."""

from service.jobs.queue import JobQueue, NewFile
from service.jobs.records import ACTIVE_STATES, JOB_STATES, Job, JobFile, JobProgress, JobSpec
from service.jobs.runner import JobRunner
from service.jobs.store import JobStore

__all__ = [
    "ACTIVE_STATES",
    "JOB_STATES",
    "Job",
    "JobFile",
    "JobProgress",
    "JobQueue",
    "JobRunner",
    "JobSpec",
    "JobStore",
    "NewFile",
]
