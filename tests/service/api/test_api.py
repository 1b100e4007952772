"""The HTTP API: error mapping and validation with a fake Synopsis; the real stack end to end."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, cast
from urllib.parse import quote

import httpx
import msgspec
import ollama
import pytest
from litestar.testing import AsyncTestClient, TestClient

from service.api import create_app
from service.api.watch import WeaviateWatch
from service.conversations import Conversation, Turn
from service.errors import (
    BuildError,
    ConfigurationError,
    EmbeddingMismatchError,
    LoaderError,
    ModelError,
    PortInUseError,
    SearchError,
    StackError,
    StoreError,
    SynopsisError,
)
from service.index.records import SourceRecord
from service.jobs.store import JobStore
from service.query.answer import DONT_KNOW, Answer, Answerer
from service.query.document_summary import DocumentSummary
from service.query.grounding import Grounding, extractive_answer
from service.query.search import Hit, SearchRequest
from service.settings import Settings
from service.sources import RegisteredSource, edited
from service.synopsis import Synopsis
from tests.service.api.apps import client_over
from tests.service.query.chat_models import ScriptedStreamModel
from tests.service.serving import IN_PROCESS_URL
from tests.service.sources.memory import MemoryRegistry
from tests.support.models import cheap_model_settings

HIT = Hit(
    id="00000000-0000-0000-0000-000000000001",
    source="docs/tutorial.md",
    title="Tutorial",
    headers=["Tutorial", "Loops"],
    chunk_index=2,
    content="for i in range(3): ...",
    summary="How to loop with range().",
    summary_kind="generated",
    summary_model="smollm2-135m-instruct",
    score=0.9,
    leg="summaries",
    distance=0.25,
    scores={"summaries": 0.9},
    version="3.11",
    indexed_at=dt.datetime(2025, 1, 2, 3, 4, 5, 250000, tzinfo=dt.UTC),
)
HIT_JSON = {
    "id": "00000000-0000-0000-0000-000000000001",
    "source": "docs/tutorial.md",
    "title": "Tutorial",
    "headers": ["Tutorial", "Loops"],
    "chunk_index": 2,
    "content": "for i in range(3): ...",
    "summary": "How to loop with range().",
    "summary_kind": "generated",
    "summary_model": "smollm2-135m-instruct",
    "score": 0.9,
    "leg": "summaries",
    "distance": 0.25,
    "scores": {"summaries": 0.9},
    "page_start": None,
    "page_end": None,
    "anchor": "",
    "version": "3.11",
    "indexed_at": "2025-01-02T03:04:05.250000Z",
}
RECORD = SourceRecord(
    source="docs/tutorial.md",
    title="Tutorial",
    content_hash="abc",
    settings_key="k",
    status="complete",
    chunks=3,
    ingested_at=dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
    version="3.11",
    version_group="python",
)


class FakeConversations:
    """An in-memory `ConversationStore`."""

    def __init__(self) -> None:
        self.saved: dict[str, Conversation] = {}

    def get(self, conversation_id: str) -> Conversation | None:
        return self.saved.get(conversation_id)

    def delete(self, conversation_id: str) -> None:
        self.saved.pop(conversation_id, None)


class FakeSynopsis(Synopsis):
    """Stands in for `Synopsis` where the point is the API's own mapping and validation.

    A `Synopsis` (the API's dependencies are checked to be one) without its connections:
    `Synopsis.__init__` is not called, so a method not written here has no Weaviate and
    fails if a test reaches it.
    """

    def __init__(
        self,
        *,
        error: SynopsisError | None = None,
        ready: bool | Exception = True,
        index: bool | Exception = True,
        deleted: tuple[int, int] = (4, 4),
    ) -> None:
        self.settings = Settings().with_overrides(
            search_k=7, search_alpha=0.3, max_vector_distance=0.6, answer_max_vector_distance=0.7
        )
        self.ready = ready
        self.index = index
        self.error = error
        self.deleted = deleted
        self.requests: list[SearchRequest] = []
        self.calls: list[str] = []
        self.closed = False
        # What a streamed answer's model writes (a real Answerer streams it).
        self.model = ScriptedStreamModel(tokens=["Use", " ", "range(3)", " ", "[1]."])
        self._fake_conversations = FakeConversations()
        self.started = 0
        self.registry = MemoryRegistry()

    @property
    def conversations(self) -> FakeConversations:  # type: ignore[override]
        return self._fake_conversations

    def weaviate_ready(self) -> bool:
        if isinstance(self.ready, Exception):
            raise self.ready
        return self.ready

    def index_exists(self) -> bool:
        if isinstance(self.index, Exception):
            raise self.index
        return self.index

    def _call(self, name: str) -> None:
        self.calls.append(name)
        if self.error is not None:
            raise self.error

    async def asearch(self, request: SearchRequest) -> list[Hit]:
        request.validate()  # as the real one does, before any connection
        self.requests.append(request)
        self._call("asearch")
        return [HIT]

    def ask(self, question: str, request: SearchRequest | None = None) -> Answer:
        assert request is not None
        self.requests.append(request)
        self._call("ask")
        return Answer(
            text=f"{question}: use range() [1]",
            citations=[HIT],
            llm_called=True,
            kind="generated",
            grounding=Grounding(passed=True, support=1.0, coverage=1.0),
        )

    async def aask_stream(
        self, question: str, request: SearchRequest | None = None
    ) -> AsyncIterator[str | Answer]:
        assert request is not None
        self.requests.append(request)
        self._call("aask_stream")
        return Answerer(self.model, model_name="fake").astream(question, [HIT])

    def start_conversation(self, owner: str) -> Conversation:
        self._call("start_conversation")
        self.started += 1
        at = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
        conversation = Conversation(
            id=f"00000000-0000-0000-0000-{self.started:012d}",
            owner=owner,
            created_at=at,
            updated_at=at,
        )
        self.conversations.saved[conversation.id] = conversation
        return conversation

    def converse(self, conversation: Conversation, question: str) -> tuple[Conversation, Answer]:
        self._call("converse")
        query = f"{conversation.queries[-1]} {question}" if conversation.turns else question
        answer = self.ask(query, SearchRequest(query=query))
        turn = Turn(
            question=question,
            query=query,
            rewrite="previous" if conversation.turns else "none",
            answer=answer.text,
            kind=answer.kind,
            citations=[f"{hit.source} § {' > '.join(hit.headers)}" for hit in answer.citations],
            asked_at=dt.datetime(2026, 1, 1, 0, len(conversation.turns) + 1, tzinfo=dt.UTC),
        )
        updated = conversation.with_turn(turn, max_turns=2)
        self.conversations.saved[updated.id] = updated
        return updated, answer

    def sources(self) -> list[SourceRecord]:
        self._call("sources")
        return [RECORD]

    def delete_source(self, source: str) -> tuple[int, int]:
        self._call(f"delete_source {source}")
        return self.deleted

    @property
    def registered_sources(self) -> MemoryRegistry:
        self._call("registered_sources")
        return self.registry

    def edit_registered(
        self,
        name: str,
        *,
        interval: str | None = None,
        version: str | None = None,
        group: str | None = None,
    ) -> RegisteredSource:
        """As the real one, with no index to relabel: the edited registration is stored."""
        self._call(f"edit_registered {name}")
        registered = self.registry.require(name)
        source = edited(registered, interval=interval, version=version, group=group)
        source = dataclasses.replace(source, relabel_pending=False)
        self.registry.save(source)
        return source

    def remove_registered(self, name: str, *, keep_documents: bool = False) -> int:
        """As the real one: the registration goes, and its pages unless kept."""
        self._call(f"remove_registered {name}")
        source = self.registry.require(name)
        self.registry.remove(name)
        return 0 if keep_documents else len(source.pages)

    def stats(self) -> dict[str, object]:
        self._call("stats")
        return {"originals": 3, "summaries": 3, "sources": 1}

    def close(self) -> None:
        self.closed = True


def _ollama(handler: Callable[[httpx.Request], httpx.Response]) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url="http://ollama.test", transport=httpx.MockTransport(handler))


def _ollama_ok(request: httpx.Request) -> httpx.Response:
    assert request.url.path == "/api/version"
    return httpx.Response(200, json={"version": "0.24.0"})


def _error_body(response: httpx.Response) -> dict[str, Any]:
    """The JSON error body without its request id, after checking that id is the header's."""
    body: dict[str, Any] = response.json()
    assert body.pop("request_id") == response.headers["x-request-id"]
    return body


@pytest.fixture
def fake() -> FakeSynopsis:
    return FakeSynopsis()


def _client(fake: FakeSynopsis, ollama: httpx.AsyncClient | None = None) -> TestClient[Any]:
    # The app for the fake's settings, built once (tests/service/api/apps.py).
    return client_over(fake, ollama or _ollama(_ollama_ok))


@pytest.fixture
def client(fake: FakeSynopsis) -> Iterator[TestClient[Any]]:
    with _client(fake) as test_client:
        yield test_client


# -- search -------------------------------------------------------------------------------


def test_search_fills_in_the_settings_defaults(client: TestClient[Any], fake: FakeSynopsis) -> None:
    response = client.post("/search", json={"query": "range()"})
    assert (response.status_code, response.json()) == (200, [HIT_JSON])
    assert fake.requests == [
        SearchRequest(query="range()", k=7, alpha=0.3, max_vector_distance=0.6)
    ]


def test_search_passes_every_field(client: TestClient[Any], fake: FakeSynopsis) -> None:
    body = {
        "query": "range()",
        "k": 3,
        "mode": "originals",
        "alpha": 0.0,
        "fusion": "ranked",
        "source": "a.md",
        "source_prefix": "docs/",
        "header_prefix": "Tutorial > ",
        "title": "Tutorial",
        "version": "3.11",
        "max_vector_distance": 0.0,
        "explain": True,
    }
    assert client.post("/search", json=body).status_code == 200
    assert fake.requests == [SearchRequest(**body)]  # type: ignore[arg-type]


def test_documents_are_listed_with_their_version_and_when_they_were_indexed() -> None:
    from service.api.document_views import DocumentItem  # noqa: PLC0415

    item = msgspec.to_builtins(DocumentItem.from_record(RECORD, None))
    assert (item["source"], item["version"], item["indexed_at"]) == (
        "docs/tutorial.md",
        "3.11",
        "2025-01-02T03:04:05Z",
    )
    unversioned = DocumentItem.from_record(dataclasses.replace(RECORD, version=""), None)
    assert unversioned.version is None


@pytest.mark.parametrize("version", ["3 11", "", "*3"])
def test_search_refuses_a_version_that_is_no_label(client: TestClient[Any], version: str) -> None:
    response = client.post("/search", json={"query": "range()", "version": version})
    assert response.status_code == 400
    assert "version" in response.text


def test_a_hit_without_distance_or_scores_has_null_and_empty() -> None:
    fake = FakeSynopsis()
    bare = dataclasses.replace(
        HIT,
        summary=None,
        summary_kind=None,
        summary_model=None,
        leg="originals",
        distance=None,
        scores={},
    )

    async def asearch(request: SearchRequest) -> list[Hit]:
        return [bare]

    fake.asearch = asearch  # type: ignore[method-assign]
    with _client(fake) as client:
        hit = client.post("/search", json={"query": "x"}).json()[0]
    assert (hit["summary"], hit["leg"], hit["distance"], hit["scores"]) == (
        None,
        "originals",
        None,
        {},
    )
    assert (hit["summary_kind"], hit["summary_model"]) == (None, None)


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"query": ""},
        {"query": "   "},
        {"query": "\r"},
        {"query": 3},
        {"query": "x", "k": 0},
        {"query": "x", "k": 101},
        {"query": "x", "k": "five"},
        {"query": "x", "mode": "bogus"},
        {"query": "x", "fusion": "average"},
        {"query": "x", "alpha": 1.5},
        {"query": "x", "alpha": -0.1},
        {"query": "x", "max_vector_distance": 2.5},
        {"query": "x", "unknown": 1},
        [],
    ],
)
def test_search_validation_errors_are_400_with_a_json_body(
    client: TestClient[Any], fake: FakeSynopsis, body: Any
) -> None:
    response = client.post("/search", json=body)
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["status_code"] == 400
    assert response.json()["detail"]
    assert fake.calls == []


