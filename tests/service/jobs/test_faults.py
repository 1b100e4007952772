"""An ingest job when something dies mid-way: `kill -9` of the service, of Weaviate, of
Ollama. Each ends in a clear job state, the service answers 503 with `Retry-After` (not
a hang, not a 500) while a dependency is down, and after a restart and a retry the
invariants hold with the counts of a clean ingest.

Weaviate and Ollama are killed in throwaway local stacks of their own (the shared
stack's other half is used as is); the service is killed as a real `synopsis serve`
process. Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from loaders import LoadOptions
from service.connections import connect_weaviate
from service.edges.api import create_app
from service.index.store import Store
from service.jobs import JobStore
from service.jobs.execute import file_documents
from service.jobs.records import JobFile
from service.settings import Settings
from service.stack import LocalStack
from splitters import chunk_documents
from splitters.metadata import HEADERS
from tests.conftest import IsolatedSettings
from tests.service.conftest import assert_invariants
from tests.service.serving import free_port, start_serve, wait_healthy

pytestmark = pytest.mark.integration

TUTORIAL = Path("/usr/share/doc/python3.11/html/tutorial")
PAGES = ("appendix.html", "interpreter.html")
FINAL = {"done", "failed", "cancelled", "interrupted"}


def _upload() -> list[tuple[str, tuple[str, bytes]]]:
    return [("files", (name, (TUTORIAL / name).read_bytes())) for name in PAGES]


def _clean_counts(settings: Settings, tmp_path: Path) -> dict[str, int]:
    """Chunks per source that one clean ingest of `PAGES` stores (repeats kept once)."""
    files = []
    for name in PAGES:
        path = tmp_path / name
        path.write_bytes((TUTORIAL / name).read_bytes())
        files.append(JobFile(path=str(path), source=name, content_type="text/html"))
    documents = list(file_documents(tuple(files), options=LoadOptions(), on_error=print))
    counts: dict[str, int] = {}
    for document in documents:
        chunks = chunk_documents([document], max_tokens=settings.max_tokens)
        unique = {(tuple(c.metadata.get(HEADERS) or []), c.page_content) for c in chunks}
        counts[str(document.metadata["source"])] = len(unique)
    return counts


def _settings(base: Settings, prefix: str) -> Settings:
    return dataclasses.replace(
        base,
        collection_prefix=prefix,
        summary_timeout=max(base.summary_timeout, 600.0),
        summary_retries=1,
        jobs_poll_seconds=0.2,
        jobs_lease_seconds=3.0,
    )


def _drop(settings: Settings) -> None:
    client = connect_weaviate(settings)
    try:
        Store(client, prefix=settings.collection_prefix).drop()
        JobStore(client, prefix=settings.collection_prefix).drop()
    finally:
        client.close()


def _wait(http: Any, job_id: str, done: Any, *, timeout: float = 900) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        response = http.get(f"/jobs/{job_id}")
        if response.status_code == 200 and done(response.json()):
            job: dict[str, Any] = response.json()
            return job
        assert time.monotonic() < deadline, response.text
        time.sleep(0.3)


def _summarizing(job: dict[str, Any]) -> bool:
    assert job["state"] not in FINAL, job
    return bool(job["progress"]["summarized"] >= 1)


def _ended(job: dict[str, Any]) -> bool:
    return job["state"] in FINAL


def _assert_clean(settings: Settings, expected: dict[str, int]) -> None:
    client = connect_weaviate(settings)
    try:
        census = assert_invariants(Store(client, prefix=settings.collection_prefix))
    finally:
        client.close()
    assert dict(census.originals) == expected
    assert dict(census.summaries) == expected


def _assert_503(response: httpx.Response, dependency: str) -> None:
    assert response.status_code == 503, response.text
    assert int(response.headers["retry-after"]) > 0
    assert response.json()["dependency"] == dependency


# -- the service --------------------------------------------------------------------------


@dataclasses.dataclass
class _Service:
    settings: Settings
    port: int
    log: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {
            "SYNOPSIS_COLLECTION_PREFIX": self.settings.collection_prefix,
            "SYNOPSIS_JOBS_POLL_SECONDS": str(self.settings.jobs_poll_seconds),
            "SYNOPSIS_JOBS_LEASE_SECONDS": str(self.settings.jobs_lease_seconds),
            "SYNOPSIS_SUMMARY_TIMEOUT": str(self.settings.summary_timeout),
        }
        self.process = start_serve(self.port, env, self.log)
        wait_healthy(self.url, self.process, self.log, seconds=120)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill(self, sig: int) -> None:
        assert self.process is not None
        self.process.send_signal(sig)
        self.process.wait(timeout=60)


@pytest.fixture
def service(settings: Settings, tmp_path: Path) -> Iterator[_Service]:
    configured = _settings(settings, "TestFaultService")
    _drop(configured)
    running = _Service(configured, free_port(), tmp_path / "serve.log")
    try:
        yield running
    finally:
        if running.process is not None and running.process.poll() is None:
            running.kill(signal.SIGKILL)
        _drop(configured)


def test_kill_9_of_the_service_mid_job_interrupts_it_and_a_retry_converges(
    service: _Service, tmp_path: Path
) -> None:
    expected = _clean_counts(service.settings, tmp_path)
    service.start()
    with httpx.Client(base_url=service.url, timeout=30) as http:
        accepted = http.post("/documents", files=_upload())
        assert accepted.status_code == 202, accepted.text
        job_id = accepted.json()["id"]
        _wait(http, job_id, _summarizing)
    service.kill(signal.SIGKILL)

    service.start()
    with httpx.Client(base_url=service.url, timeout=30) as http:
        # No process holds it any more: its heartbeat goes stale within the lease.
        job = _wait(http, job_id, _ended, timeout=60)
        assert job["state"] == "interrupted"
        assert "no heartbeat" in job["reason"]
        assert http.post(f"/jobs/{job_id}/retry").status_code == 202
        job = _wait(http, job_id, _ended)
        assert job["state"] == "done", job
    _assert_clean(service.settings, expected)


# -- Weaviate and Ollama ------------------------------------------------------------------


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        children = task / "children"
        for child in children.read_text().split() if children.exists() else []:
            found += [int(child), *_descendants(int(child))]
    return found


def _kill_component(settings: Settings, name: str) -> None:
    status = LocalStack(settings).status()
    component = status.weaviate if name == "weaviate" else status.ollama
    assert component.pid is not None, f"{name} is not running"
    # The server and what it started (Ollama's model runners), as a container's end
    # would: a runner left behind would go on using the CPU.
    for pid in [component.pid, *_descendants(component.pid)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while LocalStack(settings).status().components[0 if name == "weaviate" else 1].running:
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_kill_9_of_weaviate_mid_job_fails_it_503s_meanwhile_and_a_retry_converges(
    isolated_settings: IsolatedSettings, tmp_path: Path
) -> None:
    settings = _settings(isolated_settings(700, ollama=False), "TestFaultWeaviate")
    LocalStack(settings).up()
    expected = _clean_counts(settings, tmp_path)
    with TestClient(create_app(settings)) as http:
        job_id = http.post("/documents", files=_upload()).json()["id"]
        _wait(http, job_id, _summarizing)
        _kill_component(settings, "weaviate")
        time.sleep(3)  # the service probes Weaviate every 2 s

        started = time.monotonic()
        _assert_503(http.post("/search", json={"query": "interactive mode"}), "weaviate")
        _assert_503(http.get(f"/jobs/{job_id}"), "weaviate")
        _assert_503(http.get("/documents"), "weaviate")
        assert http.get("/ready").status_code == 503
        assert time.monotonic() - started < 5  # fails fast rather than hanging

        assert LocalStack(settings).up().ready
        back = time.monotonic()
        while http.post("/search", json={"query": "interactive mode"}).status_code != 200:
            assert time.monotonic() - back < 15, "searches did not succeed again"
            time.sleep(0.5)
        # The job either came to write after Weaviate was back (and is done), or hit the
        # dead Weaviate and failed; that state is recorded once Weaviate is back, without
        # restarting the service, and a retry finishes it.
        job = _wait(http, job_id, _ended)
        if job["state"] != "done":
            assert job["state"] in ("failed", "interrupted"), job
            assert job["reason"]
            assert http.post(f"/jobs/{job_id}/retry").status_code == 202
            job = _wait(http, job_id, _ended)
        assert job["state"] == "done", job
    _assert_clean(settings, expected)


def test_kill_9_of_ollama_mid_job_fails_it_naming_the_model_and_a_retry_converges(
    isolated_settings: IsolatedSettings, tmp_path: Path
) -> None:
    shared = Settings.from_env()
    settings = dataclasses.replace(
        _settings(isolated_settings(800, weaviate=False), "TestFaultOllama"),
        # The shared Weaviate, reached as an external one: its gRPC port too.
        weaviate_grpc_port=shared.local_weaviate_grpc_port,
    )
    LocalStack(settings).up()
    _drop(settings)
    expected = _clean_counts(settings, tmp_path)
    try:
        with TestClient(create_app(settings)) as http:
            job_id = http.post("/documents", files=_upload()).json()["id"]
            _wait(http, job_id, _summarizing)
            _kill_component(settings, "ollama")

            job = _wait(http, job_id, _ended, timeout=300)
            assert job["state"] == "failed", job
            assert settings.chat_model in job["reason"] or settings.embedding_model in job["reason"]
            _assert_503(http.post("/search", json={"query": "interactive mode"}), "ollama")
            assert http.get("/ready").status_code == 503

            assert LocalStack(settings).up().ready
            back = time.monotonic()
            while http.post("/search", json={"query": "interactive mode"}).status_code != 200:
                assert time.monotonic() - back < 30, "searches did not succeed again"
                time.sleep(0.5)
            assert http.post(f"/jobs/{job_id}/retry").status_code == 202
            job = _wait(http, job_id, _ended)
            assert job["state"] == "done", job
        _assert_clean(settings, expected)
    finally:
        _drop(settings)
