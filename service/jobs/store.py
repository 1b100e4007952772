"""Durable job state in Weaviate, beside the source records.

Collections (names may carry `Settings.external.collection_prefix`):

- `IngestJobs`: one object per job (id = the job id); spec, progress, report and errors
  are JSON text, the rest plain properties that filters and sorting use.
- `JobClaims`: one object per claimed attempt, id = uuid5(job id, attempt). Weaviate
  refuses to insert an object whose id exists (HTTP 422), which makes the insert a
  claim that only one worker wins. Two inserts at the very same moment can both pass
  Weaviate's existence check; the last write wins, so a claimant reads the claim back
  after the replication's settle time (`Settings.external.lease_settle_seconds`,
  `CLAIM_SETTLE_SECONDS` by default) and goes on only if it is still its own.

Weaviate has no transactions: every other change is a single-object update, and the
states a job moves through (`service.jobs.records`) are such that a lost race is
harmless (a cancel that comes as the job ends leaves it `done`).
"""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from collections.abc import Sequence
from typing import Any

import weaviate
from weaviate.classes.config import DataType, Property, Tokenization
from weaviate.classes.query import Filter, Sort
from weaviate.collections import Collection
from weaviate.exceptions import UnexpectedStatusCodeError

from service.index.identity import NAMESPACE
from service.index.leases import LeaseStore
from service.index.records import now
from service.index.replication import SETTLE_SECONDS, ReplicatedCollections, Replication
from service.index.schema import (
    create_records,
    delete_collections,
    ensure_collection,
    keyword_property,
    stored_text,
)
from service.index.slots import Slots
from service.jobs.records import ACTIVE_STATES, JOB_STATES, Job, JobProgress, JobSpec, JobState

__all__ = ["CLAIM_SETTLE_SECONDS", "JobStore"]

#: How long a claimant waits before it reads its claim back by default (see the module
#: docstring).
CLAIM_SETTLE_SECONDS = SETTLE_SECONDS
_LIST_LIMIT = 1_000


