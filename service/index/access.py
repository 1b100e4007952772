"""How every part of the store reaches the index's three collections, and its error rule.

The store (`service.index.store.Store`) is made of one class per job, each an
`IndexAccess`: the collections' layout (`layout`), the reads an ingest makes (`reads`),
hybrid search (`hybrid`), browsing (`browse`) and writes (`writes`). They share what this
class holds: the client, the collections' names (which may carry
`Settings.external.collection_prefix`), and the replication settings, under which every read and
write goes out (`service/index/replication.py`; the default is one copy and no levels).

The error rule: a weaviate-client error raised while talking to Weaviate becomes a
`StoreError` that says what was being done and keeps the client's error as its cause
(`store_errors`), so every edge sees one kind of store failure, and the HTTP API still finds
Weaviate's own refusal in the cause (`service.api.exceptions.refusal_of`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from weaviate.collections import Collection
from weaviate.exceptions import WeaviateBaseError

from service.errors import StoreError
from service.index.replication import ReplicatedCollections

__all__ = ["FETCH_LIMIT", "IndexAccess", "store_errors"]

FETCH_LIMIT = 10_000  # Weaviate's default QUERY_MAXIMUM_RESULTS


@contextmanager
def store_errors(what: str) -> Iterator[None]:
    """Raise a weaviate-client error raised inside as `StoreError("<what> failed: …")`."""
    try:
        yield
    except WeaviateBaseError as exc:
        raise StoreError(f"{what} failed: {exc}") from exc


class IndexAccess(ReplicatedCollections):
    """The client, the three collections' names and how they are read and written."""

    @property
    def originals_name(self) -> str:
        return f"{self.prefix}OriginalDocuments"

    @property
    def summaries_name(self) -> str:
        return f"{self.prefix}SummarizedDocuments"

    @property
    def sources_name(self) -> str:
        return f"{self.prefix}IngestedSources"

    # Reads go through these, at the read consistency level; writes through `_writable`.
    @property
    def originals(self) -> Collection[Any, Any]:
        return self._readable(self.originals_name)

    @property
    def summaries(self) -> Collection[Any, Any]:
        return self._readable(self.summaries_name)

    @property
    def sources(self) -> Collection[Any, Any]:
        return self._readable(self.sources_name)
