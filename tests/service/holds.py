"""Holding an ingest at a known point, so that a test stops, kills or cancels it there
and not wherever a poll happens to see it.

- `SummaryHold` (in this process): the first `after` summaries are written by the real
  model as usual; every later one waits, before its model call, until `release()`.
  A job that is held cannot end, so "it is summarizing and has N pending" is a state
  the test reaches for sure, however fast the machine.
- `OllamaGate` (for a subprocess: `synopsis serve`, `synopsis ingest`): a pass-through
  HTTP proxy in front of the real Ollama; a request that `hold` matches waits until
  `release()`. The subprocess is pointed at `gate.url` as its Ollama.

Neither stands in for Ollama: every request that is let through reaches the real one.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from service.ingest.summarize import Summarizer, SummaryRequest, SummaryResult

__all__ = [
    "OllamaGate",
    "SummaryHold",
    "chat_after",
    "mentioning",
    "ollama_gate",
    "sampled",
    "summaries_held",
]

#: How long a held call waits at most (a test that forgets to release fails, not hangs).
HOLD_SECONDS = 600.0


class SummaryHold:
    """Counts summaries started; those past `after` wait for `release()`."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.started = 0
        self.finished = 0
        self.waiting = 0
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._reached = threading.Event()

    def release(self) -> None:
        """Let every held summary (and every later one) through."""
        self._released.set()

    def wait_reached(self, timeout: float = 900.0) -> None:
        """Block until `after` summaries are written and the next one is waiting."""
        assert self._reached.wait(timeout), f"no summary was held within {timeout:.0f} s"

    async def _enter(self) -> None:
        with self._lock:
            index = self.started
            self.started += 1
        if index < self.after or self._released.is_set():
            return
        with self._lock:
            self.waiting += 1
        self._check_reached()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + HOLD_SECONDS
        while not self._released.is_set():  # polled: a cancelled ingest stops waiting
            assert loop.time() < deadline, "a held summary was never released"
            await asyncio.sleep(0.05)

    def _leave(self) -> None:
        with self._lock:
            self.finished += 1
        self._check_reached()

    def _check_reached(self) -> None:
        with self._lock:
            if self.waiting and self.finished >= self.after:
                self._reached.set()


@contextmanager
def summaries_held(monkeypatch: pytest.MonkeyPatch, *, after: int) -> Iterator[SummaryHold]:
    """Hold every summary after the first `after` of every `Summarizer` in this process;
    released (and unpatched) at the end."""
    hold = SummaryHold(after)
    checked = Summarizer.asummarize_checked

    async def held(self: Summarizer, request: SummaryRequest) -> SummaryResult:
        await hold._enter()
        result = await checked(self, request)
        hold._leave()
        return result

    with monkeypatch.context() as patch:
        patch.setattr(Summarizer, "asummarize_checked", held)
        try:
            yield hold
        finally:
            hold.release()


Match = Callable[[str, bytes], bool]


class OllamaGate:
    """A proxy to `upstream` that holds the requests `hold(path, body)` matches."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.hold: Match = lambda path, body: False
        # Rewrites a request's body before it is sent on (e.g. `sampled`); None: as is.
        self.rewrite: Callable[[str, bytes], bytes] | None = None
        self.held = threading.Event()  # set once a request waits
        self.passed: list[str] = []  # paths of the requests the server answered, in order
        self._released = threading.Event()
        self._http = httpx.Client(base_url=self.upstream, timeout=HOLD_SECONDS)
        gate = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                gate._forward(self)

            def do_POST(self) -> None:
                gate._forward(self)

            def do_HEAD(self) -> None:
                gate._forward(self)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="ollama-gate",
            daemon=True,
        )
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def release(self) -> None:
        """Let every held request (and every later one) through."""
        self.hold = lambda path, body: False
        self._released.set()

    def close(self) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()
        self._http.close()

    def _forward(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        if self.hold(handler.path, body):
            self.held.set()
            self._released.wait(HOLD_SECONDS)
        if self.rewrite is not None:
            body = self.rewrite(handler.path, body)
        headers = {
            name: value
            for name, value in handler.headers.items()
            if name.lower() not in ("host", "content-length", "connection")
        }
        try:
            answer = self._http.request(
                handler.command, handler.path, content=body, headers=headers
            )
        except httpx.HTTPError:
            handler.close_connection = True  # as a dead server would: no answer
            return
        data = answer.content
        self.passed.append(handler.path)  # answered by the server, before the client sees it
        try:
            handler.send_response(answer.status_code)
            if "Content-Type" in answer.headers:
                handler.send_header("Content-Type", answer.headers["Content-Type"])
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            if handler.command != "HEAD":
                handler.wfile.write(data)
        except OSError:  # the client is gone (a killed process): nothing to answer
            handler.close_connection = True


def chat_after(gate: OllamaGate, count: int) -> Match:
    """Hold every chat request once `count` chat requests were answered."""

    def match(path: str, body: bytes) -> bool:
        return path.startswith("/api/chat") and gate.passed.count("/api/chat") >= count

    return match


def mentioning(text: str) -> Match:
    """Hold every request whose body mentions `text` (JSON-escaped as the client sends it)."""
    needle = json.dumps(text)[1:-1].encode()

    def match(path: str, body: bytes) -> bool:
        return needle in body

    return match


def sampled(
    temperature: float, counts: Counter[str] | None = None
) -> Callable[[str, bytes], bytes]:
    """A rewrite that makes every chat request sample at `temperature` with a fresh
    random seed: the replies differ from run to run, as they do between machines'
    builds (the service itself always asks for temperature 0). `counts` (if given)
    counts the rewritten requests per model and reply limit ("MODEL, N tokens")."""
    lock = threading.Lock()

    def rewrite(path: str, body: bytes) -> bytes:
        if not path.startswith(("/api/chat", "/api/generate")) or not body:
            return body
        request = json.loads(body)
        options = request.setdefault("options", {})
        options["temperature"] = temperature
        options["seed"] = random.randrange(2**31)
        if counts is not None:
            with lock:
                limit = options.get("num_predict")
                tokens = f", {limit} tokens" if limit is not None else ""
                counts[f"{request.get('model', '?')}{tokens}"] += 1
        return json.dumps(request).encode()

    return rewrite


@contextmanager
def ollama_gate(upstream: str) -> Iterator[OllamaGate]:
    gate = OllamaGate(upstream)
    try:
        yield gate
    finally:
        gate.close()
