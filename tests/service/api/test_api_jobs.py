"""Ingest over HTTP on the real stack: jobs to `done`, uploads of every format, cancel,
retry, a restart mid-job, the claim that one worker wins, and the queue's limits.

Every test talks to a real Weaviate and Ollama through the app (Litestar's TestClient
runs the lifespan, so the job runner is the real one, in this process). Summaries only
need to exist here (`cheap_settings`). A cancel or a restart lands at a known point: the
job holds after its first summary (`tests/service/holds.py`). Collections are prefixed
`TestApiJobs` and dropped before each test.
"""

from __future__ import annotations

import datetime as dt
import http.server
import json
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from service.api import create_app
from service.connections import connect_weaviate
from service.errors import QueueFullError
from service.index.records import now
from service.index.store import Store
from service.jobs import Job, JobQueue, JobRunner, JobSpec, JobStore
from service.settings import Settings
from service.synopsis import Synopsis
from tests.loaders.pdfs import sample_pdf
from tests.loaders.test_docx import write_docx
from tests.service.holds import summaries_held
from tests.service.serving import IN_PROCESS_URL
from tests.support.cli import cli
from tests.support.documents import six_sections_markdown
from tests.support.invariants import assert_invariants, census

pytestmark = pytest.mark.integration

PREFIX = "TestApiJobs"
TUTORIAL = Path("/usr/share/doc/python3.11/html/tutorial")
SOURCES_TXT = Path("/usr/share/doc/python3.11/html/_sources/tutorial")
README = Path(__file__).parents[2] / "loaders" / "fixtures" / "readme.md"
WRITE = {"Authorization": "Bearer write-key-1"}
READ = {"Authorization": "Bearer read-key-1"}
FINAL = {"done", "failed", "cancelled", "interrupted"}


@pytest.fixture
def jobs_settings(cheap_settings: Settings, tmp_path: Path) -> Iterator[Settings]:
    """Test collections, fast polling and a short lease; keys; loopback allowed."""
    configured = cheap_settings.with_overrides(
        collection_prefix=PREFIX,
        summary_timeout=max(cheap_settings.summaries.timeout, 600.0),
        jobs_poll_seconds=0.2,
        jobs_lease_seconds=3.0,
        api_read_keys="read-key-1",
        api_write_keys="write-key-1",
        fetch_allow="127.0.0.1",
    )
    client = connect_weaviate(configured)
    try:
        Store(client, prefix=PREFIX).drop()
        JobStore(client, prefix=PREFIX).drop()
        yield configured
        Store(client, prefix=PREFIX).drop()
        JobStore(client, prefix=PREFIX).drop()
    finally:
        client.close()


def _wait(client: TestClient[Any], job_id: str, states: set[str], *, timeout: float = 900) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        job = client.get(f"/jobs/{job_id}", headers=WRITE).json()
        if job["state"] in states:
            return job
        assert time.monotonic() < deadline, f"job still {job['state']}: {job}"
        time.sleep(0.3)


def _files(tmp_path: Path) -> list[tuple[str, tuple[str, bytes]]]:
    """One small real document in each format the loaders read."""
    docx = write_docx(tmp_path / "widget.docx")
    return [
        ("files", ("readme.md", README.read_bytes())),
        ("files", ("interactive.txt", (SOURCES_TXT / "interactive.rst.txt").read_bytes())),
        ("files", ("whatnow.html", (TUTORIAL / "whatnow.html").read_bytes())),
        ("files", ("sample.pdf", sample_pdf())),
        ("files", ("widget.docx", docx.read_bytes())),
    ]


def test_an_upload_with_a_version_labels_its_chunks(jobs_settings: Settings) -> None:
    """A multipart upload's text field `version` labels every chunk the job writes."""
    upload = {"files": ("guide.md", b"# Guide\n\nInstall the widget with pip.\n")}
    with TestClient(create_app(jobs_settings), base_url=IN_PROCESS_URL) as client:
        response = client.post("/documents", files=upload, data={"version": "2.0"}, headers=WRITE)
        assert response.status_code == 202, response.text
        assert response.json()["request"]["version"] == "2.0"
        job = _wait(client, response.json()["id"], FINAL)
        assert job["state"] == "done", job
        [listed] = client.get("/documents", headers=READ).json()
        assert (listed["source"], listed["version"]) == ("guide.md", "2.0")
        chunks = client.get("/documents/guide.md", headers=READ).json()["chunks"]
        assert {chunk["version"] for chunk in chunks} == {"2.0"}


