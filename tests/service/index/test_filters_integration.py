"""Prefix filters on the real Weaviate: a `?` or `*` in `source_prefix` or `header_prefix`
means itself, not Weaviate's `like` wildcard (which has no escape). The chunks are written
directly with 4-dimensional vectors: no model is involved."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import weaviate

from service.connections import connect_weaviate
from service.index.queries import HybridQuery, SearchFilters
from service.index.records import OriginalRecord, SummaryRecord
from service.index.store import Store
from service.settings import Settings

pytestmark = pytest.mark.integration

PREFIX = "TestLikeFilters"
VECTOR = [1.0, 0.0, 0.0, 0.0]
#: (source, headers) of each chunk.
CHUNKS = [
    ("docs/a?b.md", ["Guide", "Step *1"]),
    ("docs/aXb.md", ["Guide", "Step 21"]),
    ("docs/a*b.md", ["Guide", "Step ?"]),
    ("docs/ab.md", ["Guide", "Steps"]),
    ("other/z.md", ["Other"]),
]
DOCS = {"docs/a?b.md", "docs/aXb.md", "docs/a*b.md", "docs/ab.md"}


@pytest.fixture(scope="module")
def client(settings: Settings) -> Iterator[weaviate.WeaviateClient]:
    connected = connect_weaviate(settings)
    try:
        yield connected
    finally:
        connected.close()


@pytest.fixture(scope="module")
def store(client: weaviate.WeaviateClient) -> Iterator[Store]:
    store = Store(client, prefix=PREFIX)
    store.drop()
    store.ensure_schema(embedding_model="test-4d", dimension=len(VECTOR))
    originals = [
        OriginalRecord(
            id=uuid.uuid5(uuid.NAMESPACE_URL, source),
            source=source,
            title=source,
            headers=headers,
            chunk_index=0,
            content=f"joining paths in {source}",
            content_hash=source,
            vector=VECTOR,
        )
        for source, headers in CHUNKS
    ]
    store.write_originals(originals)
    store.write_summaries(
        [
            SummaryRecord(
                id=uuid.uuid5(original.id, "summary"),
                original_id=original.id,
                source=original.source,
                title=original.title,
                headers=original.headers,
                summary=f"How to join paths ({original.source}).",
                content_hash=original.content_hash,
                model="test",
                prompt_version="test",
                vector=VECTOR,
            )
            for original in originals
        ]
    )
    yield store
    store.drop()


def _sources(store: Store, filters: SearchFilters) -> dict[str, set[str]]:
    query = HybridQuery(
        keywords="joining paths", vector=VECTOR, alpha=0.5, limit=10, filters=filters
    )
    originals = store.search_originals(query, use=None)
    summaries = store.search_summaries(query)
    return {
        "originals": {str(match.properties["source"]) for match in originals},
        "summaries": {str(match.properties["source"]) for match in summaries},
    }


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (SearchFilters(source_prefix="docs/a?"), {"docs/a?b.md"}),
        (SearchFilters(source_prefix="docs/a*"), {"docs/a*b.md"}),
        (SearchFilters(source_prefix="*"), set()),
        (SearchFilters(source_prefix="?"), set()),
        (SearchFilters(source_prefix="docs/a"), DOCS),
        (SearchFilters(header_prefix="Guide > Step *"), {"docs/a?b.md"}),
        (SearchFilters(header_prefix="Guide > Step ?"), {"docs/a*b.md"}),
        (SearchFilters(header_prefix="Guide > Step"), DOCS),
    ],
)
def test_a_wildcard_in_a_prefix_means_itself(
    store: Store, filters: SearchFilters, expected: set[str]
) -> None:
    assert _sources(store, filters) == {"originals": expected, "summaries": expected}
