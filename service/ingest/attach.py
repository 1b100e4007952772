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
from dataclasses import dataclass

from service.index.identifiers import extract_identifiers
from service.index.interfaces import IngestStore
from service.index.records import OriginalRecord, SummaryAttachment, SummaryRecord
from service.ingest.summarize import SummaryResult

__all__ = ["ReattachReport", "attachment", "cosine_similarity", "reattach", "summary_record"]


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


@dataclass(frozen=True, kw_only=True)
class ReattachReport:
    """What `reattach` did."""

    attached: int  # summaries given to their chunk
    filtered: int  # summaries below the threshold: their chunk searched by itself
    orphans: int  # summaries whose original is gone (left for the next ingest)

    def summary_line(self) -> str:
        """One line for the end of `synopsis reattach`."""
        return (
            f"{self.attached} summaries attached, {self.filtered} filtered out, "
            f"{self.orphans} without original"
        )


def reattach(store: IngestStore, *, min_similarity: float, batch_size: int = 200) -> ReattachReport:
    """Apply `min_similarity` to every stored summary again, without any model call: each
    is attached to its chunk, or filtered out (its scores are stored with it)."""
    summaries = store.list_summaries(with_vectors=True)
    attached = filtered = orphans = 0
    for start in range(0, len(summaries), batch_size):
        batch = summaries[start : start + batch_size]
        originals = store.originals_by_id((s.original_id for s in batch), with_vectors=True)
        items = []
        for summary in batch:
            original = originals.get(summary.original_id)
            if original is None:
                orphans += 1
                continue
            item = attachment(
                summary, content_vector=original.vector, min_similarity=min_similarity
            )
            attached += bool(item.text)
            filtered += not item.text
            items.append(item)
        store.attach_summaries(items)
    return ReattachReport(attached=attached, filtered=filtered, orphans=orphans)