@pytest.mark.parametrize(
    ("field", "limit"),
    [("source", 2048), ("source_prefix", 2048), ("header_prefix", 2048), ("title", 500)],
)
def test_search_filters_have_a_length_limit(
    client: TestClient[Any], fake: FakeSynopsis, field: str, limit: int
) -> None:
    at_limit = client.post("/search", json={"query": "range()", field: "a" * limit})
    assert at_limit.status_code == 200, at_limit.text
    over = client.post("/search", json={"query": "range()", field: "a" * (limit + 1)})
    assert over.status_code == 400
    assert _error_body(over)["field"] == field
    assert len(fake.requests) == 1


def test_a_query_of_white_space_is_refused_as_the_schema_says(
    client: TestClient[Any], fake: FakeSynopsis
) -> None:
    response = client.post("/search", json={"query": "   "})
    body = response.json()
    assert (response.status_code, body["field"], fake.calls) == (400, "query", [])
    assert "matching regex" in body["extra"][0]["message"], body


def test_invalid_json_is_400(client: TestClient[Any]) -> None:
    response = client.post(
        "/search", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["status_code"] == 400


# -- the one error mapping ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "outcome"),
    [
        (SearchError("bad request"), (400, None)),
        (EmbeddingMismatchError("indexed with another model"), (409, None)),
        (StoreError("weaviate said no"), (503, "weaviate")),
        (StackError("weaviate is down"), (503, None)),
        (BuildError("no go toolchain"), (503, None)),
        (PortInUseError("port taken", port=18080), (503, None)),
        (ModelError("ollama timed out"), (503, "ollama")),
        (ConfigurationError("bad setting"), (500, None)),
        (LoaderError("unreadable", source="a.md"), (500, None)),
        (SynopsisError("something else"), (500, None)),
    ],
)
@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/search", {"query": "x"}),
        ("POST", "/ask", {"question": "x"}),
        ("GET", "/sources", None),
        ("DELETE", "/documents/a.md", None),
        ("GET", "/stats", None),
    ],
)
def test_synopsis_errors_map_to_status_and_json(
    error: SynopsisError, outcome: tuple[int, str | None], method: str, path: str, body: Any
) -> None:
    status, dependency = outcome
    with _client(FakeSynopsis(error=error)) as client:
        response = client.request(method, path, json=body)
    expected = {"status_code": status, "error": type(error).__name__, "detail": str(error)}
    if dependency is not None:
        expected["dependency"] = dependency
    assert (response.status_code, _error_body(response)) == (status, expected)
    assert response.headers.get("retry-after") == ("5" if status == 503 else None)


