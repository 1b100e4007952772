"""A *hung* Ollama and a *hung* Weaviate (SIGSTOP on the real process, later SIGCONT), in
throwaway local stacks of their own, while an ingest job runs through the app.

Killed servers refuse connections at once; hung ones accept them and never answer, which
is what a paused VM, a swapped-out host or a deadlocked server looks like. With every
outbound call under a deadline (tests/service/test_deadlines.py), each request must end
with 503 within its deadline, the running job must end within its limit rather than stay
`running`, and after SIGCONT everything works again without a restart, with the
invariants intact and the counts of a clean ingest. Run with `-s` to see the timings.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from service.api import create_app
from service.connections import connect_weaviate
from service.index.store import Store
from service.settings import Settings
from service.stack import LocalStack
from tests.service.holds import summaries_held
from tests.service.jobs.test_faults import _assert_503, _descendants, _drop, _ended, _wait
from tests.service.serving import IN_PROCESS_URL
from tests.support.invariants import assert_invariants
from tests.support.models import cheap_model_settings
from tests.support.stacks import IsolatedSettings

pytestmark = pytest.mark.integration

#: Every deadline of the test, in seconds (the defaults are minutes).
DEADLINE = 3.0
#: What a request may take beyond its deadline (the service's own work, a busy machine).
SLACK = 3.0
#: Two short pages of five sections: ten summaries of a few words. The job is held after
#: its first two (`summaries_held`), so it is writing them when its server hangs.
_TOPICS = ("install", "upgrade")
PAGES = {
    f"{topic}.md": f"# Widget: {topic}\n\n"
    + "\n\n".join(
        f"## Step {step} of {topic}\n\nFor {topic}, step {step}: run `widget {topic} "
        f"--step {step}` and check its output."
        for step in range(1, 6)
    )
    for topic in _TOPICS
}


def _settings(base: Settings, prefix: str) -> Settings:
    return cheap_model_settings(base).with_overrides(
        collection_prefix=prefix,
        summary_retries=0,
        summary_timeout=60.0,  # the stall limit, not a summary's timeout, ends the job
        jobs_poll_seconds=0.2,
        jobs_lease_seconds=3.0,
        jobs_stall_seconds=10.0,
        # A job that ends on a hung Weaviate cannot release its source leases; they end
        # this long after their last renewal, and the retry waits for them (60 s by default).
        ingest_lock_seconds=6.0,
        query_embedding_timeout=DEADLINE,
        embedding_timeout=30.0,  # past the stall limit and its grace: the stall ends the job
        answer_timeout=DEADLINE,
        weaviate_query_timeout=DEADLINE,
        weaviate_insert_timeout=DEADLINE,
    )


@contextlib.contextmanager
def _hung(settings: Settings, name: str) -> Iterator[list[int]]:
    """SIGSTOP the component and what it started (Ollama's model runners); SIGCONT on
    leaving, whatever happened."""
    status = LocalStack(settings).status()
    component = status.weaviate if name == "weaviate" else status.ollama
    assert component.pid is not None, f"{name} is not running"
    pids = [component.pid, *_descendants(component.pid)]
    try:
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        yield pids
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def _timed(call: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    started = time.monotonic()
    result = call(*args, **kwargs)
    return result, time.monotonic() - started


def _job_threads() -> list[threading.Thread]:
    """The threads running a job ("job-<id>"): not the workers' poller, which lives as
    long as the app."""
    return [
        t
        for t in threading.enumerate()
        if t.name.startswith("job-") and t.name != "job-poller" and t.is_alive()
    ]


def _upload() -> list[tuple[str, tuple[str, bytes]]]:
    return [("files", (name, text.encode())) for name, text in PAGES.items()]


def _assert_whole(settings: Settings) -> None:
    client = connect_weaviate(settings)
    try:
        store = Store(client, prefix=settings.external.collection_prefix)
        found = assert_invariants(store)
        records = {name: store.source_record(name) for name in PAGES}
    finally:
        client.close()
    for name, record in records.items():
        assert record is not None, name
        assert (record.status, record.pending) == ("complete", 0)
        assert found.originals[name] == found.summaries[name] == record.chunks >= 5


def _drain(settings: Settings) -> None:
    """Return once the chat model has answered a one-token request: the summary calls that
    the hung server queued before the job was interrupted are computed first (one slot),
    and a retry behind them would stall for their seconds, not for anything it did."""
    reply = httpx.post(
        f"{settings.resolved_ollama_url}/api/generate",
        json={
            "model": settings.models.chat_model,
            "prompt": "ok",
            "stream": False,
            "options": {"num_predict": 1},
        },
        timeout=300,
    )
    assert reply.status_code == 200, reply.text


def test_a_hung_ollama_fails_requests_in_time_interrupts_the_job_and_recovers(
    settings: Settings, isolated_settings: IsolatedSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = settings  # the shared stack, started if it is not: its Weaviate is used
    settings = _settings(isolated_settings(900, weaviate=False), "TestHungOllama").with_overrides(
        weaviate_grpc_port=shared.stack.local_weaviate_grpc_port,  # the shared one, as external
    )
    assert LocalStack(settings).up().ready
    _drop(settings)
    try:
        with (
            TestClient(create_app(settings), base_url=IN_PROCESS_URL) as http,
            summaries_held(monkeypatch, after=2) as hold,
        ):
            job_id = http.post("/documents", files=_upload()).json()["id"]
            hold.wait_reached(timeout=300)
            with _hung(settings, "ollama"):
                hold.release()  # the next summaries go to the hung server
                stopped = time.monotonic()
                search, search_s = _timed(http.post, "/search", json={"query": "widget logs"})
                _assert_503(search, "ollama")
                ask, ask_s = _timed(http.post, "/ask", json={"question": "Where is the log?"})
                _assert_503(ask, "ollama")
                job = _wait(http, job_id, _ended, timeout=60)
                ended_s = time.monotonic() - stopped
                deadline = time.monotonic() + 60
                while _job_threads() and time.monotonic() < deadline:
                    time.sleep(0.1)
                threads_s = time.monotonic() - stopped
                print(
                    f"\nhung Ollama: /search 503 in {search_s:.1f} s, /ask 503 in {ask_s:.1f} s,"
                    f" job {job['state']} after {ended_s:.1f} s, its thread gone after"
                    f" {threads_s:.1f} s"
                )
                assert search_s < DEADLINE + SLACK
                assert ask_s < DEADLINE + SLACK
                assert job["state"] == "interrupted", job
                assert "SYNOPSIS_JOBS_STALL_SECONDS=10" in job["reason"]
                assert ended_s < settings.jobs.stall_seconds + SLACK + 5  # + the grace
            continued = time.monotonic()
            while http.post("/search", json={"query": "widget logs"}).status_code != 200:
                assert time.monotonic() - continued < 60, "searches did not succeed again"
                time.sleep(0.5)
            back = time.monotonic() - continued
            print(f"hung Ollama: searches answer again {back:.1f} s after SIGCONT")
            _drain(settings)
            assert http.post(f"/jobs/{job_id}/retry").status_code == 202
            job = _wait(http, job_id, _ended, timeout=300)
            assert job["state"] == "done", job
        _assert_whole(settings)
    finally:
        _drop(settings)


def test_a_hung_weaviate_fails_requests_in_time_ends_the_job_and_recovers(
    smallest_model: str, isolated_settings: IsolatedSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `smallest_model`: the shared stack's Ollama runs, with the model that writes here.
    settings = _settings(isolated_settings(950, ollama=False), "TestHungWeaviate")
    assert LocalStack(settings).up().ready
    with (
        TestClient(create_app(settings), base_url=IN_PROCESS_URL) as http,
        summaries_held(monkeypatch, after=2) as hold,
    ):
        job_id = http.post("/documents", files=_upload()).json()["id"]
        hold.wait_reached(timeout=300)
        with _hung(settings, "weaviate"):
            stopped = time.monotonic()
            timings: dict[str, float] = {}
            for name, call in {
                "search": lambda: http.post("/search", json={"query": "widget logs"}),
                "job": lambda: http.get(f"/jobs/{job_id}"),
                "documents": lambda: http.get("/documents"),
            }.items():
                response, timings[name] = _timed(call)
                _assert_503(response, "weaviate")
            hold.release()  # the summaries end, and the job comes to write them
            deadline = time.monotonic() + 120
            while _job_threads() and time.monotonic() < deadline:
                time.sleep(0.1)
            threads_s = time.monotonic() - stopped
            print(
                "\nhung Weaviate: "
                + ", ".join(f"{name} 503 in {seconds:.1f} s" for name, seconds in timings.items())
                + f"; the job's thread ended after {threads_s:.1f} s"
            )
            assert max(timings.values()) < DEADLINE + SLACK
            assert _job_threads() == []  # no job stays running on a hung Weaviate
        continued = time.monotonic()
        while http.post("/search", json={"query": "widget logs"}).status_code != 200:
            assert time.monotonic() - continued < 60, "searches did not succeed again"
            time.sleep(0.5)
        back = time.monotonic() - continued
        print(f"hung Weaviate: searches answer again {back:.1f} s after SIGCONT")
        # Its end is recorded once Weaviate answers: done if it wrote after the pause,
        # else failed or interrupted, and a retry finishes it.
        job = _wait(http, job_id, _ended, timeout=60)
        if job["state"] != "done":
            assert job["reason"], job
            assert http.post(f"/jobs/{job_id}/retry").status_code == 202
            job = _wait(http, job_id, _ended, timeout=300)
        assert job["state"] == "done", (job["attempt"], job["reason"], job["errors"])
    _assert_whole(settings)
