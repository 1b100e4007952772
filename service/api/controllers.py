"""One controller per resource: health, readiness, metrics, search, ask, stats (indexed
documents, registered sources, jobs and conversations have modules of their own).

Handlers receive the app's one `Synopsis` through the `synopsis` dependency. Blocking
calls run in worker threads so the event loop stays free: Weaviate reads on the default
executor, model calls on `LlmWork`'s own (`service.api.llm_work`).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any, cast

import httpx
import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import JSONBody
from litestar.response import ServerSentEvent, ServerSentEventMessage
from litestar.response.base import ASGIResponse
from litestar.status_codes import HTTP_200_OK, HTTP_503_SERVICE_UNAVAILABLE

from service.api.crosssite import ANY_HOST
from service.api.exceptions import RETRY_AFTER_SECONDS, synopsis_error_handler
from service.api.limits import check_answer_limits, check_search_limits
from service.api.llm_work import LlmWork, Ticket
from service.api.metrics import record_answer, render
from service.api.openapi import KEY_REQUIRED, EventStreamOperation, error_responses
from service.api.request_ids import request_id
from service.api.schemas import (
    AnswerToken,
    AskDone,
    AskRequestBody,
    AskResponse,
    Health,
    Readiness,
    SearchHit,
    SearchRequestBody,
)
from service.api.security import caller_id, require_read
from service.api.watch import weaviate_watch
from service.errors import EmbeddingMismatchError
from service.query.answer import Answer
from service.synopsis import Synopsis

__all__ = [
    "AskController",
    "HealthController",
    "MetricsController",
    "ReadyController",
    "SearchController",
    "StatsController",
    "provide_ollama_http",
    "provide_synopsis",
]


_log = logging.getLogger(__name__)

SynopsisDependency = NamedDependency[Synopsis]
OllamaHttpDependency = NamedDependency[httpx.AsyncClient]
LlmWorkDependency = NamedDependency[LlmWork]


def provide_synopsis(state: State) -> Synopsis:
    """The `Synopsis` the lifespan opened (or the one injected into `create_app`)."""
    synopsis: Synopsis = state.synopsis
    return synopsis


def provide_ollama_http(state: State) -> httpx.AsyncClient:
    """The HTTP client, based at Ollama's URL, that `/health` probes Ollama with."""
    client: httpx.AsyncClient = state.ollama_http
    return client


class HealthController(Controller):
    """Liveness: the process answers. No key needed, nothing else checked."""

    path = "/health"
    tags = ("health",)

    # Any Host: an orchestrator probes a pod by its address (`service.api.crosssite`).
    @get(operation_id="getHealth", summary="The process answers", opt={ANY_HOST: True})
    async def health(self) -> Health:
        """Always 200 `{"status": "ok"}` while the process serves requests."""
        return Health()


class ReadyController(Controller):
    """Readiness: Weaviate and Ollama answer and the index is usable. No key needed."""

    path = "/ready"
    tags = ("health",)

    @get(
        operation_id="getReady",
        summary="Weaviate, Ollama and the index",
        opt={ANY_HOST: True},  # as /health
        responses={
            HTTP_503_SERVICE_UNAVAILABLE: ResponseSpec(
                Readiness,
                description="Weaviate or Ollama does not answer, or the index is unusable",
            )
        },
    )
    async def ready(
        self,
        request: Request[Any, Any, Any],
        synopsis: SynopsisDependency,
        ollama_http: OllamaHttpDependency,
    ) -> Response[Readiness]:
        """200 when Weaviate is ready, Ollama answers and the schema fits, else 503 (with
        `Retry-After`) saying which part failed, as a category (`unreachable`, `not ready`,
        `HTTP 500`, `mismatch`, `unreadable`): the route needs no key, so what failed and
        where (exception texts name internal addresses) goes to the log, with the request id.

        A fresh deployment is ready before anything is indexed: the collections are
        created by the first ingest, which needs the embedding model's dimension, so
        creating them at startup would tie startup to Ollama and race between workers.
        What would make every search fail — collections built with another embedding
        model or an older schema — makes it unready.
        """
        rid = request_id(request.scope)
        weaviate, ollama = await asyncio.gather(
            _weaviate_health(synopsis, rid), _ollama_health(ollama_http, rid)
        )
        if weaviate != "ok":
            watch = weaviate_watch(request.app.state)
            if watch is not None:
                watch.failed(f"/ready: {weaviate}")
        schema = await _schema_health(synopsis, rid) if weaviate == "ok" else "unknown"
        ok = weaviate == ollama == "ok" and schema in ("ok", _EMPTY_INDEX)
        return Response(
            Readiness(
                status="ok" if ok else "unavailable",
                weaviate=weaviate,
                ollama=ollama,
                schema=schema,
            ),
            status_code=HTTP_200_OK if ok else HTTP_503_SERVICE_UNAVAILABLE,
            headers=None if ok else {"Retry-After": str(RETRY_AFTER_SECONDS)},
        )


