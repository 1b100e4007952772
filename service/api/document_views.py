"""The response forms of `/documents`: an indexed source, its chunks, a page of them, and
a whole document's summary."""

from __future__ import annotations

import datetime as dt
from typing import Literal

import msgspec

from service.api.schemas import SummaryKindField, SummaryModelField
from service.index.records import SourceChunk, SourceRecord
from service.query.document_summary import DocumentSummary

__all__ = ["ChunkView", "DocumentDetail", "DocumentItem", "DocumentSummaryView"]


class DocumentItem(msgspec.Struct, kw_only=True):
    """One indexed source: chunk count, status, pending summaries, and its last job."""

    source: str
    title: str
    chunks: int
    status: str
    pending: int
    content_hash: str
    ingested_at: dt.datetime
    # Its version label (null: none), and when its chunks were last written: the same
    # moment as `ingested_at`, under the name every hit and chunk uses.
    version: str | None = None
    indexed_at: dt.datetime
    last_job: str | None = None

    @classmethod
    def from_record(cls, record: SourceRecord, last_job: str | None) -> DocumentItem:
        """The response form of a source record."""
        return cls(
            source=record.source,
            title=record.title,
            chunks=record.chunks,
            status=record.status,
            pending=record.pending,
            content_hash=record.content_hash,
            ingested_at=record.ingested_at,
            version=record.version or None,
            indexed_at=record.ingested_at,
            last_job=last_job,
        )


class ChunkView(msgspec.Struct, kw_only=True):
    """One chunk of a source with its summary (null while pending or filtered out)."""

    id: str
    chunk_index: int
    headers: list[str]
    content: str
    summary: str | None
    summary_kind: SummaryKindField | None = None
    summary_model: SummaryModelField | None = None
    summary_pending: bool
    page_start: int | None = None
    page_end: int | None = None
    anchor: str = ""
    version: str | None = None  # its source's version label (null: none)
    indexed_at: dt.datetime | None = None  # when it was written (null: not kept then)

    @classmethod
    def from_chunk(cls, chunk: SourceChunk) -> ChunkView:
        """The response form of a stored chunk."""
        return cls(
            id=chunk.id,
            chunk_index=chunk.chunk_index,
            headers=list(chunk.headers),
            content=chunk.content,
            summary=chunk.summary,
            summary_pending=chunk.summary_pending,
            summary_kind=chunk.summary_kind,
            summary_model=chunk.summary_model,
            page_start=chunk.page_start,
            page_end=chunk.page_end,
            anchor=chunk.anchor,
            version=chunk.version or None,
            indexed_at=chunk.indexed_at,
        )


class DocumentDetail(msgspec.Struct, kw_only=True):
    """A source and one page of its chunks, in document order."""

    document: DocumentItem
    chunks: list[ChunkView]
    total: int
    limit: int
    offset: int


class DocumentSummaryView(msgspec.Struct, kw_only=True):
    """A whole document's summary (`GET /documents/{source}/summary`): `kind` generated
    (the model's, which passed the grounding check) or extractive (the outline quoted)."""

    source: str
    title: str
    summary: str
    kind: Literal["generated", "extractive"]
    sections: int
    llm_calls: int
    cached: bool
    model: str
    style: Literal["brief", "detailed"]
    support: float | None = None

    @classmethod
    def from_summary(cls, summary: DocumentSummary) -> DocumentSummaryView:
        """The response form of a document summary."""
        return cls(
            source=summary.source,
            title=summary.title,
            summary=summary.text,
            kind=summary.kind,
            sections=summary.sections,
            llm_calls=summary.llm_calls,
            cached=summary.cached,
            model=summary.model,
            style=summary.style,
            support=summary.support,
        )
