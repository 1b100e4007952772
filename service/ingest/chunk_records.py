"""A chunk's stored form: its id, identity hash, place and record, and the settings key.

Pure functions from the splitter's chunks (`Document`s with header metadata) to what
`service.ingest.pipeline.Ingestor` writes to the index; they read and write nothing.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable

from langchain_core.documents import Document

from loaders.documents import CONTENT_TYPE, SOURCE, TITLE
from service.index.identifiers import extract_identifiers
from service.index.identity import chunk_id, content_hash
from service.index.records import ChunkPlace, OriginalRecord, header_path, now
from service.index.versions import VERSION, VERSION_GROUP
from splitters.base.metadata import ANCHOR, CHUNK_INDEX, HEADERS, PAGE_END, PAGE_START

__all__ = [
    "chunk_hash",
    "chunk_headers",
    "chunk_place",
    "original_record",
    "settings_key",
    "unique_chunks",
]


def settings_key(
    *, max_tokens: int, chat_model: str, prompt_version: str, embedding_model: str
) -> str:
    """What besides a source's content decides its chunks, summaries and vectors."""
    parts = (str(max_tokens), chat_model, prompt_version, embedding_model)
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def chunk_headers(chunk: Document) -> list[str]:
    """The chunk's header path (H1…H6), outermost first."""
    return list(chunk.metadata.get(HEADERS) or [])


def chunk_hash(chunk: Document) -> str:
    """The chunk's identity: its header path and its text."""
    return content_hash(header_path(chunk_headers(chunk)) + "\n\n" + chunk.page_content)


def unique_chunks(source: str, chunks: Iterable[Document]) -> dict[uuid.UUID, Document]:
    """Chunks by id, in order; an exact repeat (same headers and text) is kept once."""
    unique: dict[uuid.UUID, Document] = {}
    for chunk in chunks:
        unique.setdefault(chunk_id(source, chunk_hash(chunk)), chunk)
    return unique


def chunk_place(chunk: Document) -> ChunkPlace:
    """The position and section anchor of a chunk in its source."""
    return ChunkPlace(int(chunk.metadata[CHUNK_INDEX]), str(chunk.metadata.get(ANCHOR) or ""))


def original_record(cid: uuid.UUID, chunk: Document, vector: list[float]) -> OriginalRecord:
    """The stored record of `chunk` (its content vector: `vector`, empty if not known)."""
    meta = chunk.metadata
    return OriginalRecord(
        id=cid,
        source=str(meta[SOURCE]),
        title=str(meta.get(TITLE) or ""),
        headers=chunk_headers(chunk),
        chunk_index=int(meta[CHUNK_INDEX]),
        content=chunk.page_content,
        content_hash=chunk_hash(chunk),
        content_type=str(meta.get(CONTENT_TYPE) or ""),
        identifiers=extract_identifiers(chunk.page_content),
        page_start=meta.get(PAGE_START),
        page_end=meta.get(PAGE_END),
        anchor=str(meta.get(ANCHOR) or ""),
        vector=vector,
        version=str(meta.get(VERSION) or ""),
        version_group=str(meta.get(VERSION_GROUP) or ""),
        indexed_at=now(),
    )