def test_an_unexpected_error_is_a_plain_500() -> None:
    fake = FakeSynopsis()

    def stats() -> dict[str, object]:
        raise RuntimeError("bug")

    fake.stats = stats  # type: ignore[method-assign]
    with _client(fake) as client:
        response = client.get("/stats")
    assert response.status_code == 500
    assert response.json()["status_code"] == 500


# -- ask, sources, stats ------------------------------------------------------------------


def test_ask(client: TestClient[Any], fake: FakeSynopsis) -> None:
    response = client.post("/ask", json={"question": "How do I loop?", "k": 2})
    assert (response.status_code, response.json()) == (
        200,
        {
            "answer": "How do I loop?: use range() [1]",
            "citations": [HIT_JSON],
            "llm_called": True,
            "missing_terms": [],
            "kind": "generated",
            "support": 1.0,
            "grounding": [],
        },
    )
    assert fake.requests == [
        SearchRequest(query="How do I loop?", k=2, alpha=0.3, max_vector_distance=0.7)
    ]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"question": ""},
        {"question": "x", "k": 21},
        {"question": "x", "max_vector_distance": -1},
        {"question": "x", "mode": "fused"},
    ],
)
def test_ask_validation_errors_are_400(
    client: TestClient[Any], fake: FakeSynopsis, body: dict[str, Any]
) -> None:
    response = client.post("/ask", json=body)
    assert (response.status_code, response.json()["status_code"]) == (400, 400)
    assert fake.calls == []


