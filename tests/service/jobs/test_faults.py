"""An ingest job when something dies mid-way: `kill -9` of the service, of Weaviate, of
Ollama. Each ends in a clear job state, the service answers 503 with `Retry-After` (not
a hang, not a 500) while a dependency is down, and after a restart and a retry the
invariants hold with the counts of a clean ingest.

Weaviate and Ollama are killed in throwaway local stacks of their own (the shared
stack's other half is used as is); the service is killed as a real `synopsis serve`
process. The job ingests two short documents (six and two sections) whose summaries only
need to exist (`cheap_model_settings`). Each kill lands at a known point: the job holds
after its first summaries (`tests/service/holds.py`), so it is summarizing with summaries
pending, however fast the machine. Every wait is bounded and polls for a condition.
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
from service.api import create_app
from service.connections import connect_weaviate
from service.index.store import Store
from service.jobs import JobStore
from service.jobs.execute import file_documents
from service.jobs.records import JobFile
from service.settings import Settings
from service.stack import LocalStack
from splitters import chunk_documents
from splitters.base.metadata import HEADERS
from tests.service.holds import OllamaGate, chat_after, ollama_gate, summaries_held
from tests.service.serving import IN_PROCESS_URL, free_port, start_serve, wait_healthy
from tests.support.documents import six_sections_markdown
from tests.support.invariants import assert_invariants
from tests.support.models import cheap_model_settings, model_env
from tests.support.stacks import IsolatedSettings

pytestmark = pytest.mark.integration

FINAL = {"done", "failed", "cancelled", "interrupted"}
DOCUMENTS = {
    "guide.md": six_sections_markdown().encode(),
    "notes.md": b"# Notes\n\n## Backups\n\nRun `quill backup` nightly.\n\n"
    b"## Restores\n\n`quill restore FILE` brings a backup back.\n",
}


def _upload() -> list[tuple[str, tuple[str, bytes]]]:
    return [("files", (name, data)) for name, data in DOCUMENTS.items()]


def _clean_counts(settings: Settings, tmp_path: Path) -> dict[str, int]:
    """Chunks per source that one clean ingest of `DOCUMENTS` stores (repeats kept once)."""
    files = []
    for name, data in DOCUMENTS.items():
        path = tmp_path / name
        path.write_bytes(data)
        files.append(JobFile(path=str(path), source=name, content_type="text/markdown"))
    documents = list(file_documents(tuple(files), options=LoadOptions(), on_error=print))
    counts: dict[str, int] = {}
    for document in documents:
        chunks = chunk_documents([document], max_tokens=settings.ingest.max_tokens)
        unique = {(tuple(c.metadata.get(HEADERS) or []), c.page_content) for c in chunks}
        counts[str(document.metadata["source"])] = len(unique)
    return counts


def _settings(base: Settings, prefix: str) -> Settings:
    return cheap_model_settings(base).with_overrides(
        collection_prefix=prefix,
        api_weaviate_probe_seconds=0.2,
        summary_timeout=max(base.summaries.timeout, 600.0),
        summary_retries=1,
        jobs_poll_seconds=0.2,
        jobs_lease_seconds=3.0,
    )


def _drop(settings: Settings) -> None:
    client = connect_weaviate(settings)
    try:
        Store(client, prefix=settings.external.collection_prefix).drop()
        JobStore(client, prefix=settings.external.collection_prefix).drop()
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


def _ended(job: dict[str, Any]) -> bool:
    return job["state"] in FINAL


def _assert_clean(settings: Settings, expected: dict[str, int]) -> None:
    client = connect_weaviate(settings)
    try:
        census = assert_invariants(Store(client, prefix=settings.external.collection_prefix))
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
            **model_env(self.settings),
            "SYNOPSIS_OLLAMA_URL": self.settings.external.ollama_url,
            "SYNOPSIS_COLLECTION_PREFIX": self.settings.external.collection_prefix,
            "SYNOPSIS_JOBS_POLL_SECONDS": str(self.settings.jobs.poll_seconds),
            "SYNOPSIS_JOBS_LEASE_SECONDS": str(self.settings.jobs.lease_seconds),
            "SYNOPSIS_INGEST_LOCK_SECONDS": str(self.settings.ingest.lock_seconds),
            "SYNOPSIS_SUMMARY_TIMEOUT": str(self.settings.summaries.timeout),
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
def gate(cheap_settings: Settings) -> Iterator[OllamaGate]:
    """The shared Ollama behind a gate that holds chat requests after the first one."""
    with ollama_gate(cheap_settings.resolved_ollama_url) as running:
        running.hold = chat_after(running, 1)
        yield running


@pytest.fixture
def service(cheap_settings: Settings, gate: OllamaGate, tmp_path: Path) -> Iterator[_Service]:
    configured = _settings(cheap_settings, "TestFaultService").with_overrides(
        ollama_url=gate.url,
        # The killed service's source leases end this long after their last renewal, and
        # the retry waits for them (60 s by default).
        ingest_lock_seconds=6.0,
    )
    _drop(configured)
    running = _Service(configured, free_port(), tmp_path / "serve.log")
    try:
        yield running
    finally:
        if running.process is not None and running.process.poll() is None:
            running.kill(signal.SIGKILL)
        _drop(configured)


def test_kill_9_of_the_service_mid_job_interrupts_it_and_a_retry_converges(
    service: _Service, gate: OllamaGate, tmp_path: Path
) -> None:
    expected = _clean_counts(service.settings, tmp_path)
    service.start()
    with httpx.Client(base_url=service.url, timeout=30) as http:
        accepted = http.post("/documents", files=_upload())
        assert accepted.status_code == 202, accepted.text
        job_id = accepted.json()["id"]
        # Held after its first summaries: the kill lands mid-summarizing, six pending.
        assert gate.held.wait(600), "the job sent no second summary request"
        assert http.get(f"/jobs/{job_id}").json()["state"] == "running"
    service.kill(signal.SIGKILL)
    gate.release()

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


def _until_ready_is(http: Any, status: int) -> None:
    """Poll `/ready` (the service probes Weaviate every `api_weaviate_probe_seconds`)."""
    deadline = time.monotonic() + 30
    while http.get("/ready").status_code != status:
        assert time.monotonic() < deadline, f"/ready did not answer {status} within 30 s"
        time.sleep(0.1)


def test_kill_9_of_weaviate_mid_job_fails_it_503s_meanwhile_and_a_retry_converges(
    isolated_settings: IsolatedSettings,
    cheap_settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = _settings(isolated_settings(700, ollama=False), "TestFaultWeaviate")
    LocalStack(settings).up()
    expected = _clean_counts(settings, tmp_path)
    with (
        summaries_held(monkeypatch, after=1) as hold,
        TestClient(create_app(settings), base_url=IN_PROCESS_URL) as http,
    ):
        job_id = http.post("/documents", files=_upload()).json()["id"]
        hold.wait_reached()  # summarizing, 7 summaries pending
        _kill_component(settings, "weaviate")
        _until_ready_is(http, 503)

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
        hold.release()
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
    settings: Settings,
    isolated_settings: IsolatedSettings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shared = settings  # the shared stack, started if it is not: its Weaviate is used
    settings = _settings(isolated_settings(800, weaviate=False), "TestFaultOllama").with_overrides(
        # The shared Weaviate, reached as an external one: its gRPC port too.
        weaviate_grpc_port=shared.stack.local_weaviate_grpc_port,
    )
    LocalStack(settings).up()
    _drop(settings)
    expected = _clean_counts(settings, tmp_path)
    try:
        with (
            summaries_held(monkeypatch, after=1) as hold,
            TestClient(create_app(settings), base_url=IN_PROCESS_URL) as http,
        ):
            job_id = http.post("/documents", files=_upload()).json()["id"]
            hold.wait_reached()  # summarizing, 7 summaries pending
            _kill_component(settings, "ollama")
            hold.release()  # the held summaries meet the dead Ollama

            job = _wait(http, job_id, _ended, timeout=300)
            assert job["state"] == "failed", job
            assert (
                settings.models.chat_model in job["reason"]
                or settings.models.embedding_model in job["reason"]
            )
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