def test_an_upload_of_every_format_runs_to_done_and_searches_like_the_cli(
    jobs_settings: Settings, tmp_path: Path
) -> None:
    with TestClient(create_app(jobs_settings), base_url=IN_PROCESS_URL) as client:
        response = client.post("/documents", files=_files(tmp_path), headers=WRITE)
        assert response.status_code == 202, response.text
        job_id = response.json()["id"]
        assert response.headers["location"] == f"/jobs/{job_id}"
        assert response.json()["state"] in ("queued", "running")

        job = _wait(client, job_id, FINAL)
        assert job["state"] == "done", job
        assert job["errors"] == []
        sources = ["readme.md", "interactive.txt", "whatnow.html", "sample.pdf", "widget.docx"]
        assert sorted(job["sources"]) == sorted(sources)
        progress = job["progress"]
        assert progress["sources_loaded"] == 5
        assert progress["summarized"] == progress["summaries_total"] > 0
        # The guard's retries are LLM calls too.
        assert job["report"]["llm_calls"] >= progress["summarized"]
        assert job["report"]["new_chunks"] == progress["chunks"] > 5
        # The files are kept only until the job is done.
        assert not (jobs_settings.stack.data_dir / "uploads" / job_id).exists()

        listed = {item["source"]: item for item in client.get("/documents", headers=READ).json()}
        assert sorted(listed) == sorted(sources)
        assert {item["last_job"] for item in listed.values()} == {job_id}
        assert {item["status"] for item in listed.values()} == {"complete"}

        detail = client.get("/documents/whatnow.html", headers=READ, params={"limit": 2})
        assert detail.status_code == 200
        page = detail.json()
        assert page["total"] == listed["whatnow.html"]["chunks"]
        assert [chunk["chunk_index"] for chunk in page["chunks"]] == [0, 1]
        assert all(chunk["summary"] for chunk in page["chunks"])
        # Each says what it is: generated by the configured model, or extractive.
        assert {(chunk["summary_kind"], chunk["summary_model"]) for chunk in page["chunks"]} <= {
            ("generated", jobs_settings.models.chat_model),
            ("extractive", None),
        }
        pdf = client.get("/documents/sample.pdf", headers=READ).json()
        assert pdf["chunks"][0]["page_start"] == 1

        query = "where can I find more Python documentation after the tutorial?"
        hits = client.post("/search", json={"query": query, "k": 5}, headers=READ).json()
        code, out, err = cli(jobs_settings, "search", query, "--k", "5", "--json")
        assert code == 0, err
        assert [hit["id"] for hit in hits] == [hit["id"] for hit in json.loads(out)]
        # Which page ranks first, judged on the chunks alone (the summaries here are short
        # ones by the smallest model, and no test reads their wording).
        by_text = {"query": query, "k": 1, "mode": "originals"}
        [first] = client.post("/search", json=by_text, headers=READ).json()
        assert first["source"] == "whatnow.html"

        synopsis: Synopsis = client.app.state.synopsis
        assert_invariants(synopsis.store)

        deleted = client.delete("/documents/readme.md", headers=WRITE)
        assert deleted.status_code == 200
        assert client.get("/documents/readme.md", headers=READ).status_code == 404


def test_inline_content_and_a_url_are_ingested_and_a_refused_url_is_never_queued(
    jobs_settings: Settings,
) -> None:
    hits: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(TUTORIAL), **kwargs)

        def do_GET(self) -> None:
            hits.append(self.path)
            super().do_GET()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    url = f"http://127.0.0.1:{server.server_port}/interactive.html"
    try:
        with TestClient(create_app(jobs_settings), base_url=IN_PROCESS_URL) as client:
            content = (SOURCES_TXT / "interactive.rst.txt").read_text(encoding="utf-8")
            inline = client.post(
                "/documents",
                json={
                    "content": content,
                    "format": "text",
                    "source": "notes/interactive.txt",
                    "title": "Interactive mode notes",
                },
                headers=WRITE,
            )
            by_url = client.post("/documents", json={"url": url}, headers=WRITE)
            assert (inline.status_code, by_url.status_code) == (202, 202)
            for response in (inline, by_url):
                assert _wait(client, response.json()["id"], FINAL)["state"] == "done"
            documents = client.get("/documents", headers=READ).json()
            listed = {item["source"]: item for item in documents}
            assert listed["notes/interactive.txt"]["title"] == "Interactive mode notes"
            assert url in listed
            assert "/interactive.html" in hits

            before = len(hits)
            refused = client.post(
                "/documents", json={"url": "http://10.0.0.1/docs/"}, headers=WRITE
            )
            assert refused.status_code == 400
            assert "10.0.0.1" in refused.json()["detail"]
            jobs = client.get("/jobs", headers=WRITE).json()
            assert jobs["total"] == 2
            assert len(hits) == before
    finally:
        server.shutdown()
        server.server_close()


