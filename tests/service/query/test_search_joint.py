"""The searcher's logic on an in-memory store: what each mode asks the store, the gate."""

from __future__ import annotations

import uuid

import pytest
from langchain_core.embeddings import Embeddings

from service.errors import SearchError
from service.index.queries import Match, SummaryUse
from service.index.records import OriginalRecord, SummaryRecord
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


def test_the_defaults_read_the_context_vector_and_bm25_over_the_chunk_alone() -> None:
    use = SearchRequest(query="q").summary_use()
    assert use == SummaryUse(vector="context", weight=1.0, keyword_weight=0.0)
    assert use.keyword_properties() == ["content", "headers", "identifiers"]
    assert SummaryUse(keyword_weight=0.5).keyword_properties()[-1] == "summary^0.5"
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
        ("summary", SummaryUse(vector="summary", weight=0.5, keyword_weight=0.0)),
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


def _summary(original: str, text: str, kind: str, model: str) -> SummaryRecord:
    return SummaryRecord(
        id=uuid.uuid4(),
        original_id=uuid.UUID(original),
        source="s",
        title="",
        headers=["H"],
        summary=text,
        content_hash="",
        model=model,
        prompt_version="v2",
        kind=kind,
    )


IDS = [str(uuid.UUID(int=n)) for n in range(4)]


@pytest.mark.parametrize("mode", ["joint", "originals"])
def test_every_hit_says_what_its_summary_is(mode: str) -> None:
    props = {"content": "x", "source": "s", "headers": ["H"], "chunk_index": 0}
    matches = [
        # Attached, with its kind kept on the chunk.
        Match(id=IDS[0], properties={**props, "summary": "gen", "summary_kind": "llm",
                                     "summary_model": "smol"}, score=1.0),
        Match(id=IDS[1], properties={**props, "summary": "ext", "summary_kind": "extractive",
                                     "summary_model": "smol"}, score=0.9),
        # Attached in an index built before chunks kept the kind: read from the summary.
        Match(id=IDS[2], properties={**props, "summary": "old"}, score=0.8),
        # Filtered out (not attached): the summary is fetched, with its kind.
        Match(id=IDS[3], properties={**props, "summary": "", "summary_kind": "llm"}, score=0.7),
    ]  # fmt: skip
    searcher, store = _searcher(matches)
    for original, text, kind in ((IDS[2], "old", "llm"), (IDS[3], "filtered", "llm")):
        summary = _summary(original, text, kind, "qwen")
        store.summaries[summary.id] = summary
    hits = searcher.search(SearchRequest(query="q", k=4, mode=mode))  # type: ignore[arg-type]
    assert [(h.summary, h.summary_kind, h.summary_model) for h in hits] == [
        ("gen", "generated", "smol"),
        ("ext", "extractive", None),
        ("old", "generated", "qwen"),
        ("filtered", "generated", "qwen"),
    ]


def test_a_hit_of_the_summary_leg_says_what_its_summary_is() -> None:
    match = Match(
        id="m",
        properties={"summary": "quoted", "original_id": IDS[0], "kind": "extractive",
                    "model": "smol"},
        score=1.0,
    )  # fmt: skip
    searcher, store = _searcher([match])
    store.originals[uuid.UUID(IDS[0])] = OriginalRecord(
        id=uuid.UUID(IDS[0]), source="s", title="", headers=["H"], chunk_index=0,
        content="x", content_hash="",
    )  # fmt: skip
    [hit] = searcher.search(SearchRequest(query="q", mode="summaries"))
    assert (hit.summary, hit.summary_kind, hit.summary_model) == ("quoted", "extractive", None)
