"""Embeddings: the same model for documents and queries, batched, with a query cache.

Query texts of concurrent searches share embedding calls (`service.models.batch`) when
the model can embed several queries in one call (`BatchQueryEmbeddings`).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, TypeVar, runtime_checkable

import httpx
import ollama
from langchain_core.embeddings import Embeddings

from service.connections import close_ollama_clients
from service.errors import ModelError, SynopsisError
from service.models.batch import QueryBatcher
from service.settings import Settings

__all__ = ["BatchQueryEmbeddings", "Embedder", "OllamaEmbeddingModel", "ollama_embeddings"]

_T = TypeVar("_T")

#: Threads in which async callers' queries wait for their (shared) embedding call.
_QUERY_THREADS = 64


@runtime_checkable
class BatchQueryEmbeddings(Protocol):
    """An embedding model that embeds several queries in one call, with a deadline per call."""

    query_timeout: float

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """One vector per query text, in their order, as `embed_query` gives each."""
        ...


class OllamaEmbeddingModel(Embeddings):
    """A LangChain `Embeddings` over Ollama's `/api/embed`, through the `ollama` client.

    It makes the same call as langchain-ollama's `OllamaEmbeddings` (which wraps the same
    client), without importing langchain-ollama's chat models: a search starts about two
    seconds sooner on a 2-core machine (docs/benchmarks.md, "Start-up").

    Documents and queries have their own deadline (`timeout`, `query_timeout`: each call
    to Ollama fails after that long without an answer), so a hung server fails a search in
    seconds while a batch of long texts on a busy server still has its minutes. The
    ollama client sets a deadline per client, so there is one client for each.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        keep_alive: int = 1800,
        timeout: float = 120.0,
        query_timeout: float = 10.0,
        max_tokens: int = 0,
    ) -> None:
        self.model = model
        # Ollama embeds at most `num_ctx` tokens of a text (truncating the rest); one value
        # for documents and queries, or it would load the model twice.
        self.options = {"num_ctx": max_tokens} if max_tokens else None
        self.keep_alive = keep_alive
        self.timeout = timeout
        self.query_timeout = query_timeout
        self._client = ollama.Client(host=base_url, timeout=timeout)
        self._async_client = ollama.AsyncClient(host=base_url, timeout=timeout)
        self._query_client = ollama.Client(host=base_url, timeout=query_timeout)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        response = self._client.embed(
            self.model, texts, options=self.options, keep_alive=self.keep_alive
        )
        return [list(vector) for vector in response["embeddings"]]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Query texts in one call, under the query deadline (`BatchQueryEmbeddings`)."""
        response = self._query_client.embed(
            self.model, texts, options=self.options, keep_alive=self.keep_alive
        )
        return [list(vector) for vector in response["embeddings"]]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        response = await self._async_client.embed(
            self.model, texts, options=self.options, keep_alive=self.keep_alive
        )
        return [list(vector) for vector in response["embeddings"]]

    async def aembed_query(self, text: str) -> list[float]:
        return (await self.aembed_documents([text]))[0]

    def close(self) -> None:
        """Close the HTTP clients of the sync calls (the async one: `close_ollama_clients`)."""
        self._query_client.close()  # type: ignore[no-untyped-call]  # not annotated


def ollama_embeddings(settings: Settings) -> OllamaEmbeddingModel:
    """The configured embedding model behind Ollama."""
    return OllamaEmbeddingModel(
        model=settings.models.embedding_model,
        base_url=settings.resolved_ollama_url,
        keep_alive=1800,
        timeout=settings.deadlines.embedding_timeout,
        query_timeout=settings.deadlines.query_embedding_timeout,
        max_tokens=settings.models.embedding_max_tokens,
    )


class Embedder:
    """Embeds document texts in bounded batches and caches query vectors.

    Caching query embeddings is safe: a query text always maps to the same vector for
    a given model, and the cache lives only as long as this object. Behind the cache,
    when the model is a `BatchQueryEmbeddings` and `query_batch_size` is over 1, the
    queries of concurrent callers share calls (`QueryBatcher`: a lone query is sent at
    once; those that arrive while a call runs go together in the next one).
    """

    def __init__(
        self,
        embeddings: Embeddings,
        *,
        model: str,
        batch_size: int = 32,
        query_cache_size: int = 1024,
        solo_chars: float = 1200,
        query_batch_size: int = 32,
    ) -> None:
        self._embeddings = embeddings
        self.model = model
        self._batch_size = batch_size
        self._solo_chars = solo_chars
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._cache_size = query_cache_size
        self._lock = threading.Lock()
        self._dimension: int | None = None
        #: Requests sent to the embedding model (a cached query vector is none; queries
        #: that shared a call count once); read by the API's metrics.
        self.calls = 0
        self.query_batcher: QueryBatcher | None = None
        self._query_pool: ThreadPoolExecutor | None = None
        if isinstance(embeddings, BatchQueryEmbeddings) and query_batch_size > 1:
            self.query_batcher = QueryBatcher(
                self._embed_queries,
                max_batch=query_batch_size,
                # Queued behind a call that hangs, a query fails after one deadline more.
                wait_timeout=embeddings.query_timeout,
            )

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, computed in batches of at most `batch_size`.

        A text longer than the model's context is embedded from its beginning (the
        header path comes first), as sentence-transformers does for such models.
        """
        # Long texts go alone: one of them over the model's context makes Ollama refuse
        # the whole batch, after computing it (seconds for a batch of 32).
        alone = [index for index, text in enumerate(texts) if len(text) > self._solo_chars]
        batched = [index for index in range(len(texts)) if len(texts[index]) <= self._solo_chars]
        vectors: dict[int, list[float]] = {}
        for start in range(0, len(batched), self._batch_size):
            indexes = batched[start : start + self._batch_size]
            found = self._embed_batch([texts[index] for index in indexes])
            vectors.update(zip(indexes, found, strict=True))
        for index in alone:
            [vectors[index]] = self._embed_batch([texts[index]])
        return [vectors[index] for index in range(len(texts))]

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        # A batch with a text over the model's context is refused whole: halve it until
        # the refused texts are alone, so the others still go in batches.
        try:
            return self._call(functools.partial(self._embeddings.embed_documents, batch))
        except ModelError as exc:
            if not _too_long(exc):
                raise
        if len(batch) == 1:
            return [self._embed_shortened(batch[0])]
        middle = len(batch) // 2
        return self._embed_batch(batch[:middle]) + self._embed_batch(batch[middle:])

    def _embed_shortened(self, text: str) -> list[float]:
        # Ollama truncates over-long inputs itself, but for some tokenizers its
        # truncated text re-tokenizes longer than the context and is refused; cut on
        # our side (keeping the beginning) until it fits.
        for _ in range(12):
            if len(text) < 64:
                break
            text = text[: len(text) * 3 // 4]
            try:
                return self._call(functools.partial(self._embeddings.embed_documents, [text]))[0]
            except ModelError as exc:
                if not _too_long(exc):
                    raise
        raise ModelError(f"embedding model {self.model!r} refused a text even when shortened")

    def embed_query(self, text: str) -> list[float]:
        """The vector of a query, from the cache when it was asked before."""
        with self._lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                return cached
        if self.query_batcher is not None and len(text) <= self._solo_chars:
            vector = self.query_batcher.embed(text)
        else:
            vector = self._call(lambda: self._embeddings.embed_query(text))
        self._remember(text, vector)
        return vector

    def _embed_queries(self, texts: list[str]) -> Sequence[list[float] | SynopsisError]:
        """One call for the queries of concurrent callers (`QueryBatcher`'s `embed_many`)."""
        assert isinstance(self._embeddings, BatchQueryEmbeddings)
        model = self._embeddings
        try:
            return self._call(functools.partial(model.embed_queries, texts))
        except ModelError as exc:
            if len(texts) == 1 or not _too_long(exc):
                raise
        # One query over the model's context makes the model refuse the whole call: the
        # others must not fail with it. Each alone, as without sharing.
        results: list[list[float] | SynopsisError] = []
        for text in texts:
            try:
                results.extend(self._call(functools.partial(model.embed_queries, [text])))
            except ModelError as exc:
                results.append(exc)
        return results

    async def aembed_query(self, text: str) -> list[float]:
        """Async `embed_query` (the model call runs in a worker thread)."""
        with self._lock:
            cached = self._cache.get(text)
        if cached is not None:
            return cached
        if self.query_batcher is None:
            return await asyncio.to_thread(self.embed_query, text)
        # Its own threads: a query waiting for a shared call blocks one, and the event
        # loop's default pool (CPUs + 4 threads) would let only that many requests' queries
        # wait at once, and so share a call.
        with self._lock:
            if self._query_pool is None:
                self._query_pool = ThreadPoolExecutor(
                    max_workers=_QUERY_THREADS, thread_name_prefix="synopsis-query-embed"
                )
            pool = self._query_pool
        return await asyncio.get_running_loop().run_in_executor(pool, self.embed_query, text)

    def close(self) -> None:
        """Close the embedding model's HTTP clients (and the threads of async queries)."""
        if self._query_pool is not None:
            self._query_pool.shutdown(wait=False)
        close_ollama_clients(self._embeddings)
        if isinstance(self._embeddings, OllamaEmbeddingModel):
            self._embeddings.close()

    def dimension(self) -> int:
        """The model's vector dimension (one probe call, then remembered)."""
        if self._dimension is None:
            self._dimension = len(self._call(lambda: self._embeddings.embed_query("dimension")))
        return self._dimension

    def _remember(self, text: str, vector: list[float]) -> None:
        with self._lock:
            self._cache[text] = vector
            self._cache.move_to_end(text)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

    def _call(self, call: Callable[[], _T]) -> _T:
        with self._lock:
            self.calls += 1
        try:
            return call()
        except httpx.TimeoutException as exc:
            raise ModelError(
                f"embedding model {self.model!r} timed out ({type(exc).__name__}): the model "
                "server does not answer"
            ) from exc
        except (httpx.HTTPError, ConnectionError) as exc:
            raise ModelError(f"embedding model {self.model!r} is unreachable: {exc}") from exc
        except Exception as exc:  # the ollama client raises ResponseError and bare errors
            raise ModelError(f"embedding model {self.model!r} failed: {exc}") from exc


def _too_long(error: ModelError) -> bool:
    return "context length" in str(error)