def _upload_six(name: str = "guide.md") -> list[tuple[str, tuple[str, bytes]]]:
    return [("files", (name, six_sections_markdown().encode()))]


class Ticks:
    """Counts the rounds in which job runners looked at their own running jobs."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = threading.Condition()

    def wait_beyond(self, seen: int, rounds: int, timeout: float = 30.0) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.count >= seen + rounds, timeout)


@pytest.fixture
def runner_ticks(monkeypatch: pytest.MonkeyPatch) -> Ticks:
    """Counts every round of every job runner's look at its running jobs (`_watch_own`,
    where a cancel request is seen)."""
    ticks = Ticks()
    watch = JobRunner._watch_own

    def counted(self: JobRunner) -> None:
        watch(self)
        with ticks.changed:
            ticks.count += 1
            ticks.changed.notify_all()

    monkeypatch.setattr(JobRunner, "_watch_own", counted)
    return ticks


def test_a_running_job_cancels_cleanly_and_a_retry_converges(
    jobs_settings: Settings, monkeypatch: pytest.MonkeyPatch, runner_ticks: Ticks
) -> None:
    one_job_per_key = jobs_settings.with_overrides(jobs_per_key=1)
    with (
        summaries_held(monkeypatch, after=1) as hold,
        TestClient(create_app(one_job_per_key), base_url=IN_PROCESS_URL) as client,
    ):
        job_id = client.post("/documents", files=_upload_six(), headers=WRITE).json()["id"]
        hold.wait_reached()  # one summary written, five pending
        second = client.post("/documents", files=_upload_six("other.md"), headers=WRITE)
        assert second.status_code == 429
        assert int(second.headers["retry-after"]) > 0
        seen = runner_ticks.count
        asked = client.delete(f"/jobs/{job_id}", headers=WRITE)
        assert asked.status_code == 200
        assert asked.json()["cancel_requested"] is True
        # A whole round of the runner after the request: it has told the job to stop,
        # which the job does at its next summary.
        runner_ticks.wait_beyond(seen, rounds=2)
        hold.release()
        job = _wait(client, job_id, FINAL)
        assert job["state"] == "cancelled"
        assert job["progress"]["summarized"] < job["progress"]["summaries_total"] == 6
        synopsis: Synopsis = client.app.state.synopsis
        assert_invariants_so_far(synopsis.store)
        assert client.delete(f"/jobs/{job_id}", headers=WRITE).status_code == 409

        retried = client.post(f"/jobs/{job_id}/retry", headers=WRITE)
        assert retried.status_code == 202
        assert retried.json()["attempt"] == 2
        job = _wait(client, job_id, FINAL)
        assert job["state"] == "done", job
        found = assert_invariants(synopsis.store)
        assert dict(found.originals) == dict(found.summaries) == {"guide.md": 6}
        assert client.post(f"/jobs/{job_id}/retry", headers=WRITE).status_code == 409


def assert_invariants_so_far(store: Store) -> None:
    """After a stop mid-ingest: no summary without its original, nothing twice (chunks
    still waiting for their summary are allowed)."""
    found = census(store)
    assert found.dangling_summaries == []
    assert found.duplicate_chunks == []
    assert set(found.originals_without_one_summary.values()) <= {0}


def test_a_restart_during_a_job_leaves_it_interrupted_and_a_retry_finishes_it(
    jobs_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    with summaries_held(monkeypatch, after=1) as hold:
        with TestClient(create_app(jobs_settings), base_url=IN_PROCESS_URL) as client:
            job_id = client.post("/documents", files=_upload_six(), headers=WRITE).json()["id"]
            hold.wait_reached()  # one summary written, five pending
        # The service stopped: the job says so at once, and its upload is kept for a retry.
        assert (jobs_settings.stack.data_dir / "uploads" / job_id).is_dir()
    with TestClient(create_app(jobs_settings), base_url=IN_PROCESS_URL) as client:
        job = client.get(f"/jobs/{job_id}", headers=WRITE).json()
        assert job["state"] == "interrupted"
        assert "stopped" in job["reason"]
        assert client.post(f"/jobs/{job_id}/retry", headers=WRITE).status_code == 202
        job = _wait(client, job_id, FINAL)
        assert job["state"] == "done", job
        assert_invariants(client.app.state.synopsis.store)


def test_a_job_whose_worker_died_is_found_by_its_stale_heartbeat(
    jobs_settings: Settings,
) -> None:
    weaviate = connect_weaviate(jobs_settings)
    try:
        store = JobStore(weaviate, prefix=PREFIX)
        store.ensure_schema()
        beat = now() - dt.timedelta(seconds=60)
        dead = Job(
            id=str(uuid.uuid4()),
            state="running",
            owner="anonymous",
            spec=JobSpec(kind="url", url="http://127.0.0.1:9/"),
            created_at=beat,
            worker="worker-killed",
            started_at=beat,
            heartbeat_at=beat,
        )
        store.create(dead)
        runner = JobRunner(
            _NoSynopsis(),  # type: ignore[arg-type]  # never runs a job: nothing is queued
            store,
            uploads=jobs_settings.stack.data_dir / "uploads",
            options=lambda: None,  # type: ignore[arg-type,return-value]
            lease_seconds=jobs_settings.jobs.lease_seconds,
        )
        runner.tick()
        found = store.get(dead.id)
        assert found is not None
        assert found.state == "interrupted"
        assert "worker-killed" in found.reason
        assert "no heartbeat for 60 s" in found.reason
    finally:
        weaviate.close()


class _NoSynopsis:
    pass


def test_of_many_workers_claiming_one_job_exactly_one_wins(jobs_settings: Settings) -> None:
    clients = [connect_weaviate(jobs_settings) for _ in range(4)]
    try:
        stores = [JobStore(client, prefix=PREFIX) for client in clients]
        stores[0].ensure_schema()
        for _ in range(5):
            job = Job(
                id=str(uuid.uuid4()),
                state="queued",
                owner="anonymous",
                spec=JobSpec(kind="url", url="http://127.0.0.1:9/"),
                created_at=now(),
            )
            stores[0].create(job)
            with ThreadPoolExecutor(max_workers=4) as pool:
                claims = [
                    pool.submit(store.claim, job, worker=f"w{index}")
                    for index, store in enumerate(stores)
                ]
                won = [claim.result() for claim in claims]
            assert won.count(True) == 1, won
            stored = stores[0].get(job.id)
            assert stored is not None
            assert (stored.state, stored.worker) == ("running", f"w{won.index(True)}")
    finally:
        for client in clients:
            client.close()


def test_a_full_queue_and_a_keys_share_are_refused_with_retry_after(
    jobs_settings: Settings, tmp_path: Path
) -> None:
    weaviate = connect_weaviate(jobs_settings)
    try:
        store = JobStore(weaviate, prefix=PREFIX)
        store.ensure_schema()
        queue = JobQueue(store, uploads=tmp_path, queue_size=2, per_owner=1)
        queue.submit_url("key:a", "http://127.0.0.1:9/", crawl_depth=0, max_pages=1)
        with pytest.raises(QueueFullError, match="SYNOPSIS_JOBS_PER_KEY=1") as per_key:
            queue.submit_url("key:a", "http://127.0.0.1:9/", crawl_depth=0, max_pages=1)
        assert per_key.value.retry_after > 0
        queue.submit_url("key:b", "http://127.0.0.1:9/", crawl_depth=0, max_pages=1)
        with pytest.raises(QueueFullError, match="SYNOPSIS_JOBS_QUEUE_SIZE=2"):
            queue.submit_url("key:c", "http://127.0.0.1:9/", crawl_depth=0, max_pages=1)
        # Each key sees its own jobs only.
        jobs, total = queue.recent("key:b", limit=10, offset=0)
        assert (total, [job.owner for job in jobs]) == (1, ["key:b"])
    finally:
        weaviate.close()
