"""What a reader browses: sources, their chunks and sections, what hits show, and counts."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from weaviate.classes.query import Filter, Sort

from service.index import rows
from service.index.access import FETCH_LIMIT, IndexAccess, store_errors
from service.index.queries import ORIGINAL_HIT_PROPERTIES
from service.index.records import ShownSummary, SourceChunk, SourceRecord, header_path

__all__ = ["Browsing"]


class Browsing(IndexAccess):
    """Reads the stored sources, chunks and summaries as a reader sees them."""

    def list_sources(self) -> list[SourceRecord]:
        """Every ingested source, sorted by name."""
        with store_errors(f"listing {self.sources_name}"):
            records = [rows.source_record(obj) for obj in self.sources.iterator()]
        return sorted(records, key=lambda record: record.source)

    def source_chunks(
        self, source: str, *, limit: int, offset: int = 0
    ) -> tuple[list[SourceChunk], int]:
        """A page of `source`'s chunks in document order, and how many it has."""
        where = Filter.by_property("source").equal(source)
        with store_errors(f"reading the chunks of {source}"):
            total = self.originals.aggregate.over_all(filters=where, total_count=True).total_count
            result = self.originals.query.fetch_objects(
                filters=where,
                sort=Sort.by_property("chunk_index"),
                limit=limit,
                offset=offset,
                return_properties=rows.SOURCE_CHUNK_PROPERTIES,
            )
        chunks = [rows.source_chunk(obj) for obj in result.objects]
        # Chunks of an index built before they kept their summary's kind: read it there.
        legacy = [chunk.id for chunk in chunks if chunk.summary and chunk.summary_kind is None]
        known = self.summaries_of(legacy) if legacy else {}
        chunks = [
            dataclasses.replace(
                chunk, summary_kind=known[chunk.id].kind, summary_model=known[chunk.id].model
            )
            if chunk.id in known
            else chunk
            for chunk in chunks
        ]
        return chunks, total or 0

    def section_chunks(
        self, keys: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], list[SourceChunk]]:
        """The chunks under each (source, header path) of `keys`, in document order, in
        one query (a header path is `A > B > C`, matched whole)."""
        if not keys:
            return {}
        where = Filter.any_of(
            [
                Filter.all_of(
                    [
                        Filter.by_property("source").equal(source),
                        Filter.by_property("header_path").equal(path),
                    ]
                )
                for source, path in keys
            ]
        )
        with store_errors("reading the sections of the hits"):
            result = self.originals.query.fetch_objects(
                filters=where,
                sort=Sort.by_property("chunk_index"),
                limit=FETCH_LIMIT,
                return_properties=["source", *rows.SOURCE_CHUNK_PROPERTIES],
            )
        found: dict[tuple[str, str], list[SourceChunk]] = {key: [] for key in keys}
        for obj in result.objects:
            chunk = rows.source_chunk(obj)
            key = (str(obj.properties.get("source") or ""), header_path(chunk.headers))
            if key in found:
                found[key].append(chunk)
        return found

    def summaries_of(self, original_ids: Sequence[str]) -> dict[str, ShownSummary]:
        """The stored summary of each of these originals (those that have one), with its
        kind and model."""
        if not original_ids:
            return {}
        with store_errors("reading the summaries of the hits"):
            result = self.summaries.query.fetch_objects(
                filters=Filter.by_property("original_id").contains_any(list(original_ids)),
                limit=len(original_ids) * 2,
                return_properties=["summary", "original_id", "kind", "model"],
            )
        return {
            str(obj.properties["original_id"]): rows.shown_summary(obj.properties)
            for obj in result.objects
        }

    def hit_originals(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The properties a hit shows of the originals with these ids (missing: absent)."""
        if not ids:
            return {}
        with store_errors("reading the originals of the hits"):
            result = self.originals.query.fetch_objects(
                filters=Filter.by_id().contains_any(list(ids)),
                limit=len(ids),
                return_properties=ORIGINAL_HIT_PROPERTIES,
            )
        return {str(obj.uuid): dict(obj.properties) for obj in result.objects}

    def pending_summaries(self) -> int:
        """How many stored chunks are still waiting for their summary."""
        with store_errors(f"counting pending summaries in {self.originals_name}"):
            result = self.originals.aggregate.over_all(
                filters=Filter.by_property("summary_pending").equal(True), total_count=True
            )
        return result.total_count or 0

    def counts(self) -> dict[str, object]:
        """Object counts per collection, summaries per kind and per guard reason, and the
        chunks whose summary is pending.

        `summaries_by_reason` counts "kind:reason" (e.g. "extractive:drift",
        "llm:verbatim" = flagged, retried, retry accepted); a summary flagged for two
        reasons counts under both.
        """
        with store_errors("counting the stored objects"):
            kinds: dict[str, int] = {}
            grouped = self.summaries.aggregate.over_all(group_by="kind", total_count=True)
            for group in grouped.groups:
                kinds[str(group.grouped_by.value)] = group.total_count or 0
            reasons: dict[str, int] = {}
            for kind in sorted(kinds):
                by_reason = self.summaries.aggregate.over_all(
                    filters=Filter.by_property("kind").equal(kind),
                    group_by="reason",
                    total_count=True,
                )
                for group in by_reason.groups:
                    for reason in str(group.grouped_by.value or "").split(","):
                        if reason:
                            key = f"{kind}:{reason}"
                            reasons[key] = reasons.get(key, 0) + (group.total_count or 0)
            totals = {
                name: collection.aggregate.over_all(total_count=True).total_count
                for name, collection in (
                    ("originals", self.originals),
                    ("summaries", self.summaries),
                    ("sources", self.sources),
                )
            }
        return {
            **totals,
            "summaries_by_kind": kinds,
            "summaries_by_reason": dict(sorted(reasons.items())),
            "pending_summaries": self.pending_summaries(),
        }
