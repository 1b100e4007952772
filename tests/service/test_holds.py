"""The tests' holds (tests/service/holds.py) hold what they say and nothing else."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from service.ingest.summarize import Summarizer, SummaryRequest
from tests.service.holds import chat_after, mentioning, ollama_gate, sampled, summaries_held


@pytest.fixture
def upstream() -> Iterator[tuple[str, list[bytes]]]:
    """A server that answers every POST with the JSON it was sent, and records it."""
    seen: list[bytes] = []

    class Echo(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            seen.append(body)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_the_gate_passes_requests_and_holds_the_matching_ones_until_released(
    upstream: tuple[str, list[bytes]],
) -> None:
    url, seen = upstream
    with ollama_gate(url) as gate:
        gate.hold = mentioning("venv")
        assert httpx.post(f"{gate.url}/api/embed", json={"input": ["plain"]}).json() == {
            "input": ["plain"]
        }
        answers: list[httpx.Response] = []
        held = threading.Thread(
            target=lambda: answers.append(
                httpx.post(f"{gate.url}/api/embed", json={"input": ["use `venv`"]}, timeout=30)
            )
        )
        held.start()
        assert gate.held.wait(10)
        held.join(0.3)
        assert held.is_alive()  # waits at the gate
        assert len(seen) == 1  # and never reached the server
        gate.release()
        held.join(10)
        assert [answer.json() for answer in answers] == [{"input": ["use `venv`"]}]
        assert gate.passed == ["/api/embed", "/api/embed"]


def test_chat_after_holds_chats_once_enough_were_answered(
    upstream: tuple[str, list[bytes]],
) -> None:
    url, _ = upstream
    with ollama_gate(url) as gate:
        match = chat_after(gate, 1)
        assert match("/api/chat", b"{}") is False
        httpx.post(f"{gate.url}/api/chat", json={})
        assert (match("/api/chat", b"{}"), match("/api/embed", b"{}")) == (True, False)


def test_sampled_sets_a_temperature_and_a_seed_on_chats_only() -> None:
    counts: Counter[str] = Counter()
    rewrite = sampled(0.8, counts)
    body = json.dumps({"model": "m", "options": {"temperature": 0.0}}).encode()
    options = json.loads(rewrite("/api/chat", body))["options"]
    assert options["temperature"] == 0.8
    assert isinstance(options["seed"], int)
    assert rewrite("/api/embed", body) == body
    limited = json.dumps({"model": "m", "options": {"num_predict": 24}}).encode()
    rewrite("/api/chat", limited)
    assert counts == {"m": 1, "m, 24 tokens": 1}


def test_a_summary_hold_lets_the_first_through_and_holds_the_rest() -> None:
    requests = [
        SummaryRequest(headers=["Guide", name], content=f"About {name}.", label=name)
        for name in ("a", "b", "c")
    ]
    summarizer = Summarizer(
        FakeListChatModel(responses=["A summary of the section."]), model_name="fake"
    )
    done: list[int] = []
    try:
        with pytest.MonkeyPatch.context() as patch, summaries_held(patch, after=1) as hold:
            worker = threading.Thread(
                target=summarizer.summarize_many,
                args=(requests,),
                kwargs={"on_done": lambda index, _: done.append(index)},
            )
            worker.start()
            hold.wait_reached(timeout=10)
            worker.join(0.3)
            assert (done, hold.finished, hold.waiting) == ([0], 1, 2)  # two run at a time
            hold.release()
            worker.join(10)
            assert sorted(done) == [0, 1, 2]
    finally:
        summarizer.close()
