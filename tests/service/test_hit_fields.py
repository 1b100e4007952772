"""Every edge carries every field of a hit (`service.query.hits.HIT_FIELDS`), in its order,
null and empty values the same way: one fully populated `Hit` through POST /search and
POST /ask's citations, `synopsis search --json`, the MCP `ask` tool, the in-process
retriever's Documents and the HTTP retriever's (over the API's own response body).
A fake Synopsis, no stack."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from service import cli
from service.cli import session
from service.query.answer import Answer
from service.query.hits import HIT_FIELDS, Hit
from service.query.search import SearchRequest
from service.retrievers.documents import METADATA_KEYS
from service.retrievers.http import HttpSummaryRetriever
from service.retrievers.in_process import SummaryRetriever, hit_to_document
from service.settings import Settings
from tests.service.api.apps import client_over
from tests.service.mcp.test_mcp_tools import ToolSynopsis, _run

#: A hit with a value in every field, none of them the field's empty value. The floats
#: need no more than 6 digits, so the CLI's rounding keeps them as they are.
FULL = Hit(
    id="00000000-0000-0000-0000-0000000000f1",
    source="docs/manual.pdf",
    title="Manual",
    headers=["Manual", "Install"],
    chunk_index=4,
    content="Run `pip install quill`.",
    summary="How to install Quill with pip.",
    summary_kind="generated",
    summary_model="qwen2.5-coder-1.5b-instruct",
    score=0.8125,
    leg="fused",
    distance=0.25,
    scores={"summaries": 0.5, "originals": 0.75, "rrf": 0.03125},
    page_start=3,
    page_end=4,
    anchor="install",
    version="2.1",
    indexed_at=dt.datetime(2026, 12, 1, 9, 30, 15, 123456, tzinfo=dt.UTC),
)
NAMES = [spec.name for spec in HIT_FIELDS]
#: The hit's fields that are a Document's own id and text, not its metadata.
DOCUMENT_FIELDS = ("id", "content")
TIMES = {spec.name for spec in HIT_FIELDS if spec.time}


class OneHitSynopsis(ToolSynopsis):
    """The API and MCP tests' fake, whose searches and answers give one hit; with what
    the CLI and the in-process retriever call too."""

    def __init__(self, hit: Hit) -> None:
        super().__init__()
        self.hit = hit

    def __enter__(self) -> OneHitSynopsis:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        pass

    def search(self, request: SearchRequest) -> list[Hit]:
        request.validate()
        self.requests.append(request)
        return [self.hit]

    async def asearch(self, request: SearchRequest) -> list[Hit]:
        await super().asearch(request)
        return [self.hit]

    def ask(self, question: str, request: SearchRequest | None = None) -> Answer:
        return dataclasses.replace(super().ask(question, request), citations=[self.hit])

    def pending_summaries(self) -> int:
        return 0


def _ollama_ok(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"version": "0.24.0"})


def _api(hit: Hit, path: str, body: dict[str, Any]) -> httpx.Response:
    ollama = httpx.AsyncClient(
        base_url="http://ollama.test", transport=httpx.MockTransport(_ollama_ok)
    )
    with client_over(OneHitSynopsis(hit), ollama) as client:
        response = client.post(path, json=body)
    assert response.status_code in (200, 201), response.text
    return response


def _api_search(hit: Hit, monkeypatch: pytest.MonkeyPatch) -> Mapping[str, Any]:
    [shape] = _api(hit, "/search", {"query": "install"}).json()
    return dict(shape)


def _api_ask_citation(hit: Hit, monkeypatch: pytest.MonkeyPatch) -> Mapping[str, Any]:
    [citation] = _api(hit, "/ask", {"question": "How do I install it?"}).json()["citations"]
    return dict(citation)


def _cli_search_json(hit: Hit, monkeypatch: pytest.MonkeyPatch) -> Mapping[str, Any]:
    monkeypatch.setattr(session, "open_synopsis", lambda settings: OneHitSynopsis(hit))
    result = CliRunner().invoke(cli.main, ["search", "install", "--json"], obj=Settings())
    assert result.exit_code == 0, result.stderr
    [shape] = json.loads(result.stdout)
    return dict(shape)


def _mcp_ask_citation(hit: Hit, monkeypatch: pytest.MonkeyPatch) -> Mapping[str, Any]:
    result = _run(OneHitSynopsis(hit), "ask", {"question": "How do I install it?"})
    assert not result.is_error
    assert result.structured_content is not None
    [citation] = result.structured_content["citations"]
    [text] = result.content
    assert text.type == "text"
    assert json.loads(text.text)["citations"] == [citation]
    return dict(citation)


def _document_fields(document: Any) -> Mapping[str, Any]:
    """A Document as a hit's fields (in `HIT_FIELDS`' order): its id and text, and its
    metadata, which must be `METADATA_KEYS` in order."""
    assert list(document.metadata) == list(METADATA_KEYS)
    fields = {"id": document.id, "content": document.page_content, **document.metadata}
    assert fields.keys() == set(NAMES)
    return {name: fields[name] for name in NAMES}


def _retriever_document(hit: Hit, monkeypatch: pytest.MonkeyPatch) -> Mapping[str, Any]:
    # model_construct: the fake is not a `Synopsis`, which validation would insist on.
    retriever = SummaryRetriever.model_construct(synopsis=OneHitSynopsis(hit))
    [document] = retriever.invoke("install")
    return _document_fields(document)


def _http_retriever_document(hit: Hit, monkeypatch: pytest.MonkeyPatch) -> Mapping[str, Any]:
    body = _api(hit, "/search", {"query": "install"}).content  # what the server really sends
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=body))
    retriever = HttpSummaryRetriever(
        base_url="http://synopsis.test:8000", client=httpx.Client(transport=transport)
    )
    [document] = retriever.invoke("install")
    assert document == hit_to_document(hit)
    return _document_fields(document)


EDGES: dict[str, Callable[[Hit, pytest.MonkeyPatch], Mapping[str, Any]]] = {
    "api-search": _api_search,
    "api-ask-citations": _api_ask_citation,
    "cli-search-json": _cli_search_json,
    "mcp-ask-citations": _mcp_ask_citation,
    "retriever-document": _retriever_document,
    "http-retriever-document": _http_retriever_document,
}


def test_the_hit_fills_every_field() -> None:
    for spec in HIT_FIELDS:
        value = getattr(FULL, spec.name)
        assert value is not None, spec.name
        assert value != spec.empty(), spec.name


@pytest.mark.parametrize("edge", list(EDGES))
def test_every_edge_carries_every_field_of_a_hit(
    edge: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    shape = EDGES[edge](FULL, monkeypatch)

    assert list(shape) == NAMES
    for name in TIMES:  # ISO 8601 text at every edge (`Z` or `+00:00`)
        assert isinstance(shape[name], str), name
    values = {
        name: dt.datetime.fromisoformat(value) if name in TIMES else value
        for name, value in shape.items()
    }
    assert values == {name: getattr(FULL, name) for name in NAMES}


def test_the_retrievers_metadata_is_every_field_but_the_documents_own() -> None:
    assert set(DOCUMENT_FIELDS) <= set(NAMES)
    assert [name for name in NAMES if name not in DOCUMENT_FIELDS] == list(METADATA_KEYS)


def _empty_hit() -> Hit:
    """A hit with only the fields every hit has: each of the others empty."""
    return Hit(**{spec.name: getattr(FULL, spec.name) for spec in HIT_FIELDS if spec.required})


@pytest.mark.parametrize("edge", list(EDGES))
def test_every_edge_gives_an_empty_field_as_its_empty_value(
    edge: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    shape = EDGES[edge](_empty_hit(), monkeypatch)

    assert list(shape) == NAMES
    assert {spec.name: shape[spec.name] for spec in HIT_FIELDS if not spec.required} == {
        spec.name: spec.empty() for spec in HIT_FIELDS if not spec.required
    }
