"""The writes: chunks, summaries and their attachment, source records, and deletes."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from weaviate.classes.data import DataObject
from weaviate.classes.query import Filter

from service.errors import StoreError
from service.index import rows
from service.index.access import IndexAccess, store_errors
from service.index.records import (
    CONTENT_VECTOR,
    CONTEXT_VECTOR,
    SUMMARY_VECTOR,
    ChunkPlace,
    OriginalRecord,
    SourceRecord,
    SummaryAttachment,
    SummaryRecord,
)

__all__ = ["Writes"]

_INSERT_BATCH = 200
_DELETE_BATCH = 500


class Writes(IndexAccess):
    """Upserts and deletes, at the write consistency level; every failed object is reported."""

    def write_originals(self, records: Sequence[OriginalRecord]) -> int:
        """Upsert chunks; every failed object is reported. Returns the number written."""
        objects: list[DataObject[Any, Any]] = [
            DataObject(
                uuid=record.id,
                # Until its summary is attached, a chunk's summary vector is its own.
                vector={
                    CONTENT_VECTOR: record.vector,
                    SUMMARY_VECTOR: record.vector,
                    CONTEXT_VECTOR: record.vector,
                },
                properties=rows.original_properties(record),
            )
            for record in records
        ]
        return self._insert(self.originals_name, objects)

    def write_summaries(self, records: Sequence[SummaryRecord]) -> int:
        """Upsert summaries with their reference to the original. Returns the number written."""
        objects: list[DataObject[Any, Any]] = [
            DataObject(
                uuid=record.id,
                vector=record.vector,
                properties=rows.summary_properties(record),
                references={"originalDocument": record.original_id},
            )
            for record in records
        ]
        return self._insert(self.summaries_name, objects)

    def attach_summaries(self, attachments: Sequence[SummaryAttachment]) -> None:
        """Give each original its summary: BM25 text, `summary` and `context` vectors and
        provenance."""
        originals = self._writable(self.originals_name)
        for item in attachments:
            with store_errors(f"attaching a summary to {item.original_id}"):
                originals.data.update(
                    uuid=item.original_id,
                    properties={
                        "summary": item.text,
                        "summary_id": str(item.summary_id),
                        "summary_pending": False,
                        "summary_similarity": item.similarity,
                        "summary_kind": item.kind,
                        "summary_model": item.model,
                    },
                    vector={SUMMARY_VECTOR: item.vector, CONTEXT_VECTOR: item.context_vector},
                )

    def update_unchanged(self, places: dict[uuid.UUID, ChunkPlace]) -> None:
        """Give unchanged chunks their new position and section anchor (no re-embedding,
        no LLM)."""
        originals = self._writable(self.originals_name)
        for object_id, place in places.items():
            with store_errors(f"moving chunk {object_id}"):
                originals.data.update(
                    uuid=object_id,
                    properties={"chunk_index": place.chunk_index, "anchor": place.anchor},
                )

    def relabel(
        self,
        *,
        originals: Iterable[uuid.UUID],
        summaries: Iterable[uuid.UUID],
        version: str,
        version_group: str,
    ) -> None:
        """Give stored chunks and summaries another version label and group (their source
        was re-labelled; nothing is embedded again, `indexed_at` is kept)."""
        labels = {"version": version, "version_group": version_group}
        for name, ids in ((self.originals_name, originals), (self.summaries_name, summaries)):
            collection = self._writable(name)
            for object_id in ids:
                with store_errors(f"labelling {object_id} in {name}"):
                    collection.data.update(uuid=object_id, properties=labels)

    def put_source_record(self, record: SourceRecord) -> None:
        """Create or replace the record of `record.source`."""
        properties = rows.source_properties(record)
        object_id = rows.source_uuid(record.source)
        sources = self._writable(self.sources_name)
        with store_errors(f"writing the record of {record.source}"):
            if sources.data.exists(object_id):
                sources.data.replace(uuid=object_id, properties=properties)
            else:
                sources.data.insert(uuid=object_id, properties=properties)

    def delete_summaries(self, ids: Iterable[uuid.UUID]) -> int:
        return self._delete(self.summaries_name, ids)

    def delete_originals(self, ids: Iterable[uuid.UUID]) -> int:
        return self._delete(self.originals_name, ids)

    def delete_source_record(self, source: str) -> None:
        """Remove the record of `source` (its chunks and summaries: `delete_source` in
        `service.ingest.delete`, which orders the steps)."""
        with store_errors(f"deleting the record of {source}"):
            self._writable(self.sources_name).data.delete_by_id(rows.source_uuid(source))

    def _insert(self, name: str, objects: list[DataObject[Any, Any]]) -> int:
        collection = self._writable(name)
        written = 0
        for start in range(0, len(objects), _INSERT_BATCH):
            batch = objects[start : start + _INSERT_BATCH]
            with store_errors(f"writing to {name}"):
                result = collection.data.insert_many(batch)
            if result.errors:
                first = next(iter(result.errors.values()))
                raise StoreError(
                    f"{len(result.errors)} of {len(batch)} objects were rejected by "
                    f"{collection.name}: {first.message}"
                )
            written += len(batch)
        return written

    def _delete(self, name: str, ids: Iterable[uuid.UUID]) -> int:
        collection = self._writable(name)
        wanted = list(ids)
        deleted = 0
        for start in range(0, len(wanted), _DELETE_BATCH):
            batch = wanted[start : start + _DELETE_BATCH]
            with store_errors(f"deleting from {name}"):
                result = collection.data.delete_many(where=Filter.by_id().contains_any(batch))
            if result.failed:
                raise StoreError(f"{result.failed} deletions failed in {collection.name}")
            deleted += result.successful
        return deleted
