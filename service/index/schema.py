"""Creating a collection that several processes may create at once.

Every service process (each of `synopsis serve --workers N`) creates the collections it
needs when they are missing: the job collections at startup, the index's on the first
ingest. On a fresh deployment they race. Two things go wrong without care, both seen
with two worker processes on Weaviate 1.39:

- the loser's create is refused with 422 `class name … already exists` (or `updating
  schema: TYPE_ADD_CLASS: class already exists`);
- a process that finds the collection in the schema while the other's create is still
  in flight can query it before its index is loaded, and Weaviate answers `tried to
  browse non-existing index for …`.

`ensure_collection` takes a refused create as "another process made it" and, either way,
waits (bounded) until the collection answers a query.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import weaviate
from weaviate.classes.config import Configure, DataType, Property, Tokenization
from weaviate.collections import Collection
from weaviate.exceptions import UnexpectedStatusCodeError, WeaviateQueryError

from service.errors import StoreError
from service.index.replication import ReplicatedCollections, Replication

__all__ = [
    "USABLE_TIMEOUT_SECONDS",
    "RecordCollection",
    "create_records",
    "delete_collections",
    "ensure_collection",
    "keyword_property",
    "stored_text",
    "wait_usable",
]

#: How long a collection another process is creating may take to answer a query.
USABLE_TIMEOUT_SECONDS = 30.0

_NOT_LOADED = "non-existing index"


def keyword_property(name: str) -> Property:
    """A text property matched whole (`field` tokenization): ids, names, states, hashes."""
    return Property(name=name, data_type=DataType.TEXT, tokenization=Tokenization.FIELD)


def stored_text(name: str) -> Property:
    """A text property that is only read back: no BM25, no filter (JSON, reasons, ids)."""
    return Property(
        name=name, data_type=DataType.TEXT, index_filterable=False, index_searchable=False
    )


def create_records(
    client: weaviate.WeaviateClient,
    name: str,
    *,
    description: str,
    properties: list[Property],
    replication: Replication,
) -> None:
    """Create a collection of the service's own records (no vectors; copies and
    consistency as `replication` says)."""
    client.collections.create(
        name,
        description=description,
        vector_config=Configure.Vectors.self_provided(),
        replication_config=replication.config(),
        properties=properties,
    )


def ensure_collection(
    client: weaviate.WeaviateClient, name: str, create: Callable[[], None]
) -> bool:
    """Make sure collection `name` exists and answers queries; True when this call created
    it (with `create`), False when it existed or another process created it meanwhile."""
    created = False
    if not client.collections.exists(name):
        try:
            create()
            created = True
        except UnexpectedStatusCodeError as exc:
            if exc.status_code != 422 or "already exists" not in exc.message:
                raise
    wait_usable(client, name)
    return created


def wait_usable(
    client: weaviate.WeaviateClient, name: str, *, timeout: float = USABLE_TIMEOUT_SECONDS
) -> None:
    """Return once collection `name` answers a query; `StoreError` after `timeout` s."""
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        try:
            client.collections.use(name).query.fetch_objects(limit=1, return_properties=[])
            return
        except WeaviateQueryError as exc:
            if _NOT_LOADED not in exc.message:
                raise
            if time.monotonic() >= deadline:
                raise StoreError(f"collection {name} was created but answers no query") from exc
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


class RecordCollection(ReplicatedCollections):
    """One collection of the service's own records (leases, conversations, registered
    sources): its name (`prefix` + `collection`), how it is read and written under the
    replication settings, and its creation once per instance from `description` and
    `properties()`, defined by each store."""

    collection: ClassVar[str]
    description: ClassVar[str]

    _ensured = False  # the collection was made or found by this instance

    @property
    def name(self) -> str:
        return f"{self.prefix}{self.collection}"

    @property
    def _reads(self) -> Collection[Any, Any]:
        return self._readable(self.name)

    @property
    def _writes(self) -> Collection[Any, Any]:
        return self._writable(self.name)

    def properties(self) -> list[Property]:
        """The collection's properties when it is created."""
        raise NotImplementedError

    def ensure_schema(self) -> None:
        """Create the collection unless it exists (once per instance; safe in parallel)."""
        if not self._ensured:
            ensure_collection(self.client, self.name, self._create)
            self._ensured = True

    def _create(self) -> None:
        create_records(
            self.client,
            self.name,
            description=self.description,
            properties=self.properties(),
            replication=self.replication,
        )

    def drop(self) -> None:
        """Delete the collection (tests and explicit resets only)."""
        delete_collections(self.client, [self.name])
        self._ensured = False


def delete_collections(client: weaviate.WeaviateClient, names: Iterable[str]) -> None:
    """Delete those of the collections `names` that exist (drops: tests and explicit
    resets). Asked to delete a missing collection, Weaviate 1.39 took as long as for a
    create (0.17 s, against 1.4 ms to ask whether it exists and 22 ms to delete one that
    does), and a drop mostly meets missing ones."""
    for name in names:
        if client.collections.exists(name):
            client.collections.delete(name)