# -- ask, streamed -------------------------------------------------------------------------


def _events(body: str) -> list[tuple[str, Any]]:
    """The (event, JSON data) pairs of a text/event-stream body."""
    events = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        fields: dict[str, list[str]] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            fields.setdefault(name, []).append(value)
        events.append((fields["event"][0], json.loads("\n".join(fields["data"]))))
    return events


def _done(**changes: Any) -> dict[str, Any]:
    done = {
        "answer": "Use range(3) [1].",
        "draft": "accepted",
        "replaced": False,
        "llm_called": True,
        "missing_terms": [],
        "kind": "generated",
        "support": 1.0,
        "grounding": [],
    }
    return {**done, **changes}


def test_a_streamed_answer_is_tokens_then_citations_then_done(
    client: TestClient[Any], fake: FakeSynopsis
) -> None:
    response = client.post("/ask", json={"question": "How do I loop?", "k": 2, "stream": True})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-request-id"]
    assert _events(response.text) == [
        ("token", {"text": "Use", "draft": True}),
        ("token", {"text": " ", "draft": True}),
        ("token", {"text": "range(3)", "draft": True}),
        ("token", {"text": " ", "draft": True}),
        ("token", {"text": "[1].", "draft": True}),
        ("citations", [HIT_JSON]),
        ("done", _done()),
    ]
    assert fake.requests == [
        SearchRequest(query="How do I loop?", k=2, alpha=0.3, max_vector_distance=0.7)
    ]
    assert (fake.model.calls, fake.model.finished) == (1, True)


def test_a_streamed_reply_that_fails_the_check_is_replaced(fake: FakeSynopsis) -> None:
    fake.model = ScriptedStreamModel(tokens=["Run ", "`seq 1 30` [1]."])
    with _client(fake) as client:
        response = client.post("/ask", json={"question": "How do I loop?", "stream": True})
    *tokens, citations, done = _events(response.text)
    assert tokens == [
        ("token", {"text": "Run ", "draft": True}),
        ("token", {"text": "`seq 1 30` [1].", "draft": True}),
    ]
    assert citations == ("citations", [HIT_JSON])
    assert done == (
        "done",
        _done(
            answer="for i in range(3): ... [1]",
            draft="replaced",
            replaced=True,
            kind="extractive",
            grounding=["code not in the passages: seq 1 30"],
        ),
    )


