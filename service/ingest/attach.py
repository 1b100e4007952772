"""Summaries as context of their chunks: the record, its score against the chunk, the filter.

A summary is scored against its own chunk (cosine similarity of their embeddings, both
with the header path). One that scores below the threshold says something else than
its chunk — with a tiny model, that happens — so it is kept in SummarizedDocuments
(with its score, for inspection) but not attached: its chunk is then searched by its
own text and vector only. The idea is doc2query--'s: filter expansions that do not match
their document.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence

from service.index.identifiers import extract_identifiers
from service.index.records import OriginalRecord, SummaryAttachment, SummaryRecord
from service.ingest.summarize import SummaryResult

__all__ = ["attachment", "cosine_similarity", "summary_record"]


def cosine_similarity(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0 when either is empty or zero)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norms if norms else 0.0


def summary_record(
    original: OriginalRecord,
    result: SummaryResult,
    *,
    summary_id: uuid.UUID,
    vector: list[float],
    content_vector: Sequence[float],
    model: str,
    prompt_version: str,
) -> SummaryRecord:
    """The SummarizedDocuments record of `result` for `original`, scored against it."""
    return SummaryRecord(
        id=summary_id,
        original_id=original.id,
        source=original.source,
        title=original.title,
        headers=original.headers,
        summary=result.text,
        content_hash=original.content_hash,
        model=model,
        prompt_version=prompt_version,
        kind=result.kind,
        reason=result.reason,
        identifiers=extract_identifiers(original.content),
        vector=vector,
        similarity=round(cosine_similarity(vector, content_vector), 6),
    )


def attachment(
    summary: SummaryRecord, *, content_vector: list[float], min_similarity: float
) -> SummaryAttachment:
    """What `summary` gives its chunk: all of it, or nothing when it scores below
    `min_similarity` (then the chunk's summary vector is its own content vector)."""
    kept = summary.similarity >= min_similarity
    return SummaryAttachment(
        original_id=summary.original_id,
        summary_id=summary.id,
        text=summary.summary if kept else "",
        vector=summary.vector if kept else content_vector,
        similarity=summary.similarity,
    )
