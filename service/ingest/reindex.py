"""Re-index into new collections with another embedding model, without any LLM call.

A collection refuses an embedding model it was not built with. Ingesting again into new
collections would summarize every chunk again (the summary cache lives in the old
ones); `synopsis reindex --from-prefix OLD` instead copies the chunks and their
summaries from the collections named with prefix OLD into the configured ones,
embedding both with the configured model, scoring and attaching each summary as an
ingest does. Ids stay the same (they do not depend on the embedding model).
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from service.index.records import SummaryRecord, indexed_text, now
from service.index.store import Store
from service.ingest.attach import attachments, cosine_similarity
from service.ingest.chunk_records import settings_key
from service.models.embed import Embedder

__all__ = ["ReindexReport", "reindex"]


@dataclass(kw_only=True)
class ReindexReport:
    """What a reindex did."""

    sources: int = 0
    originals: int = 0
    summaries: int = 0
    filtered: int = 0
    seconds: float = 0.0

    def summary_line(self) -> str:
        """One line for the end of `synopsis reindex`."""
        return (
            f"{self.sources} sources: {self.originals} chunks and {self.summaries} summaries "
            f"re-embedded ({self.filtered} summaries filtered out); 0 LLM calls; "
            f"{self.seconds:.1f} s"
        )


def reindex(
    source: Store,
    target: Store,
    embedder: Embedder,
    *,
    max_tokens: int,
    min_similarity: float,
    on_progress: Callable[[str], None] | None = None,
) -> ReindexReport:
    """Copy every complete source of `source` into `target`, embedded by `embedder`."""
    started = time.perf_counter()
    report = ReindexReport()
    target.ensure_schema(embedding_model=embedder.model, dimension=embedder.dimension())
    summaries: dict[uuid.UUID, list[SummaryRecord]] = {}
    for summary in source.list_summaries():
        summaries.setdefault(summary.original_id, []).append(summary)
    for record in source.list_sources():
        originals = list(source.originals_by_id(source.existing_originals(record.source)).values())
        vectors = embedder.embed_documents([indexed_text(o.headers, o.content) for o in originals])
        copies = [
            dataclasses.replace(original, vector=vector, summary="")
            for original, vector in zip(originals, vectors, strict=True)
        ]
        own = [(copy, s) for copy in copies for s in summaries.get(copy.id, [])]
        summary_vectors = embedder.embed_documents(
            [indexed_text(s.headers, s.summary) for _, s in own]
        )
        new_summaries = [
            dataclasses.replace(
                s, vector=vector, similarity=round(cosine_similarity(vector, copy.vector), 6)
            )
            for (copy, s), vector in zip(own, summary_vectors, strict=True)
        ]
        models = {(s.model, s.prompt_version) for s in new_summaries} or {("", "")}
        chat_model, prompt_version = sorted(models)[0]
        target.put_source_record(dataclasses.replace(record, status="ingesting", ingested_at=now()))
        target.write_originals(copies)
        target.write_summaries(new_summaries)
        target.attach_summaries(
            attachments(
                new_summaries,
                {copy.id: copy for copy in copies},
                embedder=embedder,
                min_similarity=min_similarity,
            )
        )
        target.put_source_record(
            dataclasses.replace(
                record,
                settings_key=settings_key(
                    max_tokens=max_tokens,
                    chat_model=chat_model,
                    prompt_version=prompt_version,
                    embedding_model=embedder.model,
                ),
                status=record.status,
                ingested_at=now(),
            )
        )
        report.sources += 1
        report.originals += len(copies)
        report.summaries += len(new_summaries)
        report.filtered += sum(s.similarity < min_similarity for s in new_summaries)
        if on_progress is not None:
            on_progress(f"{record.source}: {len(copies)} chunks, {len(new_summaries)} summaries")
    report.seconds = time.perf_counter() - started
    return report
