"""The real Weaviate: self-provided vectors, hybrid search, and data that survives a restart."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import weaviate
from weaviate.classes.config import Configure, DataType, Property
from weaviate.classes.data import DataObject
from weaviate.classes.query import MetadataQuery
from weaviate.collections import Collection

from service.connections import connect_weaviate
from service.settings import Settings
from service.stack import LocalStack
from tests.support.stacks import IsolatedSettings

pytestmark = pytest.mark.integration

# Three documents with hand-made 4-d vectors, exactly representable as float32.
DOCUMENTS = [
    (
        uuid.UUID("00000000-0000-0000-0000-00000000000a"),
        "Weaviate stores vectors",
        "A vector database keeps objects and their embeddings side by side.",
        [1.0, 0.0, 0.0, 0.0],
    ),
    (
        uuid.UUID("00000000-0000-0000-0000-00000000000b"),
        "Ollama runs models",
        "A local server that answers chat and embedding requests.",
        [0.0, 1.0, 0.0, 0.0],
    ),
    (
        uuid.UUID("00000000-0000-0000-0000-00000000000c"),
        "tiktoken counts tokens",
        "Byte pair encoding splits text into integer token ids.",
        [0.0, 0.0, 0.5, 0.5],
    ),
]
IDS = [doc_id for doc_id, *_ in DOCUMENTS]


def _create(client: weaviate.WeaviateClient, name: str) -> Collection:
    return client.collections.create(
        name,
        vector_config=Configure.Vectors.self_provided(),
        properties=[
            Property(name="title", data_type=DataType.TEXT),
            Property(name="body", data_type=DataType.TEXT),
        ],
    )


def _insert(collection: Collection) -> None:
    result = collection.data.insert_many(
        [
            DataObject(uuid=doc_id, properties={"title": title, "body": body}, vector=vector)
            for doc_id, title, body, vector in DOCUMENTS
        ]
    )
    assert result.errors == {}


def _unique_name() -> str:
    return f"SynopsisTest{uuid.uuid4().hex[:12]}"


@pytest.fixture
def collection(weaviate_client: weaviate.WeaviateClient) -> Iterator[Collection]:
    """A collection with a unique name in the shared Weaviate, deleted afterwards."""
    name = _unique_name()
    created = _create(weaviate_client, name)
    try:
        yield created
    finally:
        weaviate_client.collections.delete(name)


def test_server_version(weaviate_client: weaviate.WeaviateClient, settings: Settings) -> None:
    assert weaviate_client.is_ready()
    assert weaviate_client.get_meta()["version"] == settings.stack.weaviate_version


def test_insert_and_fetch_with_vectors(collection: Collection) -> None:
    _insert(collection)
    assert len(collection) == 3
    for doc_id, title, body, vector in DOCUMENTS:
        fetched = collection.query.fetch_object_by_id(doc_id, include_vector=True)
        assert fetched is not None
        assert fetched.properties == {"title": title, "body": body}
        assert fetched.vector["default"] == vector


@pytest.mark.parametrize(
    ("query", "vector", "alpha", "expected"),
    [
        # Keywords and vector agree on the first document.
        ("vector database", [0.9, 0.1, 0.0, 0.0], 0.5, IDS),
        # Pure BM25: only the document with both words matches.
        ("embedding requests", [0.0, 0.0, 0.0, 1.0], 0.0, [IDS[1]]),
        # Pure vector: ordered by cosine distance to the query vector.
        ("anything", [0.0, 0.2, 1.0, 1.0], 1.0, [IDS[2], IDS[1], IDS[0]]),
    ],
)
def test_hybrid_query(
    collection: Collection, query: str, vector: list[float], alpha: float, expected: list[uuid.UUID]
) -> None:
    _insert(collection)
    response = collection.query.hybrid(
        query=query,
        vector=vector,
        alpha=alpha,
        limit=3,
        return_metadata=MetadataQuery(score=True),
    )
    assert [hit.uuid for hit in response.objects][: len(expected)] == expected
    if alpha == 0.0:
        assert len(response.objects) == len(expected)


def test_data_survives_a_restart(isolated_settings: IsolatedSettings) -> None:
    # A Weaviate of its own (Ollama stays the shared one): restarting the shared one would
    # disturb everyone else.
    settings = isolated_settings(100, ollama=False)
    stack = LocalStack(settings)
    assert stack.up().weaviate.running
    name = _unique_name()
    with connect_weaviate(settings) as client:
        _insert(_create(client, name))
    first_pid = stack.status().weaviate.pid

    assert stack.down() == ["weaviate"]
    assert stack.status().weaviate.detail == "stopped"
    restarted = stack.up().weaviate
    assert restarted.running
    assert restarted.pid != first_pid

    with connect_weaviate(settings) as client:
        collection = client.collections.get(name)
        assert len(collection) == 3
        for doc_id, title, body, vector in DOCUMENTS:
            fetched = collection.query.fetch_object_by_id(doc_id, include_vector=True)
            assert fetched is not None
            assert (fetched.properties, fetched.vector["default"]) == (
                {"title": title, "body": body},
                vector,
            )
        hits = collection.query.hybrid(query="vector database", vector=[1.0, 0, 0, 0], limit=1)
        assert [hit.uuid for hit in hits.objects] == [IDS[0]]
    assert stack.down() == ["weaviate"]
