"""QueryBatcher and the Embedder's shared query calls: order, errors, deadlines, threads."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import httpx
import pytest
from langchain_core.embeddings import Embeddings

from service.errors import ModelError, SynopsisError
from service.models.batch import QueryBatcher
from service.models.embed import BatchQueryEmbeddings, Embedder, OllamaEmbeddingModel


def vector_of(text: str) -> list[float]:
    """A vector that names its text: the contract's "a vector per input, in order" is checked."""
    return [float(len(text)), float(sum(map(ord, text)) % 9973)]


class GatedModel(Embeddings):
    """Embeds query texts in one call, as Ollama's /api/embed does, holding each call until
    the test opens its gate; records every call's texts."""

    def __init__(self, *, query_timeout: float = 5.0, limit: int = 10_000) -> None:
        self.query_timeout = query_timeout
        self.limit = limit
        self.calls: list[list[str]] = []
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Semaphore(0)
        self.failing: dict[str, Exception] = {}  # a call holding this text raises that
        self._lock = threading.Lock()

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            self.calls.append(list(texts))
        self.entered.release()
        if not self.gate.wait(10):
            raise TimeoutError("the test never opened the gate")
        for text in texts:
            if text in self.failing:
                raise self.failing[text]
        if any(len(text) > self.limit for text in texts):
            raise ValueError("the input length exceeds the context length (status code: 400)")
        return [vector_of(text) for text in texts]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [vector_of(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_queries([text])[0]


def start_blocked_call(
    model: GatedModel, embed: Callable[[str], list[float]], text: str, pool: ThreadPoolExecutor
) -> Future[list[float]]:
    """Close the gate, start one call that sends `text`, and wait until it is in the model."""
    model.gate.clear()
    future = pool.submit(embed, text)
    assert model.entered.acquire(timeout=5)
    return future


def wait_queued(batcher: QueryBatcher, count: int) -> None:
    deadline = time.monotonic() + 5
    while len(batcher._queue) < count:
        assert time.monotonic() < deadline, "the callers did not queue"
        time.sleep(0.001)


def test_the_ollama_model_is_a_batch_query_model() -> None:
    model = OllamaEmbeddingModel(model="m", base_url="http://127.0.0.1:9", query_timeout=3.0)
    try:
        assert isinstance(model, BatchQueryEmbeddings)
        assert Embedder(model, model="m").query_batcher is not None
        assert Embedder(model, model="m", query_batch_size=1).query_batcher is None
    finally:
        model.close()


def test_a_lone_query_is_sent_at_once_alone() -> None:
    model = GatedModel()
    embedder = Embedder(model, model="fake")
    assert embedder.embed_query("range") == vector_of("range")
    assert (model.calls, embedder.calls) == ([["range"]], 1)


def test_queries_arriving_during_a_call_share_the_next_one_in_order() -> None:
    model = GatedModel()
    embedder = Embedder(model, model="fake", query_cache_size=0)
    assert embedder.query_batcher is not None
    texts = [f"query {n}" for n in range(6)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        first = start_blocked_call(model, embedder.embed_query, "first", pool)
        futures = []
        for text in texts:  # one at a time, so the queue's order is known
            futures.append(pool.submit(embedder.embed_query, text))
            wait_queued(embedder.query_batcher, len(futures))
        model.gate.set()
        assert first.result(timeout=5) == vector_of("first")
        assert [future.result(timeout=5) for future in futures] == [vector_of(t) for t in texts]
    assert model.calls == [["first"], texts]
    assert (embedder.calls, embedder.query_batcher.calls, embedder.query_batcher.texts) == (2, 2, 7)


def test_a_call_carries_at_most_max_batch_texts_and_the_rest_follow() -> None:
    model = GatedModel()
    embedder = Embedder(model, model="fake", query_cache_size=0, query_batch_size=3)
    assert embedder.query_batcher is not None
    texts = [f"q{n}" for n in range(7)]
    with ThreadPoolExecutor(max_workers=10) as pool:
        first = start_blocked_call(model, embedder.embed_query, "first", pool)
        futures = []
        for text in texts:
            futures.append(pool.submit(embedder.embed_query, text))
            wait_queued(embedder.query_batcher, len(futures))
        model.gate.set()
        first.result(timeout=5)
        assert [future.result(timeout=5) for future in futures] == [vector_of(t) for t in texts]
    assert model.calls == [["first"], texts[0:3], texts[3:6], texts[6:7]]


def test_the_same_text_twice_in_one_call_is_sent_once() -> None:
    model = GatedModel()
    embedder = Embedder(model, model="fake", query_cache_size=0)
    assert embedder.query_batcher is not None
    with ThreadPoolExecutor(max_workers=4) as pool:
        first = start_blocked_call(model, embedder.embed_query, "first", pool)
        futures = []
        for text in ("a", "b", "a"):
            futures.append(pool.submit(embedder.embed_query, text))
            wait_queued(embedder.query_batcher, len(futures))
        model.gate.set()
        first.result(timeout=5)
        results = [future.result(timeout=5) for future in futures]
    assert results == [vector_of("a"), vector_of("b"), vector_of("a")]
    assert model.calls == [["first"], ["a", "b"]]


def test_an_error_of_a_shared_call_reaches_every_caller_in_it_as_a_model_error() -> None:
    model = GatedModel()
    model.failing["a"] = ConnectionError("connection refused")
    embedder = Embedder(model, model="fake", query_cache_size=0)
    assert embedder.query_batcher is not None
    with ThreadPoolExecutor(max_workers=4) as pool:
        first = start_blocked_call(model, embedder.embed_query, "first", pool)
        futures = []
        for text in ("a", "b"):
            futures.append(pool.submit(embedder.embed_query, text))
            wait_queued(embedder.query_batcher, len(futures))
        model.gate.set()
        assert first.result(timeout=5) == vector_of("first")
        for future in futures:
            with pytest.raises(ModelError, match="'fake' is unreachable: connection refused"):
                future.result(timeout=5)
    assert model.calls == [["first"], ["a", "b"]]
    # Nothing failed is cached: the next call asks the model again, and succeeds.
    del model.failing["a"]
    assert embedder.embed_query("a") == vector_of("a")


def test_a_timeout_of_a_shared_call_is_a_model_error_for_each_caller() -> None:
    model = GatedModel()
    model.failing["second"] = httpx.ReadTimeout("timed out")
    embedder = Embedder(model, model="fake", query_cache_size=0)
    assert embedder.query_batcher is not None
    with ThreadPoolExecutor(max_workers=4) as pool:
        first = start_blocked_call(model, embedder.embed_query, "first", pool)
        futures = []
        for text in ("second", "third"):
            futures.append(pool.submit(embedder.embed_query, text))
            wait_queued(embedder.query_batcher, len(futures))
        model.gate.set()
        assert first.result(timeout=5) == vector_of("first")
        for future in futures:
            with pytest.raises(ModelError, match="'fake' timed out"):
                future.result(timeout=5)


def test_a_query_queued_behind_a_hung_call_gives_up_after_the_deadline() -> None:
    model = GatedModel(query_timeout=0.2)
    embedder = Embedder(model, model="fake", query_cache_size=0)
    assert embedder.query_batcher is not None
    with ThreadPoolExecutor(max_workers=3) as pool:
        first = start_blocked_call(model, embedder.embed_query, "first", pool)
        started = time.monotonic()
        queued = pool.submit(embedder.embed_query, "second")
        with pytest.raises(ModelError, match=r"within 0\.2 s"):
            queued.result(timeout=5)
        waited = time.monotonic() - started
        assert 0.15 < waited < 3
        assert len(embedder.query_batcher._queue) == 0  # it left the queue
        model.gate.set()
        assert first.result(timeout=5) == vector_of("first")
    assert model.calls == [["first"]]  # the query that gave up was never sent


def test_a_query_over_the_context_fails_alone_and_the_others_in_its_call_succeed() -> None:
    model = GatedModel(limit=20)
    embedder = Embedder(model, model="fake", query_cache_size=0)
    assert embedder.query_batcher is not None
    long = "x" * 30
    with ThreadPoolExecutor(max_workers=4) as pool:
        first = start_blocked_call(model, embedder.embed_query, "first", pool)
        futures = []
        for text in ("a", long, "b"):
            futures.append(pool.submit(embedder.embed_query, text))
            wait_queued(embedder.query_batcher, len(futures))
        model.gate.set()
        first.result(timeout=5)
        assert futures[0].result(timeout=5) == vector_of("a")
        assert futures[2].result(timeout=5) == vector_of("b")
        with pytest.raises(ModelError, match="context length"):
            futures[1].result(timeout=5)
    assert model.calls == [["first"], ["a", long, "b"], ["a"], [long], ["b"]]


def test_long_queries_bypass_the_batcher() -> None:
    model = GatedModel()
    embedder = Embedder(model, model="fake", solo_chars=10)
    assert embedder.embed_query("y" * 11) == vector_of("y" * 11)
    assert embedder.query_batcher is not None
    assert embedder.query_batcher.calls == 0


def test_a_model_without_batched_queries_keeps_one_call_per_query() -> None:
    class Plain(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [vector_of(text) for text in texts]

        def embed_query(self, text: str) -> list[float]:
            return vector_of(text)

    embedder = Embedder(Plain(), model="plain")
    assert embedder.query_batcher is None
    assert embedder.embed_query("a") == vector_of("a")


def test_many_threads_each_get_their_own_vector() -> None:
    model = GatedModel()
    embedder = Embedder(model, model="fake", query_cache_size=0, query_batch_size=8)
    texts = [f"question number {n}" for n in range(200)]
    with ThreadPoolExecutor(max_workers=32) as pool:
        results = list(pool.map(embedder.embed_query, texts))
    assert results == [vector_of(text) for text in texts]
    sent = [text for call in model.calls for text in call]
    assert sorted(sent) == sorted(texts)  # every text sent exactly once
    assert max(len(call) for call in model.calls) <= 8


def test_a_wrong_number_of_vectors_is_a_model_error_for_every_caller() -> None:
    batcher = QueryBatcher(lambda texts: [[1.0]] * (len(texts) + 1))
    with pytest.raises(ModelError, match="returned 2 vectors for 1 texts"):
        batcher.embed("a")


def test_an_unexpected_error_still_releases_the_callers_and_the_slot() -> None:
    calls: list[list[str]] = []

    def broken(texts: list[str]) -> list[list[float] | SynopsisError]:
        calls.append(texts)
        if len(calls) == 1:
            raise RuntimeError("bug")
        return [vector_of(text) for text in texts]

    batcher = QueryBatcher(broken)
    with pytest.raises(RuntimeError, match="bug"):
        batcher.embed("a")
    assert batcher.embed("b") == vector_of("b")  # the slot was given back


@pytest.mark.parametrize(("max_batch", "max_in_flight"), [(0, 1), (1, 0)])
def test_limits_below_one_are_refused(max_batch: int, max_in_flight: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        QueryBatcher(lambda texts: [], max_batch=max_batch, max_in_flight=max_in_flight)


def test_async_queries_of_concurrent_requests_share_a_call_beyond_the_loops_threads() -> None:
    # The event loop's default pool has CPUs + 4 threads; 20 requests' queries must all be
    # able to wait for the running call, and then share the next one.
    model = GatedModel()
    embedder = Embedder(model, model="fake", query_cache_size=0)
    batcher = embedder.query_batcher
    assert batcher is not None
    texts = [f"async query {n}" for n in range(20)]

    async def scenario() -> list[list[float]]:
        model.gate.clear()
        first = asyncio.ensure_future(embedder.aembed_query("first"))
        await asyncio.to_thread(model.entered.acquire, True, 5)
        rest = [asyncio.ensure_future(embedder.aembed_query(text)) for text in texts]
        await asyncio.to_thread(wait_queued, batcher, len(texts))
        model.gate.set()
        await first
        return list(await asyncio.gather(*rest))

    try:
        assert asyncio.run(scenario()) == [vector_of(text) for text in texts]
    finally:
        embedder.close()
    assert [len(call) for call in model.calls] == [1, 20]
