"""The reads an ingest makes: what is stored of a source, cached summaries, records by id."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from weaviate.classes.query import Filter
from weaviate.collections import Collection

from service.errors import StoreError
from service.index import rows
from service.index.access import FETCH_LIMIT, IndexAccess, store_errors
from service.index.records import (
    CONTENT_VECTOR,
    OriginalRecord,
    SourceRecord,
    StoredOriginal,
    SummaryRecord,
)

__all__ = ["IngestReads"]


class IngestReads(IndexAccess):
    """Reads what an ingest, a delete and a re-index need to decide what to write."""

    def existing_originals(self, source: str) -> dict[uuid.UUID, StoredOriginal]:
        """The stored chunks of `source` by id: chunk index, attached summary id and
        version labels."""
        found = self._fetch(
            self.originals,
            source,
            ["chunk_index", "summary_id", "anchor", "version", "version_group"],
        )
        return {obj.uuid: rows.stored_original(obj) for obj in found}

    def existing_summaries(self, source: str) -> dict[uuid.UUID, uuid.UUID]:
        """Ids of the stored summaries of `source`, with the id of the original each refers to."""
        found = self._fetch(self.summaries, source, ["original_id"])
        return {obj.uuid: uuid.UUID(str(obj.properties["original_id"])) for obj in found}

    def cached_summaries(
        self, hashes: Iterable[str], *, model: str, prompt_version: str
    ) -> dict[str, SummaryRecord]:
        """Summaries already written for chunks with these content hashes, by hash (any source)."""
        wanted = sorted(set(hashes))
        cached: dict[str, SummaryRecord] = {}
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            with store_errors(f"reading cached summaries in {self.summaries_name}"):
                result = self.summaries.query.fetch_objects(
                    filters=(
                        Filter.by_property("content_hash").contains_any(batch)
                        & Filter.by_property("model").equal(model)
                        & Filter.by_property("prompt_version").equal(prompt_version)
                    ),
                    limit=FETCH_LIMIT,
                    include_vector=True,
                )
            for obj in result.objects:
                cached.setdefault(str(obj.properties["content_hash"]), rows.summary_record(obj))
        return cached

    def list_summaries(
        self, *, kind: str | None = None, with_vectors: bool = False
    ) -> list[SummaryRecord]:
        """Every stored summary (of one kind if given), by source and header; with their
        vectors only when asked."""
        with store_errors(f"listing {self.summaries_name}"):
            records = [
                rows.summary_record(obj)
                for obj in self.summaries.iterator(include_vector=with_vectors)
                if kind is None or (obj.properties.get("kind") or "llm") == kind
            ]
        return sorted(records, key=lambda record: (record.source, record.headers))

    def originals_by_id(
        self, ids: Iterable[uuid.UUID], *, with_vectors: bool = False
    ) -> dict[uuid.UUID, OriginalRecord]:
        """The stored chunks with these ids (missing ones are left out); `vector` is their
        `content` vector when `with_vectors`, else empty."""
        wanted = list(dict.fromkeys(ids))
        found: dict[uuid.UUID, OriginalRecord] = {}
        for start in range(0, len(wanted), 500):
            with store_errors(f"reading chunks by id in {self.originals_name}"):
                result = self.originals.query.fetch_objects(
                    filters=Filter.by_id().contains_any(wanted[start : start + 500]),
                    limit=FETCH_LIMIT,
                    include_vector=[CONTENT_VECTOR] if with_vectors else False,
                )
            for obj in result.objects:
                found[obj.uuid] = rows.original_record(obj)
        return found

    def source_record(self, source: str) -> SourceRecord | None:
        """The record of the last ingest of `source`, if any."""
        with store_errors(f"reading the record of {source}"):
            obj = self.sources.query.fetch_object_by_id(rows.source_uuid(source))
        return None if obj is None else rows.source_record(obj)

    def sources_in_state(self, status: str) -> list[str]:
        """The sources whose record has `status` (at most 10,000 per call)."""
        with store_errors(f"reading the {status} sources"):
            result = self.sources.query.fetch_objects(
                filters=Filter.by_property("status").equal(status),
                limit=FETCH_LIMIT,
                return_properties=["source"],
            )
        return sorted(str(obj.properties["source"]) for obj in result.objects)

    def count_originals(self, source: str) -> int:
        """How many chunks of `source` are stored."""
        with store_errors(f"counting the chunks of {source}"):
            result = self.originals.aggregate.over_all(
                filters=Filter.by_property("source").equal(source), total_count=True
            )
        return result.total_count or 0

    def _fetch(
        self, collection: Collection[Any, Any], source: str, properties: list[str]
    ) -> list[Any]:
        with store_errors(f"reading {source} in {collection.name}"):
            result = collection.query.fetch_objects(
                filters=Filter.by_property("source").equal(source),
                limit=FETCH_LIMIT,
                return_properties=properties,
            )
        if len(result.objects) >= FETCH_LIMIT:
            raise StoreError(f"{source} has more than {FETCH_LIMIT} objects in {collection.name}")
        return list(result.objects)
