"""Retention and per-key caps on the real Weaviate: the sweep removes what the settings no
longer keep and nothing else; a key's share of jobs and of conversations holds when its
requests arrive together, and a key at its share is refused before its upload is read.

No model is called: jobs, conversations, leases and records are written directly, with
dates in the past where a test needs them old.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import os
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from litestar.testing import TestClient

from service.api import create_app
from service.conversations import Conversation, ConversationStore
from service.errors import ConversationLimitError
from service.index.records import SourceRecord, now
from service.jobs import Job, JobFile, JobSpec, JobStore
from service.jobs.runner import upload_dir
from service.jobs.store import _claim_id
from service.retention import Sweeper, SweepReport
from service.settings import Settings
from service.synopsis import Synopsis
from tests.service.serving import IN_PROCESS_URL

pytestmark = pytest.mark.integration

PREFIX = "TestRetention"
WRITE = {"Authorization": "Bearer retention-write-key"}


@pytest.fixture
def configured(settings: Settings) -> Settings:
    return settings.with_overrides(
        collection_prefix=PREFIX,
        jobs_workers=0,  # jobs stay queued: nothing runs them
        api_write_keys="retention-write-key",
    )


@pytest.fixture
def synopsis(configured: Settings) -> Iterator[Synopsis]:
    opened = Synopsis.open(configured)
    jobs = JobStore(opened.client, prefix=PREFIX)
    try:
        opened.store.drop()
        jobs.drop()
        opened.conversations.drop()
        jobs.ensure_schema()
        yield opened
    finally:
        opened.store.drop()
        jobs.drop()
        opened.conversations.drop()
        opened.close()


def _job(jobs: JobStore, state: str, *, ended_days_ago: float | None = None) -> Job:
    job_id = str(uuid.uuid4())
    spec = JobSpec(kind="files", files=(JobFile(path="x", source="a.md", content_type="x"),))
    ended = now() - dt.timedelta(days=ended_days_ago) if ended_days_ago is not None else None
    job = Job(
        id=job_id,
        state=state,  # type: ignore[arg-type]
        owner="key:a",
        spec=spec,
        created_at=now() - dt.timedelta(days=60),
        finished_at=ended,
    )
    jobs.create(job)
    return job


def _upload(uploads: Path, name: str, *, days_old: float = 0.0) -> Path:
    folder = upload_dir(uploads, name)
    folder.mkdir(parents=True)
    (folder / "000-a.md").write_text("# A\n")
    stamp = (now() - dt.timedelta(days=days_old)).timestamp()
    os.utime(folder, (stamp, stamp))
    return folder


def test_a_sweep_removes_what_retention_no_longer_keeps_and_keeps_the_rest(
    synopsis: Synopsis, tmp_path: Path
) -> None:
    jobs = JobStore(synopsis.client, prefix=PREFIX)
    uploads = tmp_path / "uploads"
    old_done = _job(jobs, "done", ended_days_ago=40)  # past jobs_retention_days (30)
    old_failed = _job(jobs, "failed", ended_days_ago=10)  # past uploads_retention_days (7)
    recent_failed = _job(jobs, "failed", ended_days_ago=1)
    running = _job(jobs, "running")
    queued = _job(jobs, "queued")
    for job in (old_done, old_failed, recent_failed, running):
        _upload(uploads, job.id)
    orphan_old, orphan_new = str(uuid.uuid4()), str(uuid.uuid4())
    _upload(uploads, orphan_old, days_old=10)
    _upload(uploads, orphan_new)
    assert not jobs.claim(recent_failed, worker="w")  # refused (not queued), yet written
    assert jobs.claim(queued, worker="w")  # claims it: the job runs
    jobs.update(queued.id, state="queued")  # back to queued at the same attempt: kept

    conversations = synopsis.conversations
    idle = Conversation(id=str(uuid.uuid4()), owner="key:a", created_at=now(), updated_at=now())
    active = dataclasses.replace(idle, id=str(uuid.uuid4()))
    conversations.create(idle)
    conversations.create(active)
    conversations.save(dataclasses.replace(idle, updated_at=now() - dt.timedelta(days=40)))

    leases = jobs.leases
    assert leases.take("source\nended.md", holder="killed", seconds=-120)
    assert leases.take("source\nheld.md", holder="alive", seconds=4 * 3600)
    assert jobs.reserve("key:a", recent_failed.id, limit=5)  # its end did not give it back
    assert jobs.reserve("key:a", running.id, limit=5)
    assert leases.take(
        "conversations\nkey:a\n9", holder=str(uuid.uuid4()), seconds=1e9, group="x"
    )  # a conversation that was never written

    synopsis.store.ensure_schema(
        embedding_model=synopsis.embedder.model, dimension=synopsis.embedder.dimension()
    )
    record = SourceRecord(
        source="half-deleted.md",
        title="",
        content_hash="h",
        settings_key="k",
        status="deleting",
        chunks=0,
        ingested_at=now(),
    )
    synopsis.store.put_source_record(record)

    # Two hours on: the slots and the ended lease are past their grace.
    report = Sweeper(
        synopsis, jobs, uploads=uploads, clock=lambda: now() + dt.timedelta(hours=2)
    ).sweep()

    assert report == SweepReport(
        jobs=1, uploads=3, claims=1, conversations=1, leases=1, slots=2, deletes=1
    )
    assert jobs.get(old_done.id) is None
    assert [jobs.get(job.id) is not None for job in (old_failed, recent_failed, running)] == [
        True,
        True,
        True,
    ]
    assert sorted(p.name for p in uploads.iterdir()) == sorted(
        [recent_failed.id, running.id, orphan_new]
    )
    remaining = {claim.uuid for claim in jobs.claims.iterator()}
    assert remaining == {_claim_id(queued)}
    assert conversations.get(idle.id) is None
    assert conversations.get(active.id) is not None
    assert leases.holder("source\nended.md") is None
    assert leases.holder("source\nheld.md") == "alive"
    assert jobs.slot_holders(taken_before=now() + dt.timedelta(days=1)) == sorted([running.id])
    assert leases.holders("conversations") == [active.id]
    assert synopsis.store.source_record("half-deleted.md") is None


def test_of_six_reserves_of_one_key_at_once_exactly_its_share_succeed(
    synopsis: Synopsis,
) -> None:
    jobs = JobStore(synopsis.client, prefix=PREFIX)
    start = threading.Barrier(6)

    def reserve(_: int) -> bool:
        start.wait(timeout=30)
        return jobs.reserve("key:a", str(uuid.uuid4()), limit=2)

    with ThreadPoolExecutor(max_workers=6) as pool:
        taken = list(pool.map(reserve, range(6)))
    assert sorted(taken) == [False] * 4 + [True] * 2
    assert jobs.reserve("key:b", str(uuid.uuid4()), limit=2)  # another key's share


def test_of_five_conversations_started_at_once_only_the_keys_share_are_kept(
    synopsis: Synopsis,
) -> None:
    conversations = ConversationStore(synopsis.client, prefix=PREFIX, per_owner=2)
    start = threading.Barrier(5)

    def begin(_: int) -> str:
        started = Conversation(
            id=str(uuid.uuid4()), owner="key:a", created_at=now(), updated_at=now()
        )
        start.wait(timeout=30)
        try:
            conversations.create(started)
        except ConversationLimitError:
            return "refused"
        return "started"

    with ThreadPoolExecutor(max_workers=5) as pool:
        outcomes = sorted(pool.map(begin, range(5)))
    assert outcomes == ["refused"] * 3 + ["started"] * 2


def test_a_key_at_its_share_is_refused_before_its_upload_is_read(
    configured: Settings, synopsis: Synopsis
) -> None:
    settings = configured.with_overrides(jobs_per_key=1)
    app = create_app(settings)
    with TestClient(app, base_url=IN_PROCESS_URL) as client:
        first = client.post(
            "/documents", json={"content": "# A\n\nText.", "source": "a.md"}, headers=WRITE
        )
        assert first.status_code == 202, first.text

        pulled = 0

        async def body() -> AsyncIterator[bytes]:
            nonlocal pulled
            for _ in range(640):  # 40 MiB, if it were read
                pulled += 1
                yield b"x" * 65536

        async def upload() -> httpx.Response:
            transport = httpx.ASGITransport(app=cast(Any, app))
            async with httpx.AsyncClient(transport=transport, base_url=IN_PROCESS_URL) as http:
                return await http.post(
                    "/documents",
                    content=body(),
                    headers={**WRITE, "Content-Type": "multipart/form-data; boundary=b"},
                )

        refused = asyncio.run(upload())
        assert refused.status_code == 429, refused.text
        assert "SYNOPSIS_JOBS_PER_KEY=1" in refused.json()["detail"]
        assert int(refused.headers["retry-after"]) > 0
        assert pulled == 0  # not one part of the body was read

        # Its place comes back when the queued job is cancelled.
        assert client.delete(f"/jobs/{first.json()['id']}", headers=WRITE).status_code == 200
        again = client.post(
            "/documents", json={"content": "# B\n\nText.", "source": "b.md"}, headers=WRITE
        )
        assert again.status_code == 202, again.text


def test_a_key_at_its_conversation_share_gets_429_until_it_deletes_one(
    configured: Settings, synopsis: Synopsis
) -> None:
    settings = configured.with_overrides(conversations_per_key=1)
    with TestClient(create_app(settings), base_url=IN_PROCESS_URL) as client:
        first = client.post("/conversations", headers=WRITE)
        assert first.status_code == 201, first.text
        refused = client.post("/conversations", headers=WRITE)
        assert refused.status_code == 429, refused.text
        assert "SYNOPSIS_CONVERSATIONS_PER_KEY=1" in refused.json()["detail"]
        assert int(refused.headers["retry-after"]) > 0
        deleted = client.delete(f"/conversations/{first.json()['id']}", headers=WRITE)
        assert deleted.status_code == 200
        assert client.post("/conversations", headers=WRITE).status_code == 201
