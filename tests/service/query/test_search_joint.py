"""The searcher's logic on an in-memory store: what each mode asks the store, the gate."""

from __future__ import annotations

import pytest
from langchain_core.embeddings import Embeddings

from service.index.store import Match
from service.models.embed import Embedder
from service.query.search import Searcher, SearchRequest
from tests.service.fakes import MemoryStore


class _Axis(Embeddings):
    """Every text embeds to the same unit vector along the first axis."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]


def _searcher(matches: list[Match]) -> tuple[Searcher, MemoryStore]:
    store = MemoryStore()
    store.matches = matches
    return Searcher(store, Embedder(_Axis(), model="axis")), store


@pytest.mark.parametrize(
    ("mode", "weight", "keywords", "expected"),
    [
        ("joint", 0.5, True, {"summary_weight": 0.5, "summary_keywords": True}),
        ("joint", 0.3, False, {"summary_weight": 0.3, "summary_keywords": False}),
        ("originals", 0.5, True, {"summary_weight": 0.0, "summary_keywords": False}),
    ],
)
def test_the_mode_decides_what_the_chunks_leg_reads_of_the_summaries(
    mode: str, weight: float, keywords: bool, expected: dict[str, object]
) -> None:
    searcher, store = _searcher([])
    request = SearchRequest(
        query="range",
        k=3,
        mode=mode,
        summary_weight=weight,
        summary_keywords=keywords,  # type: ignore[arg-type]
    )
    searcher.search(request)
    [(leg, query, options)] = store.queries
    assert (leg, query.limit, query.with_vectors, options) == ("originals", 3, False, expected)


def test_joint_hits_are_labelled_and_the_gate_judges_the_chunk_not_its_summary() -> None:
    near_chunk = Match(
        id="a",
        properties={"content": "x", "source": "s", "headers": ["H"], "chunk_index": 0},
        score=1.0,
        vectors={"content": [1.0, 0.0], "summary": [0.0, 1.0]},  # distance 0.0 and 1.0
    )
    near_summary = Match(
        id="b",
        properties={"content": "y", "source": "s", "headers": ["H"], "chunk_index": 1},
        score=0.5,
        vectors={"content": [0.0, 1.0], "summary": [1.0, 0.0]},  # distance 1.0 and 0.0
    )
    searcher, store = _searcher([near_chunk, near_summary])
    hits = searcher.search(SearchRequest(query="q", k=2, max_vector_distance=0.5))
    assert [(hit.id, hit.leg, hit.distance) for hit in hits] == [("a", "joint", 0.0)]
    [(_, query, _)] = store.queries
    assert (query.limit, query.with_vectors) == (6, True)  # spare candidates for the gate


@pytest.mark.parametrize("mode", ["joint", "originals"])
def test_a_chunk_far_from_the_query_is_gated_however_near_its_summary(mode: str) -> None:
    match = Match(
        id="a",
        properties={"content": "x", "source": "s", "headers": [], "chunk_index": 0},
        score=1.0,
        vectors={"content": [0.0, 1.0], "summary": [1.0, 0.0]},
    )
    searcher, _ = _searcher([match])
    request = SearchRequest(query="q", k=2, mode=mode, max_vector_distance=0.5)  # type: ignore[arg-type]
    assert searcher.search(request) == []
