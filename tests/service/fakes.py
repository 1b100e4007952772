"""An in-memory store for unit tests of the ingest pipeline and the searcher.

It keeps what `service.index.store.Store` keeps, in dicts, and records the order of
writes; search calls return canned matches. The real Weaviate is the integration tests'.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from service.index.records import (
    ChunkPlace,
    OriginalRecord,
    SourceRecord,
    StoredOriginal,
    SummaryAttachment,
    SummaryRecord,
)
from service.index.store import HybridQuery, Match, SummaryUse


class MemoryStore:
    """Implements IngestStore and SearchStore over dicts."""

    def __init__(self) -> None:
        self.originals: dict[uuid.UUID, OriginalRecord] = {}
        self.summary_vectors: dict[uuid.UUID, list[float]] = {}  # the `summary` named vector
        self.context_vectors: dict[uuid.UUID, list[float]] = {}  # the `context` named vector
        self.context_layout = True  # False: an index built before `context` vectors
        self.attached: dict[uuid.UUID, SummaryAttachment] = {}
        self.summaries: dict[uuid.UUID, SummaryRecord] = {}
        self.sources: dict[str, SourceRecord] = {}
        self.log: list[str] = []  # "originals", "summaries", "attach", "record:<status>"
        self.fail_on: str | None = None  # a log entry that raises instead
        self.matches: list[Match] = []  # what searches return
        self.queries: list[tuple[str, HybridQuery, dict[str, Any]]] = []

    def _step(self, entry: str) -> None:
        if entry == self.fail_on:
            raise RuntimeError(f"injected failure at {entry}")
        self.log.append(entry)

    # -- IngestStore ----------------------------------------------------------------------

    def ensure_schema(self, *, embedding_model: str, dimension: int) -> None:
        pass

    def has_context_vectors(self) -> bool:
        return self.context_layout

    def add_context_vector(self) -> None:
        self._step("add-context")
        self.context_vectors = {oid: r.vector for oid, r in self.originals.items()}

    def mark_context_vectors(self) -> None:
        self._step("mark-context")
        self.context_layout = True

    def source_record(self, source: str) -> SourceRecord | None:
        return self.sources.get(source)

    def put_source_record(self, record: SourceRecord) -> None:
        self._step(f"record:{record.status}")
        self.sources[record.source] = record

    def existing_originals(self, source: str) -> dict[uuid.UUID, StoredOriginal]:
        return {
            oid: StoredOriginal(
                chunk_index=record.chunk_index,
                summary_id=str(self.attached[oid].summary_id) if oid in self.attached else "",
                anchor=record.anchor,
            )
            for oid, record in self.originals.items()
            if record.source == source
        }

    def existing_summaries(self, source: str) -> dict[uuid.UUID, uuid.UUID]:
        return {sid: s.original_id for sid, s in self.summaries.items() if s.source == source}

    def cached_summaries(
        self, hashes: Iterable[str], *, model: str, prompt_version: str
    ) -> dict[str, SummaryRecord]:
        wanted = set(hashes)
        return {
            s.content_hash: s
            for s in self.summaries.values()
            if s.content_hash in wanted and (s.model, s.prompt_version) == (model, prompt_version)
        }

    def originals_by_id(
        self, ids: Iterable[uuid.UUID], *, with_vectors: bool = False
    ) -> dict[uuid.UUID, OriginalRecord]:
        found = {oid: self.originals[oid] for oid in ids if oid in self.originals}
        if with_vectors:
            return found
        return {oid: dataclasses.replace(r, vector=[]) for oid, r in found.items()}

    def list_summaries(
        self, *, kind: str | None = None, with_vectors: bool = False
    ) -> list[SummaryRecord]:
        return [s for s in self.summaries.values() if kind is None or s.kind == kind]

    def write_originals(self, records: Sequence[OriginalRecord]) -> int:
        if records:
            self._step("originals")
        for record in records:
            self.originals[record.id] = record
            self.summary_vectors[record.id] = record.vector
            self.context_vectors[record.id] = record.vector
            self.attached.pop(record.id, None)
        return len(records)

    def write_summaries(self, records: Sequence[SummaryRecord]) -> int:
        if records:
            self._step("summaries")
        for record in records:
            self.summaries[record.id] = record
        return len(records)

    def attach_summaries(self, attachments: Sequence[SummaryAttachment]) -> None:
        if attachments:
            self._step("attach")
        for item in attachments:
            self.attached[item.original_id] = item
            self.summary_vectors[item.original_id] = item.vector
            self.context_vectors[item.original_id] = item.context_vector

    def update_unchanged(self, places: dict[uuid.UUID, ChunkPlace]) -> None:
        for oid, place in places.items():
            self.originals[oid] = dataclasses.replace(
                self.originals[oid], chunk_index=place.chunk_index, anchor=place.anchor
            )

    def delete_summaries(self, ids: Iterable[uuid.UUID]) -> int:
        return sum(self.summaries.pop(sid, None) is not None for sid in list(ids))

    def delete_originals(self, ids: Iterable[uuid.UUID]) -> int:
        deleted = 0
        for oid in list(ids):
            deleted += self.originals.pop(oid, None) is not None
            self.attached.pop(oid, None)
            self.summary_vectors.pop(oid, None)
            self.context_vectors.pop(oid, None)
        return deleted

    def pending(self) -> int:
        return sum(oid not in self.attached for oid in self.originals)

    # -- SearchStore ----------------------------------------------------------------------

    def exists(self) -> bool:
        return True

    def search_originals(self, query: HybridQuery, *, use: SummaryUse | None) -> list[Match]:
        self.queries.append(("originals", query, {"use": use}))
        return self.matches[: query.limit]

    def search_summaries(self, query: HybridQuery) -> list[Match]:
        self.queries.append(("summaries", query, {}))
        return self.matches[: query.limit]

    def summaries_of(self, original_ids: Sequence[str]) -> dict[str, str]:
        return {
            str(s.original_id): s.summary
            for s in self.summaries.values()
            if str(s.original_id) in original_ids
        }

    def hit_originals(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        return {
            str(oid): {"content": r.content, "source": r.source, "headers": r.headers}
            for oid, r in self.originals.items()
            if str(oid) in ids
        }
