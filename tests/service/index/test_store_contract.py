"""The store's contract, run against the in-memory fake (tests/service/fakes.py) and the
real `Store` on Weaviate: what a unit test learns from the fake, the real store does too.

Each test gets a fresh fake, or the real store on the `TestStoreContract` collections
(built once per module, dropped afterwards) with sources of its own, so the tests do not
see each other's objects. Vectors have four dimensions; every search filters by the test's
sources.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from service.connections import connect_weaviate
from service.index.queries import ORIGINAL_HIT_PROPERTIES, HybridQuery, SearchFilters, SummaryUse
from service.index.records import (
    ChunkPlace,
    OriginalRecord,
    ShownSummary,
    SourceRecord,
    StoredOriginal,
    SummaryAttachment,
    SummaryRecord,
)
from service.index.store import Store
from service.settings import Settings
from tests.service.fakes import MemoryStore

PREFIX = "TestStoreContract"
DIMENSION = 4
WRITTEN_AT = dt.datetime(2026, 12, 1, 9, 30, 15, tzinfo=dt.UTC)
AXES = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]


@pytest.fixture(scope="module")
def real_store(settings: Settings) -> Iterator[Store]:
    client = connect_weaviate(settings)
    store = Store(client, prefix=PREFIX)
    store.drop()
    store.ensure_schema(embedding_model="contract-axes", dimension=DIMENSION)
    try:
        yield store
    finally:
        store.drop()
        client.close()


@pytest.fixture(params=["fake", pytest.param("weaviate", marks=pytest.mark.integration)])
def store(request: pytest.FixtureRequest) -> Any:
    if request.param == "fake":
        fake = MemoryStore()
        fake.ensure_schema(embedding_model="contract-axes", dimension=DIMENSION)
        return fake
    return request.getfixturevalue("real_store")


@pytest.fixture
def base(request: pytest.FixtureRequest) -> str:
    """A source path prefix of this test's own (the real store is shared by the module)."""
    return f"/contract/{request.node.name}/"


def _original(source: str, index: int, content: str, **fields: Any) -> OriginalRecord:
    values: dict[str, Any] = {
        "title": "Kettle manual",
        "headers": ["Kettle manual", f"Section {index}"],
        "content_hash": f"hash-{source}-{index}",
        "content_type": "text/markdown",
        "identifiers": [],
        "anchor": f"section-{index}",
        "vector": AXES[index % DIMENSION],
    }
    values.update(fields)
    return OriginalRecord(
        id=uuid.uuid5(uuid.NAMESPACE_URL, f"{source}#{index}"),
        source=source,
        chunk_index=index,
        content=content,
        **values,
    )


def _summary(original: OriginalRecord, text: str, **fields: Any) -> SummaryRecord:
    values: dict[str, Any] = {
        "model": "model-a",
        "prompt_version": "v2",
        "kind": "llm",
        "reason": "",
        "vector": original.vector,
        "similarity": 0.5,
    }
    values.update(fields)
    return SummaryRecord(
        id=uuid.uuid5(original.id, f"{values['model']}/{values['prompt_version']}"),
        original_id=original.id,
        source=original.source,
        title=original.title,
        headers=original.headers,
        summary=text,
        content_hash=original.content_hash,
        identifiers=original.identifiers,
        version=original.version,
        version_group=original.version_group,
        **values,
    )


def _attachment(summary: SummaryRecord) -> SummaryAttachment:
    return SummaryAttachment(
        original_id=summary.original_id,
        summary_id=summary.id,
        text=summary.summary,
        vector=summary.vector,
        context_vector=summary.vector,
        similarity=summary.similarity,
        kind=summary.kind,
        model=summary.model,
    )


def _kettle(base: str) -> list[OriginalRecord]:
    return [
        _original(base + "kettle.md", 0, "Fill the kettle with white vinegar and water."),
        _original(base + "kettle.md", 1, "Press a new mesh filter into the spout."),
        _original(
            base + "guide/cups.md",
            2,
            "Rinse the cups.",
            title="Cups",
            headers=["Cups", "Rinsing"],
            page_start=3,
            page_end=4,
            version="3.11",
            version_group="kettles",
            indexed_at=WRITTEN_AT,
        ),
    ]


