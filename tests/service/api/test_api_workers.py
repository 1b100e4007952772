"""`synopsis serve --workers 2` on the real stack: every job is claimed and run once.

The server runs as a subprocess (uvicorn's two worker processes, each with its own job
runner polling the same job store); jobs are submitted over HTTP as inline Markdown of one
short section each (one LLM summary apiece). Each job must end `done` at its first
attempt with exactly one claim object in `JobClaims`; which worker ran which job is
printed (two different workers are likely but not required: one may claim every job
while the other is between polls). Then SIGTERM to the server must stop all its
processes. Collections are prefixed `TestApiWorkers` and dropped before and after.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.connections import connect_weaviate
from service.index.store import Store
from service.jobs import JobStore
from service.settings import Settings
from tests.service.serving import free_port, kill_group, start_serve, wait_healthy
from tests.support.models import model_env

pytestmark = pytest.mark.integration

PREFIX = "TestApiWorkers"
WRITE_KEY = "workers-write-key"
READ_KEY = "workers-read-key"
WRITE = {"Authorization": f"Bearer {WRITE_KEY}"}
READ = {"Authorization": f"Bearer {READ_KEY}"}
FINAL = {"done", "failed", "cancelled", "interrupted"}
JOBS = 4
TOPICS = [
    ("Tuples", "A tuple is an immutable sequence: `point = (3, 4)` unpacks as `x, y = point`."),
    ("Sets", "A set holds unique items: `set('abracadabra')` keeps each letter once."),
    ("Dictionaries", "A dict maps keys to values: `d.get('k', 0)` returns 0 when k is absent."),
    ("Slices", "A slice copies part of a list: `items[1:3]` holds the second and third items."),
]


def _drop(settings: Settings) -> None:
    client = connect_weaviate(settings)
    try:
        Store(client, prefix=PREFIX).drop()
        JobStore(client, prefix=PREFIX).drop()
    finally:
        client.close()


@pytest.fixture
def server(
    cheap_settings: Settings, tmp_path: Path
) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """`synopsis serve --workers 2` on a free loopback port: (base URL, process, log).
    Its summaries only need to exist (`cheap_settings`)."""
    test_settings = cheap_settings.with_overrides(collection_prefix=PREFIX)
    _drop(test_settings)
    port = free_port()
    env = {
        **model_env(cheap_settings),
        "SYNOPSIS_COLLECTION_PREFIX": PREFIX,
        "SYNOPSIS_JOBS_POLL_SECONDS": "0.2",
        "SYNOPSIS_API_READ_KEYS": READ_KEY,
        "SYNOPSIS_API_WRITE_KEYS": WRITE_KEY,
        "SYNOPSIS_SUMMARY_TIMEOUT": "600",
    }
    log = tmp_path / "serve.log"
    process = start_serve(port, env, log, ["--workers", "2"])
    try:
        yield f"http://127.0.0.1:{port}", process, log
    finally:
        kill_group(process)
        _drop(test_settings)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_two_workers_claim_and_run_each_job_once(
    server: tuple[str, subprocess.Popen[bytes], Path], settings: Settings
) -> None:
    base, process, log = server
    wait_healthy(base, process, log)
    with httpx.Client(base_url=base, timeout=30) as http:
        ids: list[str] = []
        for title, text in TOPICS[:JOBS]:
            response = http.post(
                "/documents",
                json={
                    "content": f"# {title}\n\n{text}\n",
                    "source": f"workers/{title.lower()}.md",
                },
                headers=WRITE,
            )
            assert response.status_code == 202, response.text
            ids.append(response.json()["id"])

        deadline = time.monotonic() + 900
        jobs: dict[str, Any] = {}
        while True:
            jobs = {job_id: http.get(f"/jobs/{job_id}", headers=WRITE).json() for job_id in ids}
            if all(job["state"] in FINAL for job in jobs.values()):
                break
            assert time.monotonic() < deadline, f"jobs not finished in 900 s: {jobs}"
            time.sleep(0.5)
        assert {job["state"] for job in jobs.values()} == {"done"}, jobs
        assert [job["attempt"] for job in jobs.values()] == [1] * JOBS
        listed = http.get("/documents", headers=READ).json()
        assert sorted(item["source"] for item in listed) == sorted(
            f"workers/{title.lower()}.md" for title, _ in TOPICS[:JOBS]
        )

    weaviate = connect_weaviate(settings)
    try:
        claims = weaviate.collections.use(f"{PREFIX}JobClaims")
        found = [obj.properties for obj in claims.iterator()]
    finally:
        weaviate.close()
    per_job = collections.Counter(str(claim["job_id"]) for claim in found)
    assert per_job == dict.fromkeys(ids, 1), found
    workers = collections.Counter(str(claim["worker"]) for claim in found)
    print(f"\njobs per worker: {dict(workers)}")

    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) is not None
    while _group_alive(process.pid):  # the uvicorn workers stop with their parent
        assert time.monotonic() - started < 60, "serve's workers outlived SIGTERM by 60 s"
        time.sleep(0.2)
    print(f"stopped {time.monotonic() - started:.1f} s after SIGTERM (exit {process.returncode})")
