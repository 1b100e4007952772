"""Search: request validation and reciprocal-rank fusion (unit), BM25 on identifiers (stack)."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from service.errors import SearchError
from service.query.search import Hit, SearchRequest, _fuse


def _hit(object_id: str, *, leg: str, score: float, distance: float) -> Hit:
    return Hit(
        id=object_id,
        source="doc.md",
        title="Doc",
        headers=["Doc", object_id],
        chunk_index=ord(object_id) - ord("A"),
        content=f"content {object_id}",
        summary=f"summary {object_id}" if leg == "summaries" else None,
        score=score,
        leg=leg,
        distance=distance,
    )


SUMMARY_LEG = [
    _hit("A", leg="summaries", score=1.0, distance=0.30),
    _hit("B", leg="summaries", score=0.8, distance=0.40),
    _hit("C", leg="summaries", score=0.5, distance=0.50),
]
ORIGINAL_LEG = [
    _hit("B", leg="originals", score=1.0, distance=0.35),
    _hit("D", leg="originals", score=0.7, distance=0.45),
]


def _rrf(*ranks: int) -> float:
    return sum(1.0 / (60 + rank) for rank in ranks)


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        # B is in both legs (1/62 + 1/61); then A (1/61), D (1/62), C (1/63).
        (5, [("B", _rrf(2, 1)), ("A", _rrf(1)), ("D", _rrf(2)), ("C", _rrf(3))]),
        (2, [("B", _rrf(2, 1)), ("A", _rrf(1))]),
    ],
)
def test_fuse_ranks_by_reciprocal_rank_and_keeps_one_hit_per_original(
    k: int, expected: list[tuple[str, float]]
) -> None:
    fused = _fuse(SUMMARY_LEG, ORIGINAL_LEG, SearchRequest(query="q", k=k))
    assert [(hit.id, hit.score) for hit in fused] == expected
    assert {hit.leg for hit in fused} == {"fused"}
    assert all(hit.scores == {} for hit in fused)


def test_fuse_shows_the_summary_that_matched_and_the_nearest_distance() -> None:
    fused = {hit.id: hit for hit in _fuse(SUMMARY_LEG, ORIGINAL_LEG, SearchRequest(query="q"))}
    assert (fused["B"].summary, fused["B"].distance) == ("summary B", 0.35)
    assert (fused["D"].summary, fused["D"].distance) == (None, 0.45)
    assert (fused["A"].summary, fused["A"].distance) == ("summary A", 0.30)


def test_fuse_explains_per_leg_scores() -> None:
    fused = _fuse(SUMMARY_LEG, ORIGINAL_LEG, SearchRequest(query="q", explain=True))
    assert [hit.scores for hit in fused] == [
        {"summaries": 0.8, "originals": 1.0, "rrf": _rrf(2, 1)},
        {"summaries": 1.0, "rrf": _rrf(1)},
        {"originals": 0.7, "rrf": _rrf(2)},
        {"summaries": 0.5, "rrf": _rrf(3)},
    ]


def test_fuse_of_empty_legs_is_empty() -> None:
    assert _fuse([], [], SearchRequest(query="q")) == []


def test_hit_to_dict_has_the_documented_keys() -> None:
    hit = dataclasses.replace(
        SUMMARY_LEG[0],
        scores={"summaries": 1.0},
        summary_kind="generated",
        summary_model="m",
        version="3.11",
        indexed_at=dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.UTC),
    )
    assert hit.to_dict() == {
        "id": "A",
        "source": "doc.md",
        "title": "Doc",
        "headers": ["Doc", "A"],
        "chunk_index": 0,
        "content": "content A",
        "summary": "summary A",
        "summary_kind": "generated",
        "summary_model": "m",
        "score": 1.0,
        "leg": "summaries",
        "version": "3.11",
        "indexed_at": "2026-12-01T09:30:00+00:00",
        "distance": 0.3,
        "scores": {"summaries": 1.0},
        "page_start": None,
        "page_end": None,
        "anchor": "",
    }


def test_hit_to_dict_says_version_and_indexed_at_when_unknown() -> None:
    data = SUMMARY_LEG[0].to_dict()
    assert (data["version"], data["indexed_at"]) == (None, None)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"query": ""}, "the query is empty"),
        ({"query": " \n\t"}, "the query is empty"),
        ({"k": 0}, "k must be between 1 and 100, not 0"),
        ({"k": 101}, "k must be between 1 and 100, not 101"),
        ({"alpha": -0.1}, "alpha must be between 0 and 1, not -0.1"),
        ({"alpha": 1.5}, "alpha must be between 0 and 1, not 1.5"),
        (
            {"mode": "best"},
            "mode must be one of joint, summaries, originals, both, fused, not 'best'",
        ),
        ({"fusion": "rrf"}, "fusion must be 'relative' or 'ranked', not 'rrf'"),
        (
            {"max_vector_distance": 2.5},
            "max_vector_distance must be between 0 and 2 (cosine distance)",
        ),
        (
            {"max_vector_distance": -1.0},
            "max_vector_distance must be between 0 and 2 (cosine distance)",
        ),
    ],
)
def test_validate_rejects(changes: dict[str, object], message: str) -> None:
    request = dataclasses.replace(SearchRequest(query="range()"), **changes)  # type: ignore[arg-type]
    with pytest.raises(SearchError) as caught:
        request.validate()
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"k": 1, "alpha": 0.0, "mode": "originals", "fusion": "ranked"},
        {"k": 100, "alpha": 1.0, "mode": "both", "max_vector_distance": 2.0},
        {"mode": "summaries", "max_vector_distance": 0.0},
    ],
)
def test_validate_accepts(changes: dict[str, object]) -> None:
    dataclasses.replace(SearchRequest(query="range()"), **changes).validate()  # type: ignore[arg-type]