def _query(keywords: str, vector: list[float], **fields: Any) -> HybridQuery:
    return HybridQuery(keywords=keywords, vector=vector, alpha=fields.pop("alpha", 0.5), **fields)


# -- writing and reading chunks -------------------------------------------------------------


def test_written_originals_are_read_back_by_source_and_by_id(store: Any, base: str) -> None:
    first, second, other = _kettle(base)
    assert store.write_originals([first, second, other]) == 3

    assert store.existing_originals(base + "kettle.md") == {
        first.id: StoredOriginal(chunk_index=0, summary_id="", anchor="section-0"),
        second.id: StoredOriginal(chunk_index=1, summary_id="", anchor="section-1"),
    }
    missing = uuid.uuid4()
    found = store.originals_by_id([other.id, missing])
    assert found == {other.id: dataclasses.replace(other, vector=[])}
    with_vectors = store.originals_by_id([first.id], with_vectors=True)
    assert with_vectors[first.id].vector == first.vector


def test_a_chunk_is_written_without_a_summary_whatever_its_record_says(
    store: Any, base: str
) -> None:
    [first, *_] = _kettle(base)
    store.write_originals([dataclasses.replace(first, summary="not attached yet")])
    assert store.originals_by_id([first.id])[first.id].summary == ""
    assert store.hit_originals([str(first.id)])[str(first.id)]["summary"] == ""


def test_unchanged_chunks_move_to_their_new_place(store: Any, base: str) -> None:
    first, second, _ = _kettle(base)
    store.write_originals([first, second])
    store.update_unchanged({first.id: ChunkPlace(5, "moved")})
    assert store.existing_originals(base + "kettle.md")[first.id] == StoredOriginal(
        chunk_index=5, summary_id="", anchor="moved"
    )
    assert store.originals_by_id([first.id])[first.id].content == first.content


def test_deletes_count_what_was_there(store: Any, base: str) -> None:
    first, second, _ = _kettle(base)
    store.write_originals([first, second])
    summary = _summary(first, "How to descale.")
    store.write_summaries([summary])
    assert store.delete_summaries([summary.id, uuid.uuid4()]) == 1
    assert store.delete_originals([first.id, second.id, uuid.uuid4()]) == 2
    assert store.existing_originals(base + "kettle.md") == {}
    assert store.existing_summaries(base + "kettle.md") == {}
    assert store.delete_originals([first.id]) == 0


# -- summaries ------------------------------------------------------------------------------


def test_summaries_are_found_by_source_and_attached_to_their_chunk(store: Any, base: str) -> None:
    first, second, _ = _kettle(base)
    store.write_originals([first, second])
    summary = _summary(first, "How to descale the kettle with vinegar.")
    assert store.write_summaries([summary]) == 1
    assert store.existing_summaries(base + "kettle.md") == {summary.id: first.id}

    store.attach_summaries([_attachment(summary)])

    assert store.existing_originals(base + "kettle.md")[first.id].summary_id == str(summary.id)
    assert store.existing_originals(base + "kettle.md")[second.id].summary_id == ""
    assert store.summaries_of([str(first.id), str(second.id)]) == {
        str(first.id): ShownSummary(text=summary.summary, kind="generated", model=summary.model)
    }
    assert store.originals_by_id([first.id])[first.id].summary == summary.summary
    # The chunk shows what its summary is; one without a summary shows nothing.
    hits = store.hit_originals([str(first.id), str(second.id)])
    assert (hits[str(first.id)]["summary_kind"], hits[str(first.id)]["summary_model"]) == (
        summary.kind,
        summary.model,
    )
    assert not hits[str(second.id)]["summary_kind"]


