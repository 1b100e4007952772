"""The searcher's logic on an in-memory store: what each mode asks the store, the gate."""

from __future__ import annotations

import pytest
from langchain_core.embeddings import Embeddings

from service.errors import SearchError
from service.index.store import Match, SummaryUse
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
    ("mode", "vector", "weight", "keywords", "expected"),
    [
        (
            "joint",
            "context",
            1.0,
            0.5,
            SummaryUse(vector="context", weight=1.0, keyword_weight=0.5),
        ),
        (
            "joint",
            "summary",
            0.3,
            1.0,
            SummaryUse(vector="summary", weight=0.3, keyword_weight=1.0),
        ),
        ("originals", "context", 1.0, 1.0, None),
    ],
)
def test_the_mode_decides_what_the_chunks_leg_reads_of_the_summaries(
    mode: str, vector: str, weight: float, keywords: float, expected: SummaryUse | None
) -> None:
    searcher, store = _searcher([])
    request = SearchRequest(
        query="range",
        k=3,
        mode=mode,  # type: ignore[arg-type]
        summary_vector=vector,  # type: ignore[arg-type]
        summary_weight=weight,
        summary_keyword_weight=keywords,
    )
    searcher.search(request)
    [(leg, query, options)] = store.queries
    assert (leg, query.limit, query.with_vectors, options) == (
        "originals",
        3,
        False,
        {"use": expected},
    )


def test_the_defaults_read_the_context_vector_and_the_summarys_words_at_half_weight() -> None:
    use = SearchRequest(query="q").summary_use()
    assert use == SummaryUse(vector="context", weight=1.0, keyword_weight=0.5)
    assert use.keyword_properties() == ["content", "headers", "identifiers", "summary^0.5"]
    assert SummaryUse(keyword_weight=1.0).keyword_properties()[-1] == "summary"
    assert SummaryUse(keyword_weight=0.0).keyword_properties() == [
        "content",
        "headers",
        "identifiers",
    ]


@pytest.mark.parametrize(
    ("vector", "expected"),
    [
        # The index has no context vectors yet: the layout it was built for.
        ("context", SummaryUse(vector="summary", weight=0.5, keyword_weight=1.0)),
        ("summary", SummaryUse(vector="summary", weight=0.5, keyword_weight=0.5)),
    ],
)
def test_an_index_without_context_vectors_is_searched_the_way_it_was_built_for(
    vector: str, expected: SummaryUse
) -> None:
    searcher, store = _searcher([])
    store.context_layout = False
    request = SearchRequest(
        query="q",
        summary_vector=vector,  # type: ignore[arg-type]
        summary_weight=0.5,
    )
    searcher.search(request)
    [(_, _, options)] = store.queries
    assert options == {"use": expected}


def test_a_summary_vector_that_is_not_one_is_refused() -> None:
    searcher, _ = _searcher([])
    with pytest.raises(SearchError, match="summary_vector must be 'context' or 'summary'"):
        searcher.search(SearchRequest(query="q", summary_vector="both"))  # type: ignore[arg-type]


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
