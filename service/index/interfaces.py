"""What the ingest pipeline and the searcher need of a store, as Protocols.

`service.index.store.Store` (Weaviate) implements both; unit tests use an in-memory
fake (tests/service/fakes.py), integration tests the real Weaviate.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from service.index.queries import HybridQuery, Match, SummaryUse
from service.index.records import (
    ChunkPlace,
    OriginalRecord,
    ShownSummary,
    SourceRecord,
    StoredOriginal,
    SummaryAttachment,
    SummaryRecord,
)

__all__ = ["IngestStore", "SearchStore"]


class SearchStore(Protocol):
    """The reads a search makes."""

    def exists(self) -> bool: ...

    def search_originals(self, query: HybridQuery, *, use: SummaryUse | None) -> list[Match]: ...

    def has_context_vectors(self) -> bool: ...

    def search_summaries(self, query: HybridQuery) -> list[Match]: ...

    def summaries_of(self, original_ids: Sequence[str]) -> dict[str, ShownSummary]: ...

    def hit_originals(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]: ...


class IngestStore(Protocol):
    """The reads and writes an ingest makes."""

    def ensure_schema(self, *, embedding_model: str, dimension: int) -> None: ...

    def has_context_vectors(self) -> bool: ...

    def add_context_vector(self) -> None: ...

    def mark_context_vectors(self) -> None: ...

    def source_record(self, source: str) -> SourceRecord | None: ...

    def put_source_record(self, record: SourceRecord) -> None: ...

    def existing_originals(self, source: str) -> dict[uuid.UUID, StoredOriginal]: ...

    def existing_summaries(self, source: str) -> dict[uuid.UUID, uuid.UUID]: ...

    def cached_summaries(
        self, hashes: Iterable[str], *, model: str, prompt_version: str
    ) -> dict[str, SummaryRecord]: ...

    def originals_by_id(
        self, ids: Iterable[uuid.UUID], *, with_vectors: bool = False
    ) -> dict[uuid.UUID, OriginalRecord]: ...

    def list_summaries(
        self, *, kind: str | None = None, with_vectors: bool = False
    ) -> list[SummaryRecord]: ...

    def write_originals(self, records: Sequence[OriginalRecord]) -> int: ...

    def write_summaries(self, records: Sequence[SummaryRecord]) -> int: ...

    def attach_summaries(self, attachments: Sequence[SummaryAttachment]) -> None: ...

    def update_unchanged(self, places: dict[uuid.UUID, ChunkPlace]) -> None: ...

    def relabel(
        self,
        *,
        originals: Iterable[uuid.UUID],
        summaries: Iterable[uuid.UUID],
        version: str,
        version_group: str,
    ) -> None: ...

    def delete_summaries(self, ids: Iterable[uuid.UUID]) -> int: ...

    def delete_originals(self, ids: Iterable[uuid.UUID]) -> int: ...

    def delete_source_record(self, source: str) -> None: ...

    def sources_in_state(self, status: str) -> list[str]: ...

    def count_originals(self, source: str) -> int: ...
