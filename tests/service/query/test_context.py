"""Search hits as budgeted context (`service.query.context`): sections, order, budget."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.errors import SearchError
from service.index.records import header_path
from service.index.store import SourceChunk
from service.query.context import (
    ContextRequest,
    build_context,
    candidates_for,
)
from service.query.search import Hit
from splitters.encoding import count_tokens

SOURCE = "guide.md"
CODE = "```python\nfor i in range(3):\n    print(i)  # 0 1 2\n```"


def _chunk(index: int, headers: list[str], content: str, anchor: str = "") -> SourceChunk:
    return SourceChunk(
        id=f"id-{index}",
        headers=headers,
        chunk_index=index,
        content=content,
        summary=f"summary of chunk {index}",
        summary_pending=False,
        anchor=anchor,
    )


def _words(n: int, tag: str) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


#: A page: an intro, a section of three chunks, one of one chunk, then a long one.
CHUNKS = [
    _chunk(0, ["Guide"], "Intro text."),
    _chunk(1, ["Guide", "Loops"], "Loops, part one.", "loops"),
    _chunk(2, ["Guide", "Loops"], f"Loops, part two:\n\n{CODE}", "loops"),
    _chunk(3, ["Guide", "Loops"], "Loops, part three.", "loops"),
    _chunk(4, ["Guide", "Functions"], "Functions are defined with def.", "functions"),
    _chunk(5, ["Guide", "Big"], _words(400, "a"), "big"),
    _chunk(6, ["Guide", "Big"], _words(400, "b"), "big"),
    _chunk(7, ["Guide", "Big"], _words(400, "c"), "big"),
]


class Sections:
    """A `SectionReader` over `CHUNKS` that records what it was asked."""

    def __init__(self, chunks: Sequence[SourceChunk] = CHUNKS) -> None:
        self.chunks = list(chunks)
        self.asked: list[list[tuple[str, str]]] = []

    def section_chunks(
        self, keys: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], list[SourceChunk]]:
        self.asked.append(list(keys))
        return {
            key: [c for c in self.chunks if (SOURCE, header_path(c.headers)) == key] for key in keys
        }


def _hit(index: int) -> Hit:
    chunk = CHUNKS[index]
    return Hit(
        id=chunk.id,
        source=SOURCE,
        title="Guide",
        headers=list(chunk.headers),
        chunk_index=index,
        content=chunk.content,
        summary=chunk.summary,
        score=1.0,
        leg="joint",
        anchor=chunk.anchor,
    )


def test_a_hit_becomes_its_whole_section_in_order_and_each_section_is_given_once() -> None:
    reader = Sections()
    context = build_context("loops", [_hit(2), _hit(4), _hit(1)], reader, ContextRequest())
    assert [p.chunk_indexes for p in context.passages] == [(1, 2, 3), (4,)]
    loops = context.passages[0]
    assert loops.content == "\n\n".join(c.content for c in CHUNKS[1:4])
    assert CODE in loops.content
    assert (loops.complete, loops.section_chunks, loops.location) == (
        True,
        (1, 2, 3),
        f"{SOURCE}#loops",
    )
    assert context.left_out == []
    # One read for every section the hits are in.
    assert reader.asked == [[(SOURCE, "Guide > Loops"), (SOURCE, "Guide > Functions")]]


def test_without_expansion_each_hit_is_its_own_chunk_and_nothing_is_read() -> None:
    reader = Sections()
    context = build_context(
        "loops", [_hit(2), _hit(2), _hit(4)], reader, ContextRequest(expand="none")
    )
    assert [p.chunk_indexes for p in context.passages] == [(2,), (4,)]
    assert [p.content for p in context.passages] == [CHUNKS[2].content, CHUNKS[4].content]
    assert reader.asked == []


def test_the_rendering_shows_path_location_summary_and_the_text() -> None:
    context = build_context("loops", [_hit(4)], Sections(), ContextRequest())
    assert context.text() == (
        "# Search results for: loops\n1 passage, best first.\n\n"
        "## Guide > Functions\n"
        f"Source: {SOURCE}#functions\n"
        "Summary: summary of chunk 4\n"
        "Passage: the whole section (chunk 4)\n\n"
        "Functions are defined with def."
    )


def test_a_section_over_the_budget_is_cut_to_its_matched_chunk_and_says_so() -> None:
    # "Big" is three chunks of ~800 tokens each: whole it needs ~2,400.
    context = build_context("big", [_hit(6), _hit(4)], Sections(), ContextRequest(max_tokens=1500))
    big, functions = context.passages
    assert (big.chunk_indexes, big.section_chunks, big.complete) == ((6,), (5, 6, 7), False)
    assert "part of the section, chunk 6 of chunks 5-7; read_section" in big.block
    assert functions.chunk_indexes == (4,)
    assert context.tokens <= 1500


def test_what_does_not_fit_is_listed_in_the_note_with_its_cost() -> None:
    context = build_context("big", [_hit(4), _hit(5)], Sections(), ContextRequest(max_tokens=600))
    assert [p.chunk_indexes for p in context.passages] == [(4,)]
    [left] = context.left_out
    assert (left.location, left.path) == (f"{SOURCE}#big", "Guide > Big")
    assert left.tokens > 2000
    text = context.text()
    assert "## Left out: 1 more matching, over the 600-token budget" in text
    assert f"- {SOURCE}#big § Guide > Big (about {left.tokens:,} tokens)" in text
    assert count_tokens(text) <= 600


def test_no_hits_says_so() -> None:
    context = build_context("nothing", [], Sections(), ContextRequest())
    assert context.text().endswith("Nothing indexed matches the query.")
    assert context.passages == context.left_out == []


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (ContextRequest(max_tokens=499), "max_tokens must be between 500 and 100000, not 499"),
        (ContextRequest(max_tokens=100_001), "max_tokens must be between 500 and 100000"),
        (ContextRequest(expand="all"), "expand must be one of none, section, not 'all'"),  # type: ignore[arg-type]
    ],
)
def test_an_impossible_request_is_refused(request_: ContextRequest, message: str) -> None:
    with pytest.raises(SearchError, match=message):
        build_context("q", [_hit(1)], Sections(), request_)


@pytest.mark.parametrize(("budget", "expected"), [(500, 5), (1000, 5), (5000, 20), (10**5, 100)])
def test_candidates_grow_with_the_budget(budget: int, expected: int) -> None:
    assert candidates_for(budget) == expected


@settings(max_examples=60, deadline=None)
@given(
    order=st.lists(st.integers(min_value=0, max_value=7), min_size=1, max_size=12),
    budget=st.integers(min_value=500, max_value=4000),
    expand=st.sampled_from(["none", "section"]),
    query=st.text(min_size=1, max_size=300),
)
def test_the_budget_holds_and_no_chunk_is_given_twice(
    order: list[int], budget: int, expand: str, query: str
) -> None:
    context = build_context(
        query,
        [_hit(i) for i in order],
        Sections(),
        ContextRequest(expand=expand, max_tokens=budget),  # type: ignore[arg-type]
    )
    assert count_tokens(context.text()) <= budget
    given_chunks = [i for p in context.passages for i in p.chunk_indexes]
    assert len(given_chunks) == len(set(given_chunks))
    # Passages keep the rank of their best hit.
    firsts = [order.index(p.hit.chunk_index) for p in context.passages]
    assert firsts == sorted(firsts)
