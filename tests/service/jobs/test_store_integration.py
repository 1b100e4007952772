"""The job store on the real Weaviate: a job written and read back, claimed once, its
final state written only over the attempt that runs, listed by state, and deleted."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from service.connections import connect_weaviate
from service.index.records import now
from service.jobs.records import Job, JobSpec
from service.jobs.store import JobStore
from service.settings import Settings

pytestmark = pytest.mark.integration

PREFIX = "TestJobStore"


@pytest.fixture
def store(settings: Settings) -> Iterator[JobStore]:
    client = connect_weaviate(settings)
    jobs = JobStore(client, prefix=PREFIX)
    jobs.ensure_schema()
    jobs.drop()
    jobs.ensure_schema()
    try:
        yield jobs
    finally:
        jobs.drop()
        client.close()


def _queued(url: str = "https://docs.example.org/") -> Job:
    return Job(
        id=str(uuid.uuid4()),
        state="queued",
        owner="key-a",
        spec=JobSpec(kind="url", url=url, crawl_depth=1, version="2.0"),
        created_at=now(),
    )


def test_a_job_is_read_back_claimed_once_and_finished_over_its_attempt(store: JobStore) -> None:
    job = _queued()
    store.create(job)
    found = store.get(job.id)
    assert found is not None
    assert (found.state, found.owner, found.spec, found.attempt) == ("queued", "key-a", job.spec, 1)
    assert [j.id for j in store.in_states(["queued"])] == [job.id]

    assert store.claim(job, worker="worker-1")
    assert not store.claim(job, worker="worker-2")  # the attempt is taken
    running = store.get(job.id)
    assert running is not None
    assert (running.state, running.worker) == ("running", "worker-1")
    assert running.started_at is not None

    # Only the attempt's own worker writes its end.
    assert not store.finish(job.id, attempt=1, worker="worker-2", state="done")
    assert not store.finish(job.id, attempt=2, worker="worker-1", state="done")
    assert store.finish(job.id, attempt=1, worker="worker-1", state="done", reason="")
    done = store.get(job.id)
    assert done is not None
    assert done.state == "done"
    assert store.counts_by_state().get("done") == 1

    store.delete(job.id)
    assert store.get(job.id) is None


def test_a_job_is_created_once_for_its_id(store: JobStore) -> None:
    job = _queued()
    assert store.create_once(job)
    assert not store.create_once(job)
    assert store.total() == 1
