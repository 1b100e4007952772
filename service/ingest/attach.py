"""Summaries as context of their chunks: the record, its score against the chunk, the filter.

A summary is scored against its own chunk (cosine similarity of their embeddings, both
with the header path). One that scores below the threshold says something else than
its chunk — with a tiny model, that happens — so it is kept in SummarizedDocuments
(with its score, for inspection) but not attached: its chunk is then searched by its
own text and vector only. The idea is doc2query--'s: filter expansions that do not match
their document.

An attached summary gives its chunk three things: its words to BM25, its own vector
(`summary`), and the vector of the summary and the chunk embedded together (`context`:
Anthropic's contextual retrieval prepends such a context to the chunk before embedding
it). `joint` search reads the `context` vector by default (docs/eval.md).
"""

from __future__ import annotations

import dataclasses
import math
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from service.index.identifiers import extract_identifiers
from service.index.interfaces import IngestStore
from service.index.records import (
    OriginalRecord,
    SummaryAttachment,
    SummaryRecord,
    context_text,
    indexed_text,
    now,
)
from service.ingest.quality import QualityThresholds, detect_invented, extractive_summary
from service.ingest.summarize import SummaryResult, clean_for_prompt

__all__ = [
    "DocumentEmbedder",
    "ReattachReport",
    "attachment",
    "attachments",
    "cosine_similarity",
    "reattach",
    "replace_invented",
    "summary_record",
]


class DocumentEmbedder(Protocol):
    """What attaching needs of an embedder (`service.models.embed.Embedder`)."""

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...


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
        version=original.version,
        version_group=original.version_group,
        indexed_at=now(),
    )


def kept(summary: SummaryRecord, min_similarity: float) -> bool:
    """True when `summary` scores high enough against its chunk to be attached."""
    return summary.similarity >= min_similarity


def attachment(
    summary: SummaryRecord,
    *,
    content_vector: list[float],
    context_vector: list[float],
    min_similarity: float,
) -> SummaryAttachment:
    """What `summary` gives its chunk: all of it, or nothing when it scores below
    `min_similarity` (then the chunk's summary and context vectors are its own)."""
    attached = kept(summary, min_similarity)
    return SummaryAttachment(
        original_id=summary.original_id,
        summary_id=summary.id,
        text=summary.summary if attached else "",
        vector=summary.vector if attached else content_vector,
        context_vector=context_vector if attached else content_vector,
        similarity=summary.similarity,
        kind=summary.kind,
        model=summary.model,
    )


def attachments(
    summaries: Sequence[SummaryRecord],
    originals: Mapping[uuid.UUID, OriginalRecord],
    *,
    embedder: DocumentEmbedder,
    min_similarity: float,
) -> list[SummaryAttachment]:
    """The attachment of each summary whose original is in `originals` (with its text
    and vector); each kept summary costs one embedding, of it together with its chunk."""
    present = [s for s in summaries if s.original_id in originals]
    embedded = [s for s in present if kept(s, min_similarity)]
    vectors = embedder.embed_documents(
        [context_text(s.headers, s.summary, originals[s.original_id].content) for s in embedded]
    )
    context = {s.id: vector for s, vector in zip(embedded, vectors, strict=True)}
    return [
        attachment(
            s,
            content_vector=originals[s.original_id].vector,
            context_vector=context.get(s.id, []),
            min_similarity=min_similarity,
        )
        for s in present
    ]


@dataclass(frozen=True, kw_only=True)
class ReattachReport:
    """What `reattach` did."""

    attached: int  # summaries given to their chunk
    filtered: int  # summaries below the threshold: their chunk searched by itself
    orphans: int  # summaries whose original is gone (left for the next ingest)
    # Generated summaries the faithfulness check flagged, replaced by extractive ones.
    replaced: int = 0

    def summary_line(self) -> str:
        """One line for the end of `synopsis reattach`."""
        return (
            f"{self.attached} summaries attached, {self.filtered} filtered out, "
            f"{self.orphans} without original, {self.replaced} generated ones replaced by "
            "extractive ones (invented)"
        )


def replace_invented(
    summaries: Sequence[SummaryRecord],
    originals: Mapping[uuid.UUID, OriginalRecord],
    *,
    embedder: DocumentEmbedder,
    guard: QualityThresholds,
) -> list[SummaryRecord]:
    """The generated summaries among `summaries` that the faithfulness check flags
    (`detect_invented`, with `guard`'s bounds), as the extractive summaries that replace
    them: same id, kind "extractive", "invented" added to their reason, embedded and
    scored again (one embedding each; no LLM call)."""
    replaced: list[SummaryRecord] = []
    for summary in summaries:
        original = originals.get(summary.original_id)
        if summary.kind != "llm" or original is None:
            continue
        view = clean_for_prompt(original.content)
        if not detect_invented(
            summary.summary, view, original.headers, guard, title=original.title
        ):
            continue
        reasons = [reason for reason in summary.reason.split(",") if reason]
        replaced.append(
            dataclasses.replace(
                summary,
                summary=extractive_summary(view, original.headers),
                kind="extractive",
                reason=",".join(dict.fromkeys([*reasons, "invented"])),
            )
        )
    vectors = embedder.embed_documents([indexed_text(s.headers, s.summary) for s in replaced])
    return [
        dataclasses.replace(
            summary,
            vector=vector,
            similarity=round(cosine_similarity(vector, originals[summary.original_id].vector), 6),
        )
        for summary, vector in zip(replaced, vectors, strict=True)
    ]


def reattach(
    store: IngestStore,
    *,
    embedder: DocumentEmbedder,
    min_similarity: float,
    batch_size: int = 200,
    guard: QualityThresholds | None = None,
) -> ReattachReport:
    """Apply `min_similarity` to every stored summary again, without any LLM call: each
    is attached to its chunk (its context vector embedded again), or filtered out.

    With a `guard`, the faithfulness check is applied first: a generated summary it flags
    is replaced by its chunk's extractive summary (`replace_invented`)."""
    summaries = store.list_summaries(with_vectors=True)
    attached = filtered = orphans = replaced = 0
    for start in range(0, len(summaries), batch_size):
        batch = summaries[start : start + batch_size]
        originals = store.originals_by_id((s.original_id for s in batch), with_vectors=True)
        if guard is not None:
            fallbacks = replace_invented(batch, originals, embedder=embedder, guard=guard)
            store.write_summaries(fallbacks)
            replaced += len(fallbacks)
            by_id = {summary.id: summary for summary in fallbacks}
            batch = [by_id.get(summary.id, summary) for summary in batch]
        items = attachments(batch, originals, embedder=embedder, min_similarity=min_similarity)
        orphans += len(batch) - len(items)
        attached += sum(bool(item.text) for item in items)
        filtered += sum(not item.text for item in items)
        store.attach_summaries(items)
    return ReattachReport(attached=attached, filtered=filtered, orphans=orphans, replaced=replaced)


def upgrade_context(
    store: IngestStore,
    *,
    embedder: DocumentEmbedder,
    min_similarity: float,
    guard: QualityThresholds | None = None,
) -> ReattachReport | None:
    """Give an index built before `context` vectors existed (layout 2) one for every
    chunk: its content vector, then each attached summary's (as `reattach`, no LLM
    call). None when the index has them already."""
    if store.has_context_vectors():
        return None
    store.add_context_vector()
    report = reattach(store, embedder=embedder, min_similarity=min_similarity, guard=guard)
    store.mark_context_vectors()
    return report
