"""Jobs of the HTTP API (ingests, syncs of registered sources): durable records in
Weaviate, a bounded queue, a runner per service process that claims each job once (see
`service.jobs.runner`), and the scheduler that queues due syncs (`service.jobs.schedule`)."""

from service.jobs.queue import JobQueue, NewFile
from service.jobs.records import ACTIVE_STATES, JOB_STATES, Job, JobFile, JobProgress, JobSpec
from service.jobs.runner import JobRunner
from service.jobs.schedule import SCHEDULE_OWNER, SyncScheduler
from service.jobs.store import JobStore

__all__ = [
    "ACTIVE_STATES",
    "JOB_STATES",
    "SCHEDULE_OWNER",
    "Job",
    "JobFile",
    "JobProgress",
    "JobQueue",
    "JobRunner",
    "JobSpec",
    "JobStore",
    "NewFile",
    "SyncScheduler",
]