def test_cached_summaries_match_hash_model_and_prompt_version_in_any_source(
    store: Any, base: str
) -> None:
    first, second, other = _kettle(base)
    store.write_originals([first, second, other])
    wanted = _summary(first, "Descaling.", kind="extractive", reason="too_long")
    store.write_summaries(
        [
            wanted,
            _summary(second, "Another model.", model="model-b"),
            _summary(other, "Another prompt.", prompt_version="v3"),
        ]
    )

    cached = store.cached_summaries(
        [first.content_hash, second.content_hash, other.content_hash, "absent"],
        model="model-a",
        prompt_version="v2",
    )

    assert list(cached) == [first.content_hash]
    found = cached[first.content_hash]
    assert (found.summary, found.kind, found.reason, found.content_hash, found.vector) == (
        "Descaling.",
        "extractive",
        "too_long",
        first.content_hash,
        first.vector,
    )


def test_listed_summaries_are_ordered_by_source_and_headers_with_vectors_on_request(
    store: Any, base: str
) -> None:
    first, second, other = _kettle(base)
    store.write_originals([first, second, other])
    written = [
        _summary(other, "Cups.", kind="extractive"),
        _summary(second, "Filter."),
        _summary(first, "Descaling."),
    ]
    store.write_summaries(written)

    listed = [record for record in store.list_summaries() if record.source.startswith(base)]
    assert [record.summary for record in listed] == ["Cups.", "Descaling.", "Filter."]
    assert all(record.vector == [] for record in listed)
    assert {r.id: r for r in listed} == {r.id: dataclasses.replace(r, vector=[]) for r in written}
    extractive = [r for r in store.list_summaries(kind="extractive") if r.source.startswith(base)]
    assert [record.summary for record in extractive] == ["Cups."]
    with_vectors = [
        record
        for record in store.list_summaries(with_vectors=True)
        if record.source == other.source
    ]
    assert [record.vector for record in with_vectors] == [other.vector]


# -- what a search shows --------------------------------------------------------------------


def test_a_hit_shows_every_property_of_its_chunk(store: Any, base: str) -> None:
    first, _, other = _kettle(base)
    store.write_originals([first, other])
    summary = _summary(other, "Rinsing cups.")
    store.write_summaries([summary])
    store.attach_summaries([_attachment(summary)])

    hits = store.hit_originals([str(first.id), str(other.id), str(uuid.uuid4())])

    assert hits == {
        str(first.id): {
            "content": first.content,
            "source": first.source,
            "title": "Kettle manual",
            "headers": ["Kettle manual", "Section 0"],
            "chunk_index": 0,
            "summary": "",
            "summary_kind": "",
            "summary_model": "",
            "page_start": None,
            "page_end": None,
            "anchor": "section-0",
            "version": "",
            "indexed_at": None,
        },
        str(other.id): {
            "content": other.content,
            "source": other.source,
            "title": "Cups",
            "headers": ["Cups", "Rinsing"],
            "chunk_index": 2,
            "summary": "Rinsing cups.",
            "summary_kind": summary.kind,
            "summary_model": summary.model,
            "page_start": 3,
            "page_end": 4,
            "anchor": "section-2",
            "version": "3.11",
            "indexed_at": WRITTEN_AT,
        },
    }
    assert all(set(hit) == set(ORIGINAL_HIT_PROPERTIES) for hit in hits.values())


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"source": "kettle.md"}, [0, 1]),
        ({"source_prefix": "guide/"}, [2]),
        ({"header_prefix": "Kettle manual > Section 1"}, [1]),
        ({"title": "Cups"}, [2]),
        ({"title": "Cups", "source": "kettle.md"}, []),
    ],
)
def test_searches_return_only_what_the_filters_allow(
    store: Any, base: str, filters: dict[str, str], expected: list[int]
) -> None:
    store.write_originals(_kettle(base))
    scoped = {
        key: (base + value if key in ("source", "source_prefix") else value)
        for key, value in filters.items()
    }
    if "source" not in scoped and "source_prefix" not in scoped:
        scoped["source_prefix"] = base
    query = _query("kettle vinegar filter cups", AXES[0], limit=10, filters=SearchFilters(**scoped))

    hits = store.search_originals(query, use=None)

    assert sorted(hit.properties["chunk_index"] for hit in hits) == expected
    assert all(set(hit.properties) == set(ORIGINAL_HIT_PROPERTIES) for hit in hits)