_EMPTY_INDEX = "empty: nothing is indexed yet"


def _not_ready(rid: str, part: str, category: str, exc: Exception) -> str:
    """`category`, after logging what `exc` says (for the operator, not the caller)."""
    _log.warning(
        "request %s: GET /ready: %s %s: %s: %s",
        rid,
        part,
        category,
        type(exc).__name__,
        " ".join(str(exc).split()),
    )
    return category


async def _weaviate_health(synopsis: Synopsis, rid: str) -> str:
    try:
        ready = await asyncio.to_thread(synopsis.weaviate_ready)
    except Exception as exc:  # any failure to answer is "not reachable", reported as such
        return _not_ready(rid, "Weaviate", "unreachable", exc)
    return "ok" if ready else "not ready"


async def _ollama_health(http: httpx.AsyncClient, rid: str) -> str:
    try:
        response = await http.get("/api/version")
    except httpx.HTTPError as exc:
        return _not_ready(rid, "Ollama", "unreachable", exc)
    return "ok" if response.is_success else f"HTTP {response.status_code}"


async def _schema_health(synopsis: Synopsis, rid: str) -> str:
    try:
        exists = await asyncio.to_thread(synopsis.index_exists)
    except EmbeddingMismatchError as exc:
        return _not_ready(rid, "the index", "mismatch", exc)
    except Exception as exc:  # Weaviate failed between the two checks
        return _not_ready(rid, "the index", "unreadable", exc)
    return "ok" if exists else _EMPTY_INDEX


class MetricsController(Controller):
    """Prometheus metrics (`service.api.metrics`); needs a read key when keys are set."""

    path = "/metrics"
    security = KEY_REQUIRED
    tags = ("health",)
    guards = (require_read,)

    @get(
        operation_id="getMetrics",
        summary="Prometheus metrics",
        media_type="text/plain",
        responses=error_responses(401),
    )
    async def metrics(self, request: Request[Any, Any, Any]) -> Response[bytes]:
        """Requests and latencies by route and status, LLM and embedding calls, summary
        cache hits, jobs by state; Prometheus text, or OpenMetrics when accepted."""
        body, content_type = await asyncio.to_thread(
            render, request.app.state, request.headers.get("accept", "")
        )
        return Response(body, media_type=content_type)


class SearchController(Controller):
    """Hybrid search over summaries that returns the original chunks."""

    path = "/search"
    security = KEY_REQUIRED
    tags = ("search",)
    guards = (require_read,)

    @post(
        operation_id="search",
        summary="Search the index",
        status_code=HTTP_200_OK,
        responses=error_responses(400, 401, 409, 413, 415, 503),
    )
    async def search(
        self,
        data: JSONBody[SearchRequestBody],
        synopsis: SynopsisDependency,
    ) -> list[SearchHit]:
        """The originals that best match the query, best first.

        With `expand: section` each hit is its whole section, and with `max_tokens` the
        hits are cut to that budget (`max_tokens`' description); each section comes once,
        and what does not fit is left out. Without `k`, such a search looks at one hit
        per 250 tokens of budget (at least 5, at most 100).
        """
        check_search_limits(data.query, data.k, synopsis.settings)
        context = data.to_context(synopsis.settings)
        if context is None:
            hits = await synopsis.asearch(data.to_request(synopsis.settings))
            return [SearchHit.from_hit(hit) for hit in hits]
        found = await synopsis.asearch_context(data.to_request(synopsis.settings), context)
        return [SearchHit.from_passage(passage) for passage in found.passages]


