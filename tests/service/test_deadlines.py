"""Every outbound call ends within its deadline when the server at the other end hangs.

A hung server (unit level): a socket that listens, so connections are accepted by the
kernel, but never reads or answers, which is what a SIGSTOPped Ollama or Weaviate looks
like to a client. Each call must give up within the deadline its setting names (plus a
little slack for the client's own start-up), with the error the API maps to 503. The
real servers hung with SIGSTOP are the integration tests' (tests/service/test_hung.py).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from langchain_core.messages import HumanMessage

from service.api.exceptions import dependency_of
from service.connections import connect_weaviate
from service.errors import ModelError, StackError
from service.models.chat import answer_model
from service.models.embed import Embedder, ollama_embeddings
from service.settings import Settings

#: What a call may take beyond its deadline (a thread start, the client's set-up).
SLACK = 2.0
DEADLINE = 0.3  # short: what is proved is that the call ends, not how long it may wait


@contextlib.contextmanager
def hung_server() -> Iterator[int]:
    """A loopback port whose connections are accepted and then never answered."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.1)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(connection)  # kept open, never read: the client waits

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        acceptor.join(timeout=5)
        for connection in held:
            connection.close()
        listener.close()


@pytest.fixture
def hung_port() -> Iterator[int]:
    """The port of a hung server."""
    with hung_server() as port:
        yield port


def _within(call: Callable[[], Any], limit: float) -> BaseException | None:
    """Run `call` in a thread; what it raised — the test fails if it runs past `limit`."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:
            outcome.append(exc)
        else:
            outcome.append(None)

    started = time.monotonic()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=limit)
    seconds = time.monotonic() - started
    assert not worker.is_alive(), f"still waiting after {seconds:.1f} s (limit {limit} s)"
    return outcome[0]


def _settings(port: int, **changes: Any) -> Settings:
    return Settings().with_overrides(ollama_url=f"http://127.0.0.1:{port}", **changes)


def test_a_query_embedding_gives_up_within_its_timeout(hung_port: int) -> None:
    settings = _settings(hung_port, query_embedding_timeout=DEADLINE)
    embedder = Embedder(ollama_embeddings(settings), model=settings.models.embedding_model)
    try:
        error = _within(lambda: embedder.embed_query("range()"), DEADLINE + SLACK)
    finally:
        embedder.close()
    assert isinstance(error, ModelError), error
    assert "timed out" in str(error)
    assert dependency_of(error) == "ollama"


def test_a_document_embedding_gives_up_within_its_timeout(hung_port: int) -> None:
    settings = _settings(hung_port, embedding_timeout=DEADLINE)
    embedder = Embedder(ollama_embeddings(settings), model=settings.models.embedding_model)
    try:
        error = _within(lambda: embedder.embed_documents(["a", "b"]), DEADLINE + SLACK)
    finally:
        embedder.close()
    assert isinstance(error, ModelError), error


def test_the_answer_model_gives_up_within_its_timeout(hung_port: int) -> None:
    model = answer_model(_settings(hung_port, answer_timeout=DEADLINE))
    error = _within(lambda: model.invoke([HumanMessage(content="hi")]), DEADLINE + SLACK)
    assert isinstance(error, httpx.TimeoutException), error
    assert dependency_of(error) == "ollama"  # the API answers 503


def test_connecting_to_a_hung_weaviate_gives_up_within_its_timeout(hung_port: int) -> None:
    with hung_server() as grpc_port:
        settings = Settings().with_overrides(
            weaviate_url=f"http://127.0.0.1:{hung_port}",
            weaviate_grpc_port=grpc_port,
            weaviate_init_timeout=DEADLINE,
        )
        # The client checks the server's version, then gRPC health: each within the deadline.
        error = _within(lambda: connect_weaviate(settings), 2 * DEADLINE + SLACK)
    assert isinstance(error, StackError), error


def test_deadlines_are_settings_of_at_least_a_tick() -> None:
    names = Settings.env_names()
    for name in (
        "weaviate_init_timeout",
        "weaviate_query_timeout",
        "weaviate_insert_timeout",
        "embedding_timeout",
        "query_embedding_timeout",
        "answer_timeout",
    ):
        assert Settings.from_env({names[name]: "2.5"}).value(name) == 2.5
        with pytest.raises(Exception, match=names[name]):
            Settings.from_env({names[name]: "0"})
