"""One mapper per record type, each way: records → Weaviate properties, objects → records.

A Weaviate object here is what the client returns (`uuid`, `properties`, `vector`); an
absent property (an object written before it existed, or one a query did not ask for)
reads as empty.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from typing import Any

from service.index.identity import NAMESPACE
from service.index.queries import Match
from service.index.records import (
    CONTENT_VECTOR,
    OriginalRecord,
    ShownSummary,
    SourceChunk,
    SourceRecord,
    StoredOriginal,
    SummaryRecord,
    header_path,
)

__all__ = [
    "SOURCE_CHUNK_PROPERTIES",
    "attached_summary",
    "match",
    "original_properties",
    "original_record",
    "shown_summary",
    "source_chunk",
    "source_properties",
    "source_record",
    "source_uuid",
    "stored_original",
    "summary_properties",
    "summary_record",
    "vector",
]

#: What a reader browsing a source sees of each chunk (`source_chunk`).
SOURCE_CHUNK_PROPERTIES = [
    "headers", "chunk_index", "content", "summary", "summary_pending", "summary_kind",
    "summary_model", "page_start", "page_end", "anchor", "version", "indexed_at",
]  # fmt: skip


# -- records → properties ---------------------------------------------------------------


def original_properties(record: OriginalRecord) -> dict[str, Any]:
    """A chunk as it is first written: without a summary, whatever its record says."""
    return {
        **_shared_properties(record),
        "content": record.content,
        "summary": "",
        "summary_id": "",
        "summary_pending": True,
        "summary_similarity": 0.0,
        "summary_kind": "",
        "summary_model": "",
        "chunk_index": record.chunk_index,
        "content_hash": record.content_hash,
        "content_type": record.content_type,
        "page_start": record.page_start,
        "page_end": record.page_end,
        "anchor": record.anchor,
    }


def summary_properties(record: SummaryRecord) -> dict[str, Any]:
    """A summary (its reference to the original is written beside them)."""
    return {
        **_shared_properties(record),
        "summary": record.summary,
        "original_id": record.original_id,
        "content_hash": record.content_hash,
        "model": record.model,
        "prompt_version": record.prompt_version,
        "kind": record.kind,
        "reason": record.reason,
        "similarity": record.similarity,
    }


def source_properties(record: SourceRecord) -> dict[str, Any]:
    """The record of a source's last ingest."""
    return {
        "source": record.source,
        "title": record.title,
        "content_hash": record.content_hash,
        "settings_key": record.settings_key,
        "status": record.status,
        "chunks": record.chunks,
        "pending": record.pending,
        "ingested_at": record.ingested_at,
        "version": record.version,
        "version_group": record.version_group,
    }


def source_uuid(source: str) -> uuid.UUID:
    """The object id of the record of `source`."""
    return uuid.uuid5(NAMESPACE, f"source\n{source}")


def _shared_properties(record: OriginalRecord | SummaryRecord) -> dict[str, Any]:
    """The properties an original and its summary both carry, for filters and BM25."""
    return {
        "headers": record.headers,
        "identifiers": record.identifiers,
        "title": record.title,
        "source": record.source,
        "header_path": header_path(record.headers),
        "version": record.version,
        "version_group": record.version_group,
        "indexed_at": record.indexed_at,
    }


# -- objects → records ------------------------------------------------------------------


def original_record(obj: Any) -> OriginalRecord:
    """A stored chunk; `vector` is its `content` vector when the query returned it."""
    props = obj.properties
    return OriginalRecord(
        id=obj.uuid,
        source=str(props["source"]),
        title=str(props.get("title") or ""),
        headers=[str(h) for h in props.get("headers") or []],
        chunk_index=_int(props.get("chunk_index")),
        content=str(props.get("content") or ""),
        content_hash=str(props.get("content_hash") or ""),
        content_type=str(props.get("content_type") or ""),
        identifiers=[str(i) for i in props.get("identifiers") or []],
        page_start=_optional_int(props.get("page_start")),
        page_end=_optional_int(props.get("page_end")),
        anchor=str(props.get("anchor") or ""),
        summary=str(props.get("summary") or ""),
        vector=vector(obj.vector, CONTENT_VECTOR),
        version=str(props.get("version") or ""),
        version_group=str(props.get("version_group") or ""),
        indexed_at=_date(props.get("indexed_at")),
    )


