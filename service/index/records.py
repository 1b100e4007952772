"""What Synopsis stores, as plain records: chunks, summaries, sources, and their keys.

The store's row mappers (`service.index.rows`) turn these into Weaviate objects and back; the
ingest pipeline and the query side build and read them. Property and vector names are
constants here so that no module spells them twice.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "CONTENT_VECTOR",
    "CONTEXT_VECTOR",
    "SUMMARY_VECTOR",
    "OriginalRecord",
    "ShownSummary",
    "SourceChunk",
    "SourceRecord",
    "StoredOriginal",
    "SummaryAttachment",
    "SummaryKind",
    "SummaryRecord",
    "SummaryVector",
    "context_text",
    "header_path",
    "indexed_text",
    "now",
]

#: The named vectors of an original: its own text; its summary; and its summary with
#: the chunk (the chunk in its summary's context, as contextual retrieval embeds it).
#: Until a summary is attached, the last two are the chunk's own vector, so that a chunk
#: without one scores as itself.
CONTENT_VECTOR = "content"
SUMMARY_VECTOR = "summary"
CONTEXT_VECTOR = "context"

#: The vector of its summary that `joint` search reads for a chunk.
SummaryVector = Literal["context", "summary"]

#: What a summary is, as every edge shows it: written by a chat model ("generated"; the
#: store says "llm"), or quoted from its chunk by the guard's fallback ("extractive").
SummaryKind = Literal["generated", "extractive"]


@dataclass(frozen=True, kw_only=True)
class ShownSummary:
    """A summary as it is shown with its chunk: its text, its kind, and the chat model
    that wrote it (None for an extractive one)."""

    text: str
    kind: SummaryKind
    model: str | None

    @classmethod
    def of(cls, text: str, *, stored_kind: str, model: str) -> ShownSummary:
        """From what the store keeps: kind "llm" or "extractive" and the model's name
        (an extractive summary records the configured model too; it did not write it)."""
        if stored_kind == "extractive":
            return cls(text=text, kind="extractive", model=None)
        return cls(text=text, kind="generated", model=model or None)


@dataclass(frozen=True, kw_only=True)
class OriginalRecord:
    """One chunk as stored in OriginalDocuments."""

    id: uuid.UUID
    source: str
    title: str
    headers: list[str]
    chunk_index: int
    content: str
    content_hash: str
    content_type: str = ""
    identifiers: list[str] = field(default_factory=list)
    page_start: int | None = None
    page_end: int | None = None
    anchor: str = ""  # the section's id in its page (`#anchor`), empty when it has none
    vector: list[float] = field(default_factory=list)
    summary: str = ""  # the attached summary's text (BM25), empty while pending or filtered
    # Its source's version label and group (`service.index.versions`; empty: none), and
    # when the chunk was written (None: written before chunks kept it).
    version: str = ""
    version_group: str = ""
    indexed_at: dt.datetime | None = None


@dataclass(frozen=True)
class ChunkPlace:
    """Where an unchanged chunk now is in its source: its position and section anchor."""

    chunk_index: int
    anchor: str = ""


@dataclass(frozen=True, kw_only=True)
class SummaryRecord:
    """One summary as stored in SummarizedDocuments."""

    id: uuid.UUID
    original_id: uuid.UUID
    source: str
    title: str
    headers: list[str]
    summary: str
    content_hash: str  # of the chunk it summarizes: the summary cache key
    model: str
    prompt_version: str
    kind: str = "llm"  # "llm" or "extractive"
    # What the summary guard flagged in the first attempt (comma-separated reasons): empty
    # when it passed at once; with kind "llm" the stricter retry passed, with "extractive"
    # it did not and the fallback was stored.
    reason: str = ""
    identifiers: list[str] = field(default_factory=list)
    vector: list[float] = field(default_factory=list)
    # Cosine similarity of the summary's vector to its chunk's: how well it matches its
    # chunk. Below the settings' threshold it is kept here but not attached to the chunk.
    similarity: float = 0.0
    # Its chunk's version label and group, and when the summary was written.
    version: str = ""
    version_group: str = ""
    indexed_at: dt.datetime | None = None


@dataclass(frozen=True, kw_only=True)
class StoredOriginal:
    """What an ingest needs to know of a chunk already in the store."""

    chunk_index: int
    summary_id: str  # the summary that was considered for it; "" while pending
    anchor: str = ""
    version: str = ""
    version_group: str = ""

    @property
    def place(self) -> ChunkPlace:
        """Its stored position and section anchor."""
        return ChunkPlace(self.chunk_index, self.anchor)


@dataclass(frozen=True, kw_only=True)
class SummaryAttachment:
    """A summary given to its original as context: BM25 text, the `summary` vector and
    the `context` vector (summary and chunk embedded together).

    `text` is empty and both vectors are the chunk's own when the summary was filtered out.
    `kind` and `model` are the summary's (shown with the chunk either way).
    """

    original_id: uuid.UUID
    summary_id: uuid.UUID
    text: str
    vector: list[float]
    context_vector: list[float]
    similarity: float
    kind: str = "llm"
    model: str = ""


@dataclass(frozen=True, kw_only=True)
class SourceRecord:
    """The last ingest of one source."""

    source: str
    title: str
    content_hash: str
    settings_key: str  # what else decides the chunks and summaries (size, models, prompt)
    status: str  # "ingesting" until every chunk and summary is written, then "complete"
    chunks: int
    ingested_at: dt.datetime
    pending: int = 0  # chunks whose summary is not attached yet
    version: str = ""  # the version label its chunks carry (empty: none)
    version_group: str = ""  # and their group


@dataclass(frozen=True, kw_only=True)
class SourceChunk:
    """One stored chunk of a source as a reader browses it, with its attached summary."""

    id: str
    headers: list[str]
    chunk_index: int
    content: str
    summary: str | None  # None while pending or when filtered out
    summary_pending: bool
    page_start: int | None = None
    page_end: int | None = None
    anchor: str = ""
    # What the summary is: "generated" (by `summary_model`) or "extractive"; None with it.
    summary_kind: SummaryKind | None = None
    summary_model: str | None = None
    version: str = ""
    indexed_at: dt.datetime | None = None  # None: written before chunks kept it


def header_path(headers: Sequence[str]) -> str:
    """The header hierarchy as one string, H1 first: `A > B > C`."""
    return " > ".join(headers)


def indexed_text(headers: Sequence[str], text: str) -> str:
    """What is embedded for a chunk or a summary: its header path, then the text."""
    path = header_path(headers)
    return f"{path}\n\n{text}" if path else text


def context_text(headers: Sequence[str], summary: str, content: str) -> str:
    """What is embedded as a chunk's `context` vector: its header path, its summary, then
    the chunk (a text longer than the model's context keeps its beginning)."""
    return indexed_text(headers, f"{summary}\n\n{content}" if summary else content)


def now() -> dt.datetime:
    """The current time, timezone-aware (Weaviate dates need a zone)."""
    return dt.datetime.now(dt.UTC)