class AskController(Controller):
    """Grounded answers with citations."""

    path = "/ask"
    security = KEY_REQUIRED
    tags = ("ask",)
    guards = (require_read,)

    @post(
        operation_id="ask",
        summary="Answer a question from the indexed documents",
        status_code=HTTP_200_OK,
        operation_class=EventStreamOperation,
        responses={
            HTTP_200_OK: ResponseSpec(
                AskResponse,
                description="The answer; with `stream: true`, server-sent events instead "
                "(text/event-stream, see the description)",
            ),
            **error_responses(400, 401, 409, 413, 415, 429, 503),
        },
    )
    async def ask(
        self,
        data: JSONBody[AskRequestBody],
        synopsis: SynopsisDependency,
        llm_work: LlmWorkDependency,
        request: Request[Any, Any, Any],
    ) -> AskResponse | ServerSentEvent:
        """Retrieve passages, then answer from them only; `[n]` cites `citations[n-1]`.

        The model's reply is checked against the passages; when the check fails the answer
        is the best passage's lead sentences and code block instead (`kind`: generated,
        extractive or refusal).

        With `"stream": true` the answer comes as server-sent events (`text/event-stream`),
        each event's data one JSON value:

        1. `token` — `{"text": ..., "draft": true}`, a piece of the model's reply as it is
           written. Every such token is a draft: the reply is checked only once it is
           complete, so a client shows it as provisional (a passage may hold
           instructions to the model that the check refuses). A refusal without the model
           is one token with `"draft": false`: its line is the answer.
        2. `citations` — a list of hits, as `citations` in the JSON answer: what the final
           answer cites.
        3. `done` — the checked answer (`AskDone`): `answer`, `kind`, `support`,
           `grounding`, `llm_called`, `missing_terms`; `draft`: `accepted` (the draft
           passed the check and is the answer), `replaced` (the client replaces the
           streamed text with `answer`) or `none`; and `replaced`, true in that second case.

        A model failure after the stream began is one `error` event (an `ErrorBody`) in
        place of `citations` and `done`; a request that fails before (limits, retrieval)
        gets an ordinary error response. A client that disconnects stops the generation.

        A key may have `SYNOPSIS_API_LLM_PER_KEY` model calls (answers, conversation turns,
        document summaries) running or waiting at once; one more is 429 with `Retry-After`.
        """
        check_answer_limits(data.question, data.k, synopsis.settings)
        search = data.to_request(synopsis.settings)
        owner = caller_id(request)
        if not data.stream:
            answer = await llm_work.run(owner, synopsis.ask, data.question, search)
            record_answer(answer)
            return AskResponse.from_answer(answer)
        ticket = llm_work.claim(owner)  # 429 now, before the stream begins
        try:
            events = await synopsis.aask_stream(data.question, search)
        except BaseException:
            ticket.release()
            raise
        stream = _answer_events(events, request, ticket)
        # A stream the server never starts (the client left first) still gives its share
        # back, when it is collected.
        weakref.finalize(stream, ticket.release)
        return _EventStream(stream)


class _EventStream(ServerSentEvent):
    """A `ServerSentEvent` that keeps its `text/event-stream` type: Litestar's streaming
    responses take the route's media type (here JSON, the non-streamed answer's) first."""

    def to_asgi_response(self, *args: Any, **kwargs: Any) -> ASGIResponse:
        kwargs["media_type"] = self.media_type
        return super().to_asgi_response(*args, **kwargs)


def _event(event: str, value: msgspec.Struct | list[SearchHit]) -> ServerSentEventMessage:
    return ServerSentEventMessage(event=event, data=msgspec.json.encode(value).decode())


async def _answer_events(
    events: AsyncIterator[str | Answer], request: Request[Any, Any, Any], ticket: Ticket
) -> AsyncIterator[ServerSentEventMessage]:
    """The server-sent events of a streamed answer (`AskController.ask`), written while
    `ticket` holds a model slot."""
    drafted: list[str] = []
    # A disconnect cancels this generator's task; closing `events` then closes the
    # model's stream, which stops the generation.
    async with (
        ticket.slot(),
        aclosing(cast(AsyncGenerator[str | Answer], events)) as items,
    ):
        try:
            async for item in items:
                if isinstance(item, str):  # a piece of the model's reply: unchecked
                    drafted.append(item)
                    yield _event("token", AnswerToken(text=item, draft=True))
                    continue
                record_answer(item)
                streamed: str | None = "".join(drafted)
                if not drafted and not item.llm_called:  # a refusal: its line is the answer
                    yield _event("token", AnswerToken(text=item.text, draft=False))
                    streamed = None
                yield _event("citations", [SearchHit.from_hit(hit) for hit in item.citations])
                yield _event("done", AskDone.from_answer(item, streamed=streamed))
        except Exception as exc:  # the response has begun: the error can only be an event
            body = synopsis_error_handler(request, exc).content
            yield _event("error", body)


class StatsController(Controller):
    """Index statistics."""

    path = "/stats"
    security = KEY_REQUIRED
    tags = ("stats",)
    guards = (require_read,)

    @get(
        operation_id="getStats",
        summary="Collection counts",
        sync_to_thread=True,
        responses=error_responses(401, 503),
    )
    def stats(self, synopsis: SynopsisDependency) -> dict[str, Any]:
        """Object counts per collection and the embedding model the index was built with."""
        return dict(synopsis.stats())