class JobStore(ReplicatedCollections):
    """Reads and writes jobs and their claims through one Weaviate client."""

    def __init__(
        self,
        client: weaviate.WeaviateClient,
        *,
        prefix: str = "",
        replication: Replication | None = None,
    ) -> None:
        super().__init__(client, prefix=prefix, replication=replication)
        self.jobs_name = f"{prefix}IngestJobs"
        self.claims_name = f"{prefix}JobClaims"
        # A key's share of the queue: one slot per queued or running job (`reserve`).
        self.leases = LeaseStore(client, prefix=prefix, replication=self.replication)

    # Reads at the read consistency level, writes at the write level (a claim written and
    # read back at QUORUM each overlaps in at least one replica).
    @property
    def jobs(self) -> Collection[Any, Any]:
        return self._readable(self.jobs_name)

    @property
    def claims(self) -> Collection[Any, Any]:
        return self._readable(self.claims_name)

    def ensure_schema(self) -> None:
        """Create both collections unless they exist (safe when several processes do it at
        once, as the workers of `synopsis serve --workers N` do at startup)."""
        ensure_collection(self.client, self.jobs_name, self._create_jobs)
        ensure_collection(self.client, self.claims_name, self._create_claims)

    def _create_jobs(self) -> None:
        create_records(
            self.client,
            self.jobs_name,
            description="Synopsis: ingest jobs of the HTTP API",
            replication=self.replication,
            properties=[
                keyword_property("job_id"),
                keyword_property("state"),
                keyword_property("owner"),
                keyword_property("worker"),
                keyword_property("kind"),
                Property(
                    name="sources", data_type=DataType.TEXT_ARRAY, tokenization=Tokenization.FIELD
                ),
                stored_text("spec"),
                stored_text("progress"),
                stored_text("report"),
                stored_text("errors"),
                stored_text("reason"),
                Property(name="attempt", data_type=DataType.INT),
                Property(name="cancel_requested", data_type=DataType.BOOL),
                Property(name="created_at", data_type=DataType.DATE),
                Property(name="started_at", data_type=DataType.DATE),
                Property(name="finished_at", data_type=DataType.DATE),
                Property(name="heartbeat_at", data_type=DataType.DATE),
            ],
        )

    def _create_claims(self) -> None:
        create_records(
            self.client,
            self.claims_name,
            description="Synopsis: one object per claimed job attempt",
            replication=self.replication,
            properties=[keyword_property("job_id"), keyword_property("worker")],
        )

    def drop(self) -> None:
        """Delete both collections and the leases (tests and explicit resets only)."""
        delete_collections(self.client, [self.jobs_name, self.claims_name])
        self.leases.drop()

    def delete(self, job_id: str) -> None:
        """Remove a job and the claims of its attempts (retention only)."""
        self._writable(self.jobs_name).data.delete_by_id(uuid.UUID(job_id))
        self._writable(self.claims_name).data.delete_many(
            where=Filter.by_property("job_id").equal(job_id)
        )
        self.release(job_id)

    def ended_before(
        self, cutoff: dt.datetime, states: Sequence[JobState], *, limit: int = _LIST_LIMIT
    ) -> list[Job]:
        """Jobs in any of `states` that ended before `cutoff`, oldest first."""
        result = self.jobs.query.fetch_objects(
            filters=Filter.by_property("state").contains_any(list(states))
            & Filter.by_property("finished_at").less_than(cutoff),
            sort=Sort.by_property("finished_at", ascending=True),
            limit=limit,
        )
        return [_job(found.properties) for found in result.objects]

    def remove_spent_claims(self) -> int:
        """Delete the claims that can decide nothing any more: of jobs that are gone or no
        longer queued, and of earlier attempts of queued ones; how many."""
        spent: list[uuid.UUID] = []
        jobs: dict[str, Job | None] = {}
        for claim in self.claims.iterator(return_properties=["job_id"]):
            job_id = str(claim.properties["job_id"])
            if job_id not in jobs:
                jobs[job_id] = self.get(job_id)
            job = jobs[job_id]
            if job is None or job.state != "queued" or claim.uuid != _claim_id(job):
                spent.append(claim.uuid)
        deleted = 0
        for start in range(0, len(spent), 500):
            result = self._writable(self.claims_name).data.delete_many(
                where=Filter.by_id().contains_any(spent[start : start + 500])
            )
            deleted += int(result.successful)
        return deleted

    # -- a key's share ------------------------------------------------------------------

    def reserve(self, owner: str, job_id: str, *, limit: int) -> bool:
        """One of `owner`'s `limit` slots for job `job_id`, taken atomically across
        processes; False when `owner` has `limit` queued or running jobs."""
        return Slots(self.leases, kind="jobs", limit=limit).take(owner, job_id)

    def release(self, job_id: str) -> None:
        """Give back job `job_id`'s slot (once it is no longer queued or running)."""
        self.leases.release_held(job_id, kind="jobs")

    def slot_holders(self, *, taken_before: dt.datetime) -> list[str]:
        """The job ids that hold a slot taken before `taken_before`."""
        return self.leases.holders("jobs", taken_before=taken_before)

    # -- writes -------------------------------------------------------------------------

    def create(self, job: Job) -> None:
        """Store a new job."""
        self._writable(self.jobs_name).data.insert(
            uuid=uuid.UUID(job.id), properties=_properties(job)
        )

    def create_once(self, job: Job) -> bool:
        """Store a new job unless one with its id exists; False then. Jobs whose id is
        derived from what they do (a scheduled sync's slot) are so created once, however
        many processes create them: the claim's mechanism, for a job (two inserts at the
        very same moment may both pass, and then write the same job)."""
        try:
            self.create(job)
        except UnexpectedStatusCodeError as exc:
            if exc.status_code == 422 and "already exists" in exc.message:
                return False
            raise
        return True

    def replace(self, job: Job) -> None:
        """Store `job` over its previous version (fields it leaves unset are cleared)."""
        self._writable(self.jobs_name).data.replace(
            uuid=uuid.UUID(job.id), properties=_properties(job)
        )

    def update(self, job_id: str, **changes: Any) -> None:
        """Change some fields of a job (names as in `Job`; progress/report/errors encoded)."""
        self._writable(self.jobs_name).data.update(
            uuid=uuid.UUID(job_id), properties=_encode(changes)
        )

    def finish(self, job_id: str, *, attempt: int, worker: str, **changes: Any) -> bool:
        """Write a final state (`changes`) over `attempt` of the job run by `worker` only:
        False, and nothing written, when the job is no longer running that attempt there
        (another process gave it up, and it may have been retried and claimed since).

        Weaviate has no conditional write, so this reads, then writes: an attempt's end
        can still cross a change in the one round trip between the two, where before it
        could cross one at any time in the whole job.
        """
        current = self.get(job_id)
        if (
            current is None
            or current.state != "running"
            or current.attempt != attempt
            or current.worker != worker
        ):
            return False
        self.update(job_id, **changes)
        if changes.get("state") not in ACTIVE_STATES:
            self.release(job_id)
        return True

    def claim(self, job: Job, *, worker: str) -> bool:
        """Take `job`'s current attempt for `worker`; False when another worker has it."""
        claim_id = _claim_id(job)
        try:
            self.claims.data.insert(uuid=claim_id, properties={"job_id": job.id, "worker": worker})
        except UnexpectedStatusCodeError as exc:
            if exc.status_code == 422:
                return False  # already claimed
            raise
        time.sleep(self.replication.settle_seconds)
        stored = self.claims.query.fetch_object_by_id(claim_id)
        if stored is None or stored.properties.get("worker") != worker:
            return False
        current = self.get(job.id)
        if current is None or current.state != "queued" or current.attempt != job.attempt:
            return False  # cancelled (or retried) meanwhile
        stamp = now()
        self.update(job.id, state="running", worker=worker, started_at=stamp, heartbeat_at=stamp)
        return True

    # -- reads --------------------------------------------------------------------------

    def get(self, job_id: str) -> Job | None:
        """The job with this id, if any."""
        try:
            object_id = uuid.UUID(job_id)
        except ValueError:
            return None
        found = self.jobs.query.fetch_object_by_id(object_id)
        return None if found is None else _job(found.properties)

    def recent(self, *, owner: str | None = None, limit: int = 20, offset: int = 0) -> list[Job]:
        """Jobs, newest first; only `owner`'s when given."""
        result = self.jobs.query.fetch_objects(
            filters=None if owner is None else Filter.by_property("owner").equal(owner),
            sort=Sort.by_property("created_at", ascending=False),
            limit=limit,
            offset=offset,
        )
        return [_job(found.properties) for found in result.objects]

    def in_states(self, states: Sequence[JobState], *, oldest_first: bool = True) -> list[Job]:
        """Jobs in any of `states` (at most 1,000), oldest first by default."""
        result = self.jobs.query.fetch_objects(
            filters=Filter.by_property("state").contains_any(list(states)),
            sort=Sort.by_property("created_at", ascending=oldest_first),
            limit=_LIST_LIMIT,
        )
        return [_job(found.properties) for found in result.objects]

    def count(self, states: Sequence[JobState], *, owner: str | None = None) -> int:
        """How many jobs are in any of `states` (only `owner`'s when given)."""
        where = Filter.by_property("state").contains_any(list(states))
        if owner is not None:
            where = where & Filter.by_property("owner").equal(owner)
        result = self.jobs.aggregate.over_all(filters=where, total_count=True)
        return result.total_count or 0

    def total(self, *, owner: str | None = None) -> int:
        """How many jobs there are (only `owner`'s when given)."""
        result = self.jobs.aggregate.over_all(
            filters=None if owner is None else Filter.by_property("owner").equal(owner),
            total_count=True,
        )
        return result.total_count or 0

    def counts_by_state(self) -> dict[str, int]:
        """Jobs per state, every state present (for metrics)."""
        counts: dict[str, int] = dict.fromkeys(JOB_STATES, 0)
        grouped = self.jobs.aggregate.over_all(group_by="state", total_count=True)
        for group in grouped.groups:
            counts[str(group.grouped_by.value)] = group.total_count or 0
        return counts

    def last_jobs(self, sources: Sequence[str]) -> dict[str, str]:
        """The newest job id that wrote each of `sources` (those written by a job)."""
        if not sources:
            return {}
        result = self.jobs.query.fetch_objects(
            filters=Filter.by_property("sources").contains_any(list(sources)),
            sort=Sort.by_property("created_at", ascending=False),
            limit=_LIST_LIMIT,
            return_properties=["job_id", "sources"],
        )
        wanted = set(sources)
        last: dict[str, str] = {}
        for found in result.objects:
            for source in found.properties.get("sources") or []:
                if source in wanted and source not in last:
                    last[source] = str(found.properties["job_id"])
        return last


