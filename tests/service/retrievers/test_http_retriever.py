"""`HttpSummaryRetriever` against `httpx.MockTransport`: the request it sends, the
Documents it makes of the server's hits, the errors it raises. No network."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import subprocess
import sys
from collections.abc import Callable, Sequence

import httpx
import msgspec
import pytest
from langchain_core.documents import Document
from pydantic import SecretStr, ValidationError

from service.api.schemas import ErrorBody, SearchHit
from service.errors import RemoteError, SynopsisError
from service.index.records import SourceChunk
from service.query.context import ContextRequest, build_context
from service.query.search import Hit
from service.retrievers.documents import CONTEXT_METADATA_KEYS, METADATA_KEYS
from service.retrievers.http import HttpSummaryRetriever
from service.retrievers.in_process import hit_to_document, passage_to_document
from service.settings import MAX_CONTEXT_TOKENS, MIN_CONTEXT_TOKENS

BASE = "http://synopsis.test:8000"
KEY = "read-key-123"

HITS = [
    Hit(
        id="6f1c0f8e-4b1a-4c57-9a57-0d5b1c1f2a01",
        source="docs/cache.md",
        title="Quillmark",
        headers=["Quillmark", "Configuring the cache"],
        chunk_index=1,
        content="## Configuring the cache\n\nSet `cache_dir` in `quill.toml`.",
        summary="Explains where Quillmark keeps its cache and how to move it.",
        summary_kind="generated",
        summary_model="qwen2.5-coder-1.5b-instruct",
        score=0.8123456789012345,  # more digits than Hit.to_dict keeps: nothing may round
        leg="summaries",
        distance=0.2345678901234567,
        scores={"summaries": 0.8123456789012345},
        version="2.1",
        indexed_at=dt.datetime(2026, 12, 1, 9, 30, 15, 123456, tzinfo=dt.UTC),
    ),
    Hit(
        id="6f1c0f8e-4b1a-4c57-9a57-0d5b1c1f2a02",
        source="docs/manual.pdf",
        title="Manual",
        headers=[],
        chunk_index=0,
        content="Page one.",
        summary=None,  # its summary is still pending
        score=0.0,
        leg="originals",
        page_start=1,
        page_end=2,
    ),
]


def _hits_body(hits: list[Hit]) -> bytes:
    """The body the server sends: the same encoding of the same response Structs."""
    return msgspec.json.encode([SearchHit.from_hit(hit) for hit in hits])


def _retriever(
    handler: Callable[[httpx.Request], httpx.Response], **fields: object
) -> HttpSummaryRetriever:
    transport = httpx.MockTransport(handler)
    return HttpSummaryRetriever(
        base_url=BASE,
        client=httpx.Client(transport=transport),
        async_client=httpx.AsyncClient(transport=transport),
        **fields,  # type: ignore[arg-type]
    )


def _answer(
    hits: list[Hit], seen: list[httpx.Request]
) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=_hits_body(hits), headers={"X-Request-ID": "r1"})

    return handler


def test_documents_equal_the_in_process_retrievers() -> None:
    retriever = _retriever(_answer(HITS, []), api_key=KEY)

    documents = retriever.invoke("where is the cache?")

    assert documents == [hit_to_document(hit) for hit in HITS]
    assert [tuple(document.metadata) for document in documents] == [METADATA_KEYS] * 2
    assert documents[0] == Document(
        id="6f1c0f8e-4b1a-4c57-9a57-0d5b1c1f2a01",
        page_content="## Configuring the cache\n\nSet `cache_dir` in `quill.toml`.",
        metadata={
            "source": "docs/cache.md",
            "title": "Quillmark",
            "headers": ["Quillmark", "Configuring the cache"],
            "chunk_index": 1,
            "summary": "Explains where Quillmark keeps its cache and how to move it.",
            "summary_kind": "generated",
            "summary_model": "qwen2.5-coder-1.5b-instruct",
            "score": 0.8123456789012345,
            "leg": "summaries",
            "distance": 0.2345678901234567,
            "scores": {"summaries": 0.8123456789012345},
            "page_start": None,
            "page_end": None,
            "anchor": "",
            "version": "2.1",
            "indexed_at": "2026-12-01T09:30:15.123456+00:00",
        },
    )


def test_async_documents_equal_the_sync_ones() -> None:
    seen: list[httpx.Request] = []
    retriever = _retriever(_answer(HITS, seen), api_key=KEY, k=2)

    documents = asyncio.run(retriever.ainvoke("where is the cache?"))

    assert documents == retriever.invoke("where is the cache?")
    assert [request.content for request in seen] == [seen[1].content] * 2


def test_request_carries_the_key_and_only_the_fields_given() -> None:
    seen: list[httpx.Request] = []
    retriever = _retriever(
        _answer([], seen),
        api_key=KEY,
        k=3,
        mode="fused",
        source_prefix="docs/",
        max_vector_distance=0.0,  # 0 (gate off) is a value, not "left out"
    )

    assert retriever.invoke("where is the cache?") == []

    [request] = seen
    assert (request.method, str(request.url)) == ("POST", f"{BASE}/search")
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert json.loads(request.content) == {
        "query": "where is the cache?",
        "k": 3,
        "mode": "fused",
        "source_prefix": "docs/",
        "max_vector_distance": 0.0,
    }


def test_no_key_sends_no_authorization_header() -> None:
    seen: list[httpx.Request] = []

    _retriever(_answer([], seen)).invoke("q")

    assert "Authorization" not in seen[0].headers
    assert json.loads(seen[0].content) == {"query": "q"}


def test_the_key_stays_out_of_repr_and_dumps() -> None:
    for key in (KEY, SecretStr(KEY)):
        retriever = HttpSummaryRetriever(base_url=BASE, api_key=key)

        assert isinstance(retriever.api_key, SecretStr)
        assert KEY not in repr(retriever)
        assert KEY not in str(retriever.model_dump())


@pytest.mark.parametrize("base_url", [BASE, f"{BASE}/", f"{BASE}/synopsis"])
def test_search_url(base_url: str) -> None:
    expected = f"{base_url.rstrip('/')}/search"

    assert HttpSummaryRetriever(base_url=base_url).search_url == expected


@pytest.mark.parametrize(
    ("status", "error", "detail"),
    [
        (401, "Unauthorized", "a valid API key is required"),
        (403, "Forbidden", "this key may only read"),
        (400, "Bad Request", "k is 500, more than SYNOPSIS_API_MAX_K (100)"),
        (503, "Service Unavailable", "Weaviate is unavailable"),
        (500, "Internal Server Error", "internal error"),
    ],
)
def test_error_responses_name_status_detail_and_request_id(
    status: int, error: str, detail: str
) -> None:
    body = msgspec.json.encode(
        ErrorBody(status_code=status, error=error, detail=detail, request_id="req-42")
    )
    retriever = _retriever(lambda request: httpx.Response(status, content=body), api_key=KEY)

    with pytest.raises(RemoteError) as caught:
        retriever.invoke("q")

    assert isinstance(caught.value, SynopsisError)
    assert (caught.value.status_code, caught.value.detail, caught.value.request_id) == (
        status,
        detail,
        "req-42",
    )
    assert str(caught.value) == (
        f"Synopsis at {BASE}/search answered {status} {error}: {detail} (request id req-42)"
    )


def test_a_proxys_error_page_gives_its_text_and_the_header_request_id() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, text="upstream down\n", headers={"X-Request-ID": "px-1"})

    with pytest.raises(RemoteError) as caught:
        _retriever(handler).invoke("q")

    assert str(caught.value) == (
        f"Synopsis at {BASE}/search answered 502 Bad Gateway: upstream down (request id px-1)"
    )


def test_async_error_responses_are_the_same_error() -> None:
    body = msgspec.json.encode(
        ErrorBody(status_code=401, error="Unauthorized", detail="no key", request_id="req-7")
    )
    retriever = _retriever(lambda request: httpx.Response(401, content=body))

    with pytest.raises(RemoteError) as caught:
        asyncio.run(retriever.ainvoke("q"))

    assert (caught.value.status_code, caught.value.request_id) == (401, "req-7")


@pytest.mark.parametrize(
    "exc", [httpx.ConnectError("connection refused"), httpx.ReadTimeout("timed out")]
)
@pytest.mark.parametrize("run", ["sync", "async"])
def test_transport_errors_name_the_url(exc: httpx.TransportError, run: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    retriever = _retriever(handler)
    call: Callable[[str], object] = (
        retriever.invoke if run == "sync" else lambda query: asyncio.run(retriever.ainvoke(query))
    )

    with pytest.raises(RemoteError) as caught:
        call("q")

    assert caught.value.status_code is None
    assert caught.value.__cause__ is exc
    assert str(caught.value) == (
        f"cannot reach Synopsis at {BASE}/search: {type(exc).__name__}: {exc}"
    )


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"<html>hello</html>", "JSONDecodeError"),
        (b'{"hits": []}', "TypeError: a JSON dict, not a list"),
        (b'[{"id": "x"}]', "KeyError: 'content'"),
    ],
)
def test_a_body_that_is_not_hits_is_an_error(content: bytes, reason: str) -> None:
    retriever = _retriever(lambda request: httpx.Response(200, content=content))

    with pytest.raises(
        RemoteError, match="answered 200 with a body that is not a list of hits"
    ) as caught:
        retriever.invoke("q")

    assert reason in str(caught.value)


def test_invalid_fields_are_refused_on_construction() -> None:
    with pytest.raises(ValueError, match="mode"):
        HttpSummaryRetriever(base_url=BASE, mode="nearest")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k"):
        HttpSummaryRetriever(base_url=BASE, k=0)


def test_importing_it_loads_neither_weaviate_nor_the_server() -> None:
    code = (
        "import json, sys, service.retrievers.http\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.partition('.')[0] in "
        "{'weaviate', 'ollama', 'litestar', 'grpc', 'service', 'loaders', 'splitters'})))"
    )

    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout

    assert json.loads(loaded) == [
        "service",
        "service.errors",
        "service.query",
        "service.query.hits",
        "service.query.modes",
        "service.retrievers",
        "service.retrievers.documents",
        "service.retrievers.http",
        "splitters",
        "splitters.base",
        "splitters.base.errors",
    ]


class _SectionOfThree:
    """The first hit's section is chunks 0-2 of its source; no other hit has one."""

    def section_chunks(
        self, keys: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], list[SourceChunk]]:
        hit = HITS[0]
        chunks = [
            SourceChunk(
                id=f"c{i}",
                headers=hit.headers,
                chunk_index=i,
                content=hit.content if i == hit.chunk_index else f"part {i}",
                summary=None,
                summary_pending=False,
            )
            for i in range(3)
        ]
        return {key: chunks for key in keys if key[0] == hit.source}