def test_a_streamed_refusal_is_one_line_without_the_model(
    client: TestClient[Any], fake: FakeSynopsis
) -> None:
    response = client.post("/ask", json={"question": "Loops in Go?", "stream": True})
    assert _events(response.text) == [
        ("token", {"text": DONT_KNOW, "draft": False}),  # the answer itself, not a draft
        ("citations", []),
        (
            "done",
            _done(
                answer=DONT_KNOW,
                draft="none",
                llm_called=False,
                missing_terms=["Go"],
                kind="refusal",
                support=None,
            ),
        ),
    ]
    assert fake.model.calls == 0


def test_a_model_failure_mid_stream_is_an_error_event(fake: FakeSynopsis) -> None:
    fake.model = ScriptedStreamModel(tokens=["Use"], error=ollama.ResponseError("gone", 500))
    with _client(fake) as client:
        response = client.post("/ask", json={"question": "How do I loop?", "stream": True})
    token, (event, body) = _events(response.text)
    assert token == ("token", {"text": "Use", "draft": True})
    assert (event, body["status_code"], body["error"], body["dependency"]) == (
        "error",
        503,
        "ModelError",
        "ollama",
    )
    assert body["detail"] == "answering with 'fake' failed: gone (status code: 500)"
    assert body["request_id"] == response.headers["x-request-id"]


def test_a_failure_before_the_stream_is_an_ordinary_error_response() -> None:
    with _client(FakeSynopsis(error=SearchError("bad request"))) as client:
        response = client.post("/ask", json={"question": "x", "stream": True})
    assert (response.status_code, _error_body(response)) == (
        400,
        {"status_code": 400, "error": "SearchError", "detail": "bad request"},
    )


def test_a_client_that_disconnects_stops_the_generation(fake: FakeSynopsis) -> None:
    """At the ASGI level: the client reads three tokens, then disconnects."""
    fake.model = ScriptedStreamModel(tokens=["x "] * 1000, delay=0.005)
    app = create_app(
        synopsis=cast(Synopsis, fake), ollama_http=_ollama(_ollama_ok), background=False
    )
    body = json.dumps({"question": "How do I loop?", "stream": True}).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/ask",
        "raw_path": b"/ask",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }

    async def run() -> tuple[int, int]:
        disconnected = asyncio.Event()
        requested = False
        tokens = 0

        async def receive() -> dict[str, Any]:
            nonlocal requested
            if not requested:
                requested = True
                return {"type": "http.request", "body": body, "more_body": False}
            await disconnected.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal tokens
            tokens += message.get("body", b"").count(b"event: token")
            if tokens >= 3:
                disconnected.set()

        async with AsyncTestClient(app):  # runs the lifespan: app.state gets the fake
            await asyncio.wait_for(app(scope, receive, send), timeout=10)  # type: ignore[arg-type]
            produced = fake.model.produced
            await asyncio.sleep(0.1)  # a generation left running would go on meanwhile
        return tokens, produced

    tokens, produced = asyncio.run(run())
    assert tokens == 3
    assert produced <= 4  # the token being written when the client left, at most
    assert fake.model.produced == produced
    assert (fake.model.closed, fake.model.finished) == (True, False)


def test_delete_document(client: TestClient[Any], fake: FakeSynopsis) -> None:
    response = client.delete("/documents/docs%2Fa%20b.md")
    assert (response.status_code, response.json()) == (
        200,
        {"source": "docs/a b.md", "originals": 4, "summaries": 4},
    )
    assert fake.calls == ["delete_source docs/a b.md"]


def test_deleting_a_document_that_is_not_indexed_is_404() -> None:
    with _client(FakeSynopsis(deleted=(0, 0))) as client:
        response = client.delete("/documents/nope.md")
    assert response.status_code == 404
    assert response.json()["detail"] == "nope.md is not indexed"


def test_sources_no_longer_aliases_documents(client: TestClient[Any], fake: FakeSynopsis) -> None:
    """`/sources` is the registered sources (test_api_sources.py): the old alias's delete
    of an indexed document by query parameter deletes nothing, and its list is not the
    indexed documents."""
    response = client.delete("/sources", params={"source": "docs/a.md"})
    assert response.status_code == 405
    assert client.get("/sources").json() == []  # no source registered, one document indexed
    assert fake.calls == ["registered_sources"]


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("/documents/https%3A%2F%2Fdocs.example%2Fa.html", "https://docs.example/a.html"),
        ("/documents/https%3A%2F%2Fdocs.example%2F", "https://docs.example/"),
        ("/documents/https://docs.example/guide/", "https://docs.example/guide/"),
        ("/documents/%2Fusr%2Fshare%2Fdoc%2Fa.html", "/usr/share/doc/a.html"),
        ("/documents//usr/share/doc/a.html", "/usr/share/doc/a.html"),
        ("/documents/docs/a%20b.md", "docs/a b.md"),
        ("/documents/a%3Fb%23c.md", "a?b#c.md"),
        ("/documents/caf%C3%A9.md", "café.md"),
    ],
)
def test_a_document_path_names_its_source_exactly(
    client: TestClient[Any], fake: FakeSynopsis, path: str, source: str
) -> None:
    # Litestar collapses "//" and drops a final "/" before routing; the source keeps them.
    response = client.delete(path)
    assert (response.status_code, response.json()["source"]) == (200, source)
    assert fake.calls == [f"delete_source {source}"]