def _versions(base: str) -> list[OriginalRecord]:
    """One page in versions 3.9, 3.10 and 3.11 of the group `py`, in 1.0 of the group
    `other`, and unversioned."""
    labels = [("3.9", "py"), ("3.10", "py"), ("3.11", "py"), ("1.0", "other"), ("", "")]
    return [
        _original(
            f"{base}{version or 'none'}/{group}.md",
            index,
            "The walrus operator assigns inside expressions.",
            version=version,
            version_group=group,
        )
        for index, (version, group) in enumerate(labels)
    ]


@pytest.mark.parametrize(
    ("version", "latest", "expected"),
    [
        ("3.10", (), [1]),
        ("3.9", (("py", "3.11"),), [0]),  # a named version is read whatever is latest
        ("1.0", (), [3]),
        ("*", (("py", "3.11"), ("other", "0.5")), [0, 1, 2, 3, 4]),
        (None, (), [0, 1, 2, 3, 4]),
        (None, (("py", "3.11"),), [2, 3, 4]),
        (None, (("py", "3.10"), ("other", "1.0")), [1, 3, 4]),
        (None, (("other", "2.0"),), [0, 1, 2, 4]),
    ],
)
def test_searches_read_the_version_asked_or_the_latest_of_each_group(
    store: Any,
    base: str,
    version: str | None,
    latest: tuple[tuple[str, str], ...],
    expected: list[int],
) -> None:
    records = _versions(base)
    store.write_originals(records)
    store.write_summaries([_summary(record, "Assignment expressions.") for record in records])
    filters = SearchFilters(source_prefix=base, version=version, latest=latest)

    originals = store.search_originals(
        _query("walrus", AXES[0], limit=10, filters=filters), use=None
    )
    summaries = store.search_summaries(_query("assignment", AXES[0], limit=10, filters=filters))

    assert sorted(hit.properties["chunk_index"] for hit in originals) == expected
    by_id = {str(record.id): record.chunk_index for record in records}
    assert sorted(by_id[str(hit.properties["original_id"])] for hit in summaries) == expected


def test_chunks_and_summaries_are_relabelled_in_place(store: Any, base: str) -> None:
    first, second, _ = _kettle(base)
    store.write_originals([first, second])
    summary = _summary(first, "Descaling.")
    store.write_summaries([summary])

    store.relabel(originals=[first.id], summaries=[summary.id], version="2", version_group="k")

    assert store.existing_originals(base + "kettle.md") == {
        first.id: StoredOriginal(
            chunk_index=0, summary_id="", anchor="section-0", version="2", version_group="k"
        ),
        second.id: StoredOriginal(chunk_index=1, summary_id="", anchor="section-1"),
    }
    [stored] = [r for r in store.list_summaries() if r.id == summary.id]
    assert (stored.version, stored.version_group) == ("2", "k")
    hits = store.search_summaries(
        _query(
            "descaling", AXES[0], limit=5, filters=SearchFilters(source_prefix=base, version="2")
        )
    )
    assert [hit.id for hit in hits] == [str(summary.id)]


def test_a_search_ranks_by_its_legs_and_returns_at_most_its_limit(store: Any, base: str) -> None:
    first, second, other = _kettle(base)
    store.write_originals([first, second, other])
    mine = SearchFilters(source_prefix=base)

    by_words = store.search_originals(
        _query("vinegar", AXES[3], alpha=0.0, limit=3, filters=mine), use=None
    )
    assert by_words[0].id == str(first.id)
    by_vector = store.search_originals(
        _query("unrelated", AXES[1], alpha=1.0, limit=3, filters=mine), use=None
    )
    assert by_vector[0].id == str(second.id)
    assert [hit.score for hit in by_vector] == sorted(
        (hit.score for hit in by_vector), reverse=True
    )
    limited = store.search_originals(
        _query("kettle", AXES[0], alpha=0.5, limit=2, filters=mine), use=None
    )
    assert len(limited) == 2