def test_context_options_reach_the_body_and_give_the_in_process_documents() -> None:
    context = ContextRequest(expand="section", max_tokens=2000)
    passages = build_context("q", HITS, _SectionOfThree(), context).passages
    body = msgspec.json.encode([SearchHit.from_passage(passage) for passage in passages])
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=body)

    documents = _retriever(handler, expand="section", max_tokens=2000).invoke("q")

    assert json.loads(seen[0].content) == {"query": "q", "expand": "section", "max_tokens": 2000}
    assert documents == [passage_to_document(passage) for passage in passages]
    first = documents[0]
    assert first.page_content == f"part 0\n\n{HITS[0].content}\n\npart 2"
    assert first.metadata["section"] == {
        "chunk_indexes": [0, 1, 2],
        "chunks": [0, 1, 2],
        "complete": True,
    }
    assert tuple(first.metadata) == METADATA_KEYS + CONTEXT_METADATA_KEYS


@pytest.mark.parametrize("max_tokens", [MIN_CONTEXT_TOKENS - 1, MAX_CONTEXT_TOKENS + 1])
def test_a_budget_out_of_post_searchs_bounds_is_refused_before_any_request(
    max_tokens: int,
) -> None:
    with pytest.raises(ValidationError, match="max_tokens"):
        HttpSummaryRetriever(base_url=BASE, max_tokens=max_tokens)
    for bound in (MIN_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS):
        assert HttpSummaryRetriever(base_url=BASE, max_tokens=bound).max_tokens == bound