def _claim_id(job: Job) -> uuid.UUID:
    """The id of the claim of `job`'s current attempt."""
    return uuid.uuid5(NAMESPACE, f"job-claim\n{job.id}\n{job.attempt}")


def _properties(job: Job) -> dict[str, Any]:
    return {
        "job_id": job.id,
        "kind": job.spec.kind,
        "spec": job.spec.to_json(),
        **_encode(
            {
                "state": job.state,
                "owner": job.owner,
                "worker": job.worker,
                "sources": job.sources,
                "progress": job.progress,
                "report": job.report,
                "errors": job.errors,
                "reason": job.reason,
                "attempt": job.attempt,
                "cancel_requested": job.cancel_requested,
                "created_at": job.created_at,
                "started_at": job.started_at,
                "finished_at": job.finished_at,
                "heartbeat_at": job.heartbeat_at,
            }
        ),
    }


def _encode(changes: dict[str, Any]) -> dict[str, Any]:
    encoded: dict[str, Any] = {}
    for name, value in changes.items():
        if name == "progress":
            encoded[name] = json.dumps(value.to_dict() if isinstance(value, JobProgress) else value)
        elif name in ("report", "errors"):
            encoded[name] = json.dumps(value)
        elif value is None:
            continue  # Weaviate keeps no nulls: an unset date stays absent
        else:
            encoded[name] = value
    return encoded


def _date(value: object) -> dt.datetime | None:
    return value if isinstance(value, dt.datetime) else None


def _job(props: dict[str, Any]) -> Job:
    created = _date(props.get("created_at"))
    return Job(
        id=str(props["job_id"]),
        state=props["state"],
        owner=str(props.get("owner") or ""),
        spec=JobSpec.from_json(str(props["spec"])),
        created_at=created or now(),
        progress=JobProgress.from_dict(json.loads(props.get("progress") or "{}")),
        report=json.loads(props.get("report") or "{}"),
        errors=list(json.loads(props.get("errors") or "[]")),
        sources=list(props.get("sources") or []),
        reason=str(props.get("reason") or ""),
        attempt=int(props.get("attempt") or 1),
        worker=str(props.get("worker") or ""),
        cancel_requested=bool(props.get("cancel_requested")),
        started_at=_date(props.get("started_at")),
        finished_at=_date(props.get("finished_at")),
        heartbeat_at=_date(props.get("heartbeat_at")),
    )
