"""Regenerate stored summaries in place, without re-ingesting their sources.

`synopsis resummarize --kind extractive` rewrites the fallbacks once a better model is
configured; `--kind invented` rewrites the generated summaries that the faithfulness
check flags now (an index summarized before the check existed); `--model M` uses another
chat model. The originals are read from Weaviate,
summarized again (under the guard, if the summarizer has one) and embedded; each new
summary gets its deterministic id — uuid5(chunk id, model, prompt version) — and is
written and attached to its original (under the same similarity filter as ingest)
before the summary it replaces is deleted, so every original keeps exactly one summary,
also when the run is interrupted between batches.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from service.index.identity import summary_id
from service.index.records import OriginalRecord, SummaryRecord, header_path, indexed_text
from service.index.store import Store
from service.ingest.attach import attachments, summary_record
from service.ingest.quality import QualityThresholds, detect_invented
from service.ingest.summarize import Summarizer, SummaryRequest, clean_for_prompt
from service.models.embed import Embedder

__all__ = ["ResummarizeReport", "resummarize"]


@dataclass(kw_only=True)
class ResummarizeReport:
    """What a resummarize run did."""

    selected: int = 0  # stored summaries that matched the selection
    written: int = 0  # new summaries written (an unchanged id is overwritten in place)
    deleted: int = 0  # replaced summaries whose id changed (other model or prompt version)
    orphans: int = 0  # selected summaries whose original is missing: left for ingest to repair
    llm_calls: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)  # kinds of the new summaries
    seconds: float = 0.0

    def summary_line(self) -> str:
        """One line for the end of `synopsis resummarize`."""
        kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(self.by_kind.items()))
        return (
            f"{self.selected} summaries selected: {self.written} written ({kinds or 'none'}), "
            f"{self.deleted} replaced ones deleted, {self.orphans} without original skipped; "
            f"{self.llm_calls} LLM calls; {self.seconds:.1f} s"
        )


def resummarize(
    store: Store,
    summarizer: Summarizer,
    embedder: Embedder,
    *,
    kind: str | None = None,
    min_similarity: float = 0.0,
    batch_size: int = 16,
    on_progress: Callable[[int, int], None] | None = None,
) -> ResummarizeReport:
    """Regenerate the stored summaries of `kind` (all when None) with `summarizer`.

    `kind` "invented" selects the generated ("llm") summaries that the faithfulness check
    flags, with the summarizer's guard bounds (the defaults without a guard)."""
    started = time.perf_counter()
    report = ResummarizeReport()
    selected = store.list_summaries(kind="llm" if kind == "invented" else kind)
    originals = store.originals_by_id(
        (record.original_id for record in selected), with_vectors=True
    )
    if kind == "invented":
        guard = summarizer.guard or QualityThresholds()
        selected = [
            record
            for record in selected
            if record.original_id in originals
            and _invented(record, originals[record.original_id], guard)
        ]
    report.selected = len(selected)
    old_by_original: dict[uuid.UUID, list[SummaryRecord]] = {}
    for record in selected:
        if record.original_id in originals:
            old_by_original.setdefault(record.original_id, []).append(record)
        else:
            report.orphans += 1
    todo = [originals[original_id] for original_id in old_by_original]
    for start in range(0, len(todo), batch_size):
        batch = todo[start : start + batch_size]
        calls_before = summarizer.calls
        results = summarizer.summarize_many([_request(original) for original in batch])
        report.llm_calls += summarizer.calls - calls_before
        vectors = embedder.embed_documents(
            [
                indexed_text(original.headers, result.text)
                for original, result in zip(batch, results, strict=True)
            ]
        )
        records = [
            summary_record(
                original,
                result,
                summary_id=summary_id(
                    original.id, summarizer.model_name, summarizer.prompt_version
                ),
                vector=vector,
                content_vector=original.vector,
                model=summarizer.model_name,
                prompt_version=summarizer.prompt_version,
            )
            for original, result, vector in zip(batch, results, vectors, strict=True)
        ]
        report.written += store.write_summaries(records)
        store.attach_summaries(
            attachments(
                records,
                {original.id: original for original in batch},
                embedder=embedder,
                min_similarity=min_similarity,
            )
        )
        new_ids = {record.id for record in records}
        replaced = [
            old.id
            for original in batch
            for old in old_by_original[original.id]
            if old.id not in new_ids
        ]
        report.deleted += store.delete_summaries(replaced)
        for record in records:
            report.by_kind[record.kind] = report.by_kind.get(record.kind, 0) + 1
        if on_progress is not None:
            on_progress(start + len(batch), len(todo))
    report.seconds = time.perf_counter() - started
    return report


def _invented(summary: SummaryRecord, original: OriginalRecord, guard: QualityThresholds) -> bool:
    view = clean_for_prompt(original.content)
    return (
        detect_invented(summary.summary, view, original.headers, guard, title=original.title)
        is not None
    )


def _request(original: OriginalRecord) -> SummaryRequest:
    return SummaryRequest(
        headers=original.headers,
        content=original.content,
        label=f"{original.source} § {header_path(original.headers) or '(top)'} "
        f"(chunk {original.chunk_index})",
        title=original.title,
    )