def stored_original(obj: Any) -> StoredOriginal:
    """What an ingest needs of a stored chunk: its place and attached summary's id."""
    return StoredOriginal(
        chunk_index=_int(obj.properties.get("chunk_index")),
        summary_id=str(obj.properties.get("summary_id") or ""),
        anchor=str(obj.properties.get("anchor") or ""),
        version=str(obj.properties.get("version") or ""),
        version_group=str(obj.properties.get("version_group") or ""),
    )


def summary_record(obj: Any) -> SummaryRecord:
    """A stored summary; `vector` is its vector when the query returned it."""
    props = obj.properties
    return SummaryRecord(
        id=obj.uuid,
        original_id=uuid.UUID(str(props["original_id"])),
        source=str(props["source"]),
        title=str(props.get("title") or ""),
        headers=[str(h) for h in props.get("headers") or []],
        summary=str(props.get("summary") or ""),
        content_hash=str(props.get("content_hash") or ""),
        model=str(props.get("model") or ""),
        prompt_version=str(props.get("prompt_version") or ""),
        kind=str(props.get("kind") or "llm"),
        reason=str(props.get("reason") or ""),
        identifiers=[str(i) for i in props.get("identifiers") or []],
        similarity=_float(props.get("similarity")),
        vector=vector(obj.vector, "default"),
        version=str(props.get("version") or ""),
        version_group=str(props.get("version_group") or ""),
        indexed_at=_date(props.get("indexed_at")),
    )


def shown_summary(properties: Mapping[str, Any]) -> ShownSummary:
    """A stored summary as it is shown with its chunk (`summary`, `kind`, `model`)."""
    return ShownSummary.of(
        str(properties.get("summary") or ""),
        stored_kind=str(properties.get("kind") or "llm"),
        model=str(properties.get("model") or ""),
    )


def source_record(obj: Any) -> SourceRecord:
    """The record of a source's last ingest."""
    props = obj.properties
    return SourceRecord(
        source=str(props["source"]),
        title=str(props.get("title") or ""),
        content_hash=str(props["content_hash"]),
        settings_key=str(props.get("settings_key") or ""),
        status=str(props["status"]),
        chunks=_int(props.get("chunks")),
        pending=_int(props.get("pending")),
        ingested_at=props["ingested_at"],
        version=str(props.get("version") or ""),
        version_group=str(props.get("version_group") or ""),
    )


def source_chunk(obj: Any) -> SourceChunk:
    """A stored original as a reader browses it (`SOURCE_CHUNK_PROPERTIES` returned);
    its summary's kind is None when the index did not keep it on the chunk."""
    shown = attached_summary(obj.properties)
    return SourceChunk(
        id=str(obj.uuid),
        headers=list(obj.properties.get("headers") or []),
        chunk_index=_int(obj.properties.get("chunk_index")),
        content=str(obj.properties.get("content") or ""),
        summary=str(obj.properties.get("summary") or "") or None,
        summary_pending=bool(obj.properties.get("summary_pending")),
        page_start=_optional_int(obj.properties.get("page_start")),
        page_end=_optional_int(obj.properties.get("page_end")),
        anchor=str(obj.properties.get("anchor") or ""),
        summary_kind=shown.kind if shown else None,
        summary_model=shown.model if shown else None,
        version=str(obj.properties.get("version") or ""),
        indexed_at=_date(obj.properties.get("indexed_at")),
    )


def attached_summary(properties: Mapping[str, Any]) -> ShownSummary | None:
    """The summary attached to an original, from the original's properties: None when it
    has none (pending or filtered out), and when its index was built before chunks kept
    their summary's kind (`summaries_of` reads it from the summary then)."""
    text = str(properties.get("summary") or "")
    kind = str(properties.get("summary_kind") or "")
    if not text or not kind:
        return None
    return ShownSummary.of(text, stored_kind=kind, model=str(properties.get("summary_model") or ""))


def match(obj: Any) -> Match:
    """An object a hybrid query returned, with its score and whichever vectors came back."""
    return Match(
        id=str(obj.uuid),
        properties=dict(obj.properties),
        score=float(obj.metadata.score or 0.0),
        vectors={name: vector(obj.vector, name) for name in obj.vector or {}},
    )


def vector(vectors: Any, name: str) -> list[float]:
    """One named single vector of an object (empty when absent)."""
    value = (vectors or {}).get(name) or []
    return [float(x) for x in value]


def _date(value: object) -> dt.datetime | None:
    return value if isinstance(value, dt.datetime) else None


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def _optional_int(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _float(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0