def test_a_document_path_that_is_not_utf8_is_400(
    client: TestClient[Any], fake: FakeSynopsis
) -> None:
    response = client.delete("/documents/%FF.md")
    assert (response.status_code, response.json()["field"]) == (400, "source")
    assert fake.calls == []


class _NoJobsWritten(JobStore):
    """A job store in which no job wrote any source."""

    def __init__(self) -> None:  # no Weaviate: `last_jobs` is all a document read asks
        pass

    def last_jobs(self, sources: Sequence[str]) -> dict[str, str]:
        return {}


class SummarizingSynopsis(FakeSynopsis):
    """Indexes RECORD's source and `notes/summary`, a source whose own name ends so."""

    def source(self, source: str) -> SourceRecord | None:
        self._call(f"source {source}")
        indexed = [RECORD, dataclasses.replace(RECORD, source="notes/summary")]
        return next((record for record in indexed if record.source == source), None)

    def source_chunks(self, source: str, *, limit: int, offset: int) -> tuple[list[Any], int]:
        self._call(f"source_chunks {source}")
        return [], 0

    def document_summary(self, source: str, *, style: str = "brief") -> DocumentSummary:
        self._call(f"document_summary {source} {style}")
        return DocumentSummary(
            source=source,
            title="Tutorial",
            text="Loops with range().",
            kind="generated",
            sections=3,
            llm_calls=1,
            cached=False,
            model="fake",
            style=style,  # type: ignore[arg-type]
            support=1.0,
        )


@pytest.mark.parametrize(
    ("path", "calls"),
    [
        (
            "/documents/docs%2Ftutorial.md/summary?style=detailed",
            ["source docs/tutorial.md/summary", "document_summary docs/tutorial.md detailed"],
        ),
        (
            "/documents/docs/tutorial.md/summary",
            ["source docs/tutorial.md/summary", "document_summary docs/tutorial.md brief"],
        ),
        # A source whose own name ends in /summary is shown itself, not summarized.
        ("/documents/notes%2Fsummary", ["source notes/summary", "source_chunks notes/summary"]),
        (
            "/documents/notes%2Fsummary/summary",
            ["source notes/summary/summary", "document_summary notes/summary brief"],
        ),
    ],
)
def test_a_path_ending_in_summary_is_the_summary_of_the_source_before_it(
    path: str, calls: list[str]
) -> None:
    fake = SummarizingSynopsis()
    with _client(fake) as client:
        client.app.state.jobs = _NoJobsWritten()
        response = client.get(path)
    assert response.status_code == 200, response.text
    summarized = calls[-1].startswith("document_summary")
    body = response.json()
    source = body["source"] if summarized else body["document"]["source"]
    assert source == calls[-1].split()[1]
    assert ("summary" in body, "chunks" in body) == (summarized, not summarized)
    assert fake.calls == calls


def test_a_summary_style_that_is_not_one_is_400() -> None:
    fake = SummarizingSynopsis()
    with _client(fake) as client:
        client.app.state.jobs = _NoJobsWritten()
        response = client.get("/documents/docs%2Ftutorial.md/summary?style=long")
    assert (response.status_code, response.json()["field"]) == (400, "style")
    assert fake.calls == []


def test_stats(client: TestClient[Any]) -> None:
    response = client.get("/stats")
    assert (response.status_code, response.json()) == (
        200,
        {"originals": 3, "summaries": 3, "sources": 1},
    )


# -- health and readiness -----------------------------------------------------------------


def test_health_answers_without_checking_anything() -> None:
    def unreachable(request: httpx.Request) -> httpx.Response:
        raise AssertionError("/health must not probe Ollama")

    with _client(FakeSynopsis(ready=False), _ollama(unreachable)) as client:
        response = client.get("/health")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


@pytest.mark.parametrize(
    ("index", "schema"),
    [(True, "ok"), (False, "empty: nothing is indexed yet")],
)
def test_ready_ok(index: bool, schema: str) -> None:
    with _client(FakeSynopsis(index=index)) as client:
        response = client.get("/ready")
    assert (response.status_code, response.json()) == (
        200,
        {"status": "ok", "weaviate": "ok", "ollama": "ok", "schema": schema},
    )
    assert "retry-after" not in response.headers