def test_joint_search_reads_the_attached_summary(store: Any, base: str) -> None:
    first, second, _ = _kettle(base)
    store.write_originals([first, second])
    # The filter chunk's summary says "limescale"; its own text does not, nor its vector.
    summary = dataclasses.replace(
        _summary(second, "Limescale never reaches the filter."), vector=AXES[2]
    )
    store.write_summaries([summary])
    store.attach_summaries([_attachment(summary)])
    mine = SearchFilters(source_prefix=base)

    words = _query("limescale", AXES[3], alpha=0.0, limit=2, filters=mine)
    assert store.search_originals(words, use=None) == []
    [hit] = store.search_originals(words, use=SummaryUse(keyword_weight=1.0))
    assert hit.id == str(second.id)
    assert hit.properties["summary"] == summary.summary
    by_context = store.search_originals(
        _query("", AXES[2], alpha=1.0, limit=1, filters=mine), use=SummaryUse(vector="context")
    )
    assert [hit.id for hit in by_context] == [str(second.id)]


def test_the_summaries_leg_returns_summaries_naming_their_original(store: Any, base: str) -> None:
    first, second, _ = _kettle(base)
    store.write_originals([first, second])
    summaries = [_summary(first, "Descaling with vinegar."), _summary(second, "The filter.")]
    store.write_summaries(summaries)

    [hit, *_] = store.search_summaries(
        _query("vinegar", AXES[0], alpha=0.0, limit=2, filters=SearchFilters(source_prefix=base))
    )

    assert hit.id == str(summaries[0].id)
    assert hit.properties["summary"] == "Descaling with vinegar."
    assert str(hit.properties["original_id"]) == str(first.id)


# -- source records -------------------------------------------------------------------------


def test_a_source_record_is_created_then_replaced(store: Any, base: str) -> None:
    at = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    record = SourceRecord(
        source=base + "kettle.md",
        title="Kettle manual",
        content_hash="abc",
        settings_key="k",
        status="ingesting",
        chunks=2,
        ingested_at=at,
        pending=2,
        version="3.11",
        version_group="py",
    )
    assert store.source_record(record.source) is None
    store.put_source_record(record)
    assert store.source_record(record.source) == record
    done = dataclasses.replace(record, status="complete", pending=0)
    store.put_source_record(done)
    assert store.source_record(record.source) == done


def test_records_are_found_by_status_and_removed(store: Any, base: str) -> None:
    at = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    records = [
        SourceRecord(
            source=base + name,
            title="",
            content_hash="abc",
            settings_key="k",
            status=status,
            chunks=0,
            ingested_at=at,
        )
        for name, status in (("a.md", "deleting"), ("b.md", "complete"), ("c.md", "deleting"))
    ]
    for record in records:
        store.put_source_record(record)
    mine = [name for name in store.sources_in_state("deleting") if name.startswith(base)]
    assert mine == [base + "a.md", base + "c.md"]
    store.delete_source_record(base + "a.md")
    assert store.source_record(base + "a.md") is None
    mine = [name for name in store.sources_in_state("deleting") if name.startswith(base)]
    assert mine == [base + "c.md"]
    store.delete_source_record(base + "c.md")
    store.delete_source_record(base + "b.md")


def test_the_chunks_of_a_source_are_counted(store: Any, base: str) -> None:
    first, second, other = _kettle(base)
    assert store.count_originals(base + "kettle.md") == 0
    store.write_originals([first, second, other])
    assert store.count_originals(base + "kettle.md") == 2
    assert store.count_originals(base + "guide/cups.md") == 1
