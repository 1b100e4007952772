"""POST /search with `expand` and `max_tokens`: the request that reaches the core and the
hits that come back (a fake Synopsis over the real context code)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, cast

import pytest
from litestar.testing import TestClient

from service.api import create_app
from service.index.records import SourceChunk, header_path
from service.query.context import ContextRequest, SearchContext, build_context
from service.query.search import SearchRequest
from service.synopsis import Synopsis
from tests.service.api.test_api import HIT, HIT_JSON, FakeSynopsis, _ollama, _ollama_ok
from tests.service.serving import IN_PROCESS_URL

#: The section HIT (chunk 2 of "Tutorial > Loops") is part of: chunks 1-3.
SECTION = [
    SourceChunk(
        id=f"id-{index}",
        headers=list(HIT.headers),
        chunk_index=index,
        content=HIT.content if index == HIT.chunk_index else f"loops, part {index}",
        summary=None,
        summary_pending=False,
    )
    for index in (1, 2, 3)
]


class OneSection:
    def section_chunks(
        self, keys: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], list[SourceChunk]]:
        return {key: SECTION for key in keys if key == (HIT.source, header_path(HIT.headers))}


class ContextSynopsis(FakeSynopsis):
    """The fake, plus `asearch_context` over the real `build_context`."""

    def __init__(self) -> None:
        super().__init__()
        self.contexts: list[ContextRequest] = []

    async def asearch_context(
        self, request: SearchRequest, context: ContextRequest
    ) -> SearchContext:
        context.validate()
        self.contexts.append(context)
        hits = await self.asearch(request)
        return build_context(request.query, hits, OneSection(), context)


def _post(fake: FakeSynopsis, body: dict[str, Any]) -> Any:
    app = create_app(
        synopsis=cast(Synopsis, fake), ollama_http=_ollama(_ollama_ok), background=False
    )
    with TestClient(app, base_url=IN_PROCESS_URL) as client:
        return client.post("/search", json=body)


def test_expand_section_gives_the_whole_section_within_the_default_budget() -> None:
    fake = ContextSynopsis()
    response = _post(fake, {"query": "range()", "expand": "section"})
    assert response.status_code == 200, response.text
    [hit] = response.json()
    assert hit["content"] == "loops, part 1\n\nfor i in range(3): ...\n\nloops, part 3"
    assert hit["section"] == {"chunk_indexes": [1, 2, 3], "chunks": [1, 2, 3], "complete": True}
    # The passage as rendered: fenced, with its header, location, version line and text.
    assert 0 < hit["tokens"] < 150
    # The settings' budget, and one candidate per 250 tokens of it.
    assert fake.contexts == [ContextRequest(expand="section", max_tokens=5000)]
    assert [request.k for request in fake.requests] == [20]


def test_max_tokens_alone_budgets_plain_chunks_and_k_stays_the_callers() -> None:
    fake = ContextSynopsis()
    response = _post(fake, {"query": "range()", "max_tokens": 800, "k": 2})
    [hit] = response.json()
    assert {key: value for key, value in hit.items() if key != "tokens"} == HIT_JSON
    assert "section" not in hit
    assert fake.contexts == [ContextRequest(expand="none", max_tokens=800)]
    assert [request.k for request in fake.requests] == [2]


def test_without_expand_or_max_tokens_the_response_is_unchanged() -> None:
    fake = ContextSynopsis()
    assert _post(fake, {"query": "range()", "expand": "none"}).json() == [HIT_JSON]
    assert fake.contexts == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": "x", "max_tokens": 499}, "max_tokens"),
        ({"query": "x", "max_tokens": 100_001}, "max_tokens"),
        ({"query": "x", "max_tokens": "5000"}, "max_tokens"),
        ({"query": "x", "expand": "page"}, "expand"),
    ],
)
def test_a_budget_or_expansion_out_of_range_is_400_naming_it(
    body: dict[str, Any], field: str
) -> None:
    fake = ContextSynopsis()
    response = _post(fake, body)
    assert (response.status_code, response.json()["field"], fake.calls) == (400, field, [])


def test_a_section_is_never_split_from_its_budget() -> None:
    """The budget counts each hit's rendering, so the sum of `tokens` stays within it."""
    fake = ContextSynopsis()
    big = dataclasses.replace(HIT, id="big", chunk_index=9, headers=["Other"], content="w " * 900)

    async def asearch(request: SearchRequest) -> list[Any]:
        fake.requests.append(request)
        return [HIT, big]

    fake.asearch = asearch  # type: ignore[method-assign]
    hits = _post(fake, {"query": "q", "expand": "section", "max_tokens": 600}).json()
    assert [hit["id"] for hit in hits] == [HIT.id]  # the large one is left out
    assert sum(hit["tokens"] for hit in hits) <= 600