def _refused(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("connection refused", request=request)


@pytest.mark.parametrize(
    ("fake", "ollama", "expected"),
    [
        (
            FakeSynopsis(ready=False),
            _ollama_ok,
            {"weaviate": "not ready", "ollama": "ok", "schema": "unknown"},
        ),
        (
            FakeSynopsis(ready=ConnectionError("Connection to Weaviate at 10.0.3.4:8080 failed")),
            _ollama_ok,
            {"weaviate": "unreachable", "ollama": "ok", "schema": "unknown"},
        ),
        (
            FakeSynopsis(),
            _refused,
            {"weaviate": "ok", "ollama": "unreachable", "schema": "ok"},
        ),
        (
            FakeSynopsis(),
            lambda request: httpx.Response(500),
            {"weaviate": "ok", "ollama": "HTTP 500", "schema": "ok"},
        ),
        (
            FakeSynopsis(index=EmbeddingMismatchError("built with mxbai")),
            _ollama_ok,
            {"weaviate": "ok", "ollama": "ok", "schema": "mismatch"},
        ),
        (
            FakeSynopsis(index=StoreError("timed out reading http://10.0.3.4:8080/v1/schema")),
            _ollama_ok,
            {"weaviate": "ok", "ollama": "ok", "schema": "unreadable"},
        ),
    ],
)
def test_ready_is_503_with_the_reason(
    fake: FakeSynopsis,
    ollama: Callable[[httpx.Request], httpx.Response],
    expected: dict[str, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """/ready needs no key: its body says which part failed, as a category; the log has
    the exception's text (which may hold internal addresses), with the request id."""
    with _client(fake, _ollama(ollama)) as client:
        response = client.get("/ready")
    assert (response.status_code, response.json()) == (503, {"status": "unavailable", **expected})
    assert response.headers["retry-after"] == "5"
    logged = " ".join(record.getMessage() for record in caplog.records)
    if expected["weaviate"] == "unreachable" or expected["schema"] == "unreadable":
        assert "10.0.3.4" in logged
        assert response.headers["x-request-id"] in logged


def test_ready_finding_weaviate_unreachable_makes_requests_fail_fast_at_once() -> None:
    # The watch probes every few seconds; /ready found Weaviate down before it did, so the
    # next search must not go to the client (whose retries of a dead server take a minute).
    fake = FakeSynopsis(ready=ConnectionError("Connection to Weaviate failed"))
    with _client(fake) as client:
        watch = WeaviateWatch("http://127.0.0.1:1/v1/.well-known/ready", interval=3600)
        client.app.state.weaviate_watch = watch
        assert client.get("/ready").status_code == 503
        response = client.post("/search", json={"query": "range()"})
    assert watch.down
    assert response.status_code == 503
    assert "does not answer (/ready: unreachable" in response.json()["detail"]
    assert fake.calls == []


# -- app shape ----------------------------------------------------------------------------


def test_every_operation_has_an_operation_id(client: TestClient[Any]) -> None:
    schema = client.get("/schema/openapi.json").json()
    operations = {
        (method.upper(), path): operation["operationId"]
        for path, methods in schema["paths"].items()
        for method, operation in methods.items()
    }
    assert all(operations.values())
    assert len(set(operations.values())) == len(operations)
    assert {
        ("GET", "/health"): "getHealth",
        ("GET", "/ready"): "getReady",
        ("GET", "/metrics"): "getMetrics",
        ("POST", "/search"): "search",
        ("POST", "/ask"): "ask",
        ("GET", "/sources"): "listSources",
        ("POST", "/sources"): "registerSource",
        ("GET", "/sources/{name}"): "getSource",
        ("DELETE", "/sources/{name}"): "removeSource",
        ("POST", "/sources/{name}/sync"): "syncSource",
        ("GET", "/documents"): "listDocuments",
        ("GET", "/documents/{source}"): "getDocument",
        ("GET", "/documents/{source}/summary"): "getDocumentSummary",
        ("DELETE", "/documents/{source}"): "deleteDocument",
        ("GET", "/stats"): "getStats",
    }.items() <= operations.items()


def test_a_dependency_of_the_wrong_type_is_an_internal_error() -> None:
    # The app's dependencies are checked per request: a core that is no `Synopsis` is
    # the server's fault (500), and it is never called.
    class NotACore:
        def __init__(self) -> None:
            self.settings = Settings()
            self.calls: list[str] = []

        def stats(self) -> dict[str, object]:
            self.calls.append("stats")
            return {}

    core = NotACore()
    with _client(cast(FakeSynopsis, core)) as client:
        response = client.get("/stats")
    assert (response.status_code, response.json()["error"]) == (500, "InternalServerException")
    assert core.calls == []


def test_an_injected_synopsis_is_left_open(fake: FakeSynopsis) -> None:
    with _client(fake) as client:
        assert client.get("/stats").status_code == 200
    assert fake.closed is False


# -- the real stack -----------------------------------------------------------------------

DOC = """# Kettle manual

## Descaling the kettle

Fill the kettle with one part white vinegar and two parts water, boil it, let it stand
for an hour, then rinse twice. Descale monthly where the water is hard.

## Replacing the filter

Pull the mesh filter up out of the spout and press a new one in until it clicks.
"""


@pytest.fixture(scope="module")
def kettle(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One app over the kettle manual, ingested once for the module's real-stack tests
    (collections `TestApi`, dropped before and after). The summaries and the answer only
    need to exist (`cheap_model_settings`): the tests check the API, not the wording."""
    # On a CPU shared with other work a summary can wait minutes in Ollama's queue; the
    # default timeout would retry it from the back. These tests check the API, not latency.
    configured = cheap_model_settings(settings).with_overrides(
        collection_prefix="TestApi",
        summary_timeout=max(settings.summaries.timeout, 600.0),
    )
    document = tmp_path_factory.mktemp("kettle") / "kettle.md"
    document.write_text(DOC, encoding="utf-8")
    with TestClient(create_app(configured), base_url=IN_PROCESS_URL) as client:
        synopsis: Synopsis = client.app.state.synopsis
        synopsis.store.drop()  # leftovers of an interrupted run
        try:
            assert client.get("/ready").json() == {
                "status": "ok",
                "weaviate": "ok",
                "ollama": "ok",
                "schema": "empty: nothing is indexed yet",
            }
            report = synopsis.ingest([str(document)])
            assert (report.sources, report.failed) == (1, [])
            yield client, str(document), report
        finally:
            synopsis.store.drop()


@pytest.mark.integration
def test_ask_streamed_on_the_real_stack(kettle: Any) -> None:
    """The real answer model through `POST /ask` with `"stream": true`: tokens, then the
    citations, then the checked answer, which is the tokens or their replacement. Which of
    the three kinds the model's reply makes differs between machines; each says exactly
    what it is."""
    client, source, _ = kettle
    settings: Settings = client.app.state.synopsis.settings
    response = client.post(
        "/ask", json={"question": "How do I descale the kettle with vinegar?", "stream": True}
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = _events(response.text)
    names = [name for name, _ in events]
    tokens = names.count("token")
    assert tokens >= 1
    assert names == ["token"] * tokens + ["citations", "done"]
    streamed = "".join(data["text"] for name, data in events if name == "token")
    assert all(data["draft"] is True for name, data in events if name == "token")
    citations, done = events[-2][1], events[-1][1]
    assert done["llm_called"] is True
    if done["kind"] == "refusal":
        assert (done["answer"], citations) == (DONT_KNOW, [])
        return
    assert [citation["source"] for citation in citations] == [source] * len(citations)
    if done["kind"] == "generated":
        assert (done["answer"], done["replaced"], done["draft"]) == (
            streamed.strip(),
            False,
            "accepted",
        )
        assert done["support"] >= settings.answers.min_support
    else:
        assert done["kind"] == "extractive"
        assert (done["replaced"], done["draft"], len(citations)) == (True, "replaced", 1)
        assert done["grounding"]
        assert done["answer"] == extractive_answer(citations[0]["content"])


@pytest.mark.integration
def test_api_on_the_real_stack(kettle: Any) -> None:
    client, source, report = kettle
    # Which section ranks first judged on the chunks (the summaries are the smallest
    # model's, whose wording no test reads).
    response = client.post(
        "/search",
        json={"query": "how do I remove limescale with vinegar?", "k": 2, "mode": "originals"},
    )
    assert response.status_code == 200
    hits = response.json()
    assert hits[0]["headers"] == ["Kettle manual", "Descaling the kettle"]
    assert hits[0]["source"] == source
    assert "vinegar" in hits[0]["content"]
    joint = client.post("/search", json={"query": "descaling the kettle", "k": 2}).json()
    assert sorted(hit["headers"][-1] for hit in joint) == [
        "Descaling the kettle",
        "Replacing the filter",
    ]
    assert all(hit["summary"] for hit in joint)

    listed = client.get("/documents").json()
    assert [(item["source"], item["status"]) for item in listed] == [(source, "complete")]
    assert client.get("/stats").json()["originals"] == report.new_chunks

    # Last: the module's other tests read the document.
    deleted = client.delete(f"/documents/{quote(source, safe='')}")
    assert deleted.status_code == 200
    assert deleted.json()["originals"] == report.new_chunks
    assert client.get("/documents").json() == []
    assert client.post("/search", json={"query": "vinegar"}).json() == []
