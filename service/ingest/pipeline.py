"""Ingestion: sources → chunks → summaries → vectors → Weaviate, idempotently.

For each source document (streamed, one at a time):

1. Unchanged (same content hash, same chunking/model settings, last ingest complete):
   nothing is read from the model and nothing is written.
2. Otherwise the document is split; chunk ids are deterministic, so the chunks already
   stored are known. Only missing summaries are written — from the summary cache
   (same chunk text, model and prompt version, any source) or by the chat model.
3. Writes go originals first, then summaries (a summary never points at a missing
   original), then vanished summaries and originals are deleted. The source record is
   marked `ingesting` before and `complete` after, so an interrupted ingest is
   repaired by the next one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from langchain_core.documents import Document

from loaders import LoadOptions, load
from service.errors import LoaderError
from service.index.identifiers import extract_identifiers
from service.index.identity import chunk_id, content_hash, summary_id
from service.index.store import OriginalRecord, SourceRecord, Store, SummaryRecord, header_path, now
from service.ingest.summarize import Summarizer, SummaryRequest, SummaryResult
from service.models.embed import Embedder
from splitters import chunk_documents

__all__ = ["IngestEvent", "IngestReport", "Ingestor", "indexed_text"]

STAGES = ("load", "split", "summarize", "embed", "write")


@dataclass(frozen=True, kw_only=True)
class IngestEvent:
    """Progress of an ingest: a stage of one source, with counts where they apply."""

    stage: str  # one of STAGES, or "source" (a source finished) / "error"
    source: str
    message: str = ""
    done: int = 0
    total: int = 0


@dataclass(kw_only=True)
class IngestReport:
    """What an ingest did."""

    sources: int = 0
    unchanged_sources: int = 0
    new_chunks: int = 0
    unchanged_chunks: int = 0
    deleted_chunks: int = 0
    llm_calls: int = 0
    cached_summaries: int = 0
    retried_summaries: int = 0  # flagged by the guard, the stricter retry passed
    extractive_summaries: int = 0  # flagged twice: the extractive fallback was stored
    objects_written: int = 0
    failed: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    wall_seconds: float = 0.0

    def summary_line(self) -> str:
        """One line for the end of `synopsis ingest`."""
        return (
            f"{self.sources} sources ({self.unchanged_sources} unchanged): "
            f"{self.new_chunks} new, {self.unchanged_chunks} unchanged, "
            f"{self.deleted_chunks} deleted chunks; {self.llm_calls} LLM calls, "
            f"{self.cached_summaries} cached summaries"
            + (
                f" ({self.retried_summaries} retried, {self.extractive_summaries} extractive)"
                if self.retried_summaries or self.extractive_summaries
                else ""
            )
            + f"; {self.wall_seconds:.1f} s"
            + (f"; {len(self.failed)} sources failed" if self.failed else "")
        )


def indexed_text(headers: Sequence[str], text: str) -> str:
    """What is embedded for a chunk or a summary: its header path, then the text."""
    path = header_path(headers)
    return f"{path}\n\n{text}" if path else text


class Ingestor:
    """Runs ingests against one store with one summarizer and one embedder."""

    def __init__(
        self,
        *,
        store: Store,
        summarizer: Summarizer,
        embedder: Embedder,
        max_tokens: int = 500,
        on_event: Callable[[IngestEvent], None] | None = None,
    ) -> None:
        self.store = store
        self.summarizer = summarizer
        self.embedder = embedder
        self.max_tokens = max_tokens
        self._emit = on_event or (lambda _event: None)
        self.settings_key = hashlib.sha256(
            "|".join(
                (
                    str(max_tokens),
                    summarizer.model_name,
                    summarizer.prompt_version,
                    embedder.model,
                )
            ).encode()
        ).hexdigest()[:16]

    def ingest(self, sources: Sequence[str], *, options: LoadOptions | None = None) -> IngestReport:
        """Load `sources` (files, directories, URLs, crawls) and ingest every document."""
        report = IngestReport()

        def failed(error: LoaderError) -> None:
            report.failed.append(str(error))
            self._emit(IngestEvent(stage="error", source=error.source, message=str(error)))

        documents = load(sources, options=options, on_error=failed)
        return self.ingest_documents(documents, report=report)

    def ingest_documents(
        self, documents: Iterable[Document], *, report: IngestReport | None = None
    ) -> IngestReport:
        """Ingest already-loaded Markdown documents."""
        report = report or IngestReport()
        started = time.perf_counter()
        self.store.ensure_schema(
            embedding_model=self.embedder.model, dimension=self.embedder.dimension()
        )
        for document in _timed(documents, report.seconds, "load"):
            self._ingest_one(document, report)
        report.wall_seconds = time.perf_counter() - started
        return report

    def _ingest_one(self, document: Document, report: IngestReport) -> None:
        source = str(document.metadata["source"])
        report.sources += 1
        doc_hash = str(document.metadata.get("content_hash") or content_hash(document.page_content))
        previous = self.store.source_record(source)
        if (
            previous is not None
            and previous.status == "complete"
            and previous.content_hash == doc_hash
            and previous.settings_key == self.settings_key
        ):
            report.unchanged_sources += 1
            report.unchanged_chunks += previous.chunks
            self._emit(IngestEvent(stage="source", source=source, message="unchanged"))
            return

        clock = time.perf_counter()
        chunks = _unique_chunks(source, chunk_documents([document], max_tokens=self.max_tokens))
        report.seconds["split"] += time.perf_counter() - clock
        self._emit(IngestEvent(stage="split", source=source, total=len(chunks)))

        clock = time.perf_counter()
        stored_originals = self.store.existing_originals(source)
        stored_summaries = self.store.existing_summaries(source)
        report.seconds["write"] += time.perf_counter() - clock

        model, version = self.summarizer.model_name, self.summarizer.prompt_version
        wanted_summaries = {summary_id(cid, model, version): cid for cid in chunks}
        new_originals = [cid for cid in chunks if cid not in stored_originals]
        moved = {
            cid: int(chunk.metadata["chunk_index"])
            for cid, chunk in chunks.items()
            if cid in stored_originals and stored_originals[cid] != chunk.metadata["chunk_index"]
        }
        missing = [sid for sid in wanted_summaries if sid not in stored_summaries]
        report.new_chunks += len(new_originals)
        report.unchanged_chunks += len(chunks) - len(new_originals)

        results = self._summaries_for(
            source, [chunks[wanted_summaries[sid]] for sid in missing], report
        )

        clock = time.perf_counter()
        original_vectors = self.embedder.embed_documents(
            [indexed_text(_headers(chunks[cid]), chunks[cid].page_content) for cid in new_originals]
        )
        summary_vectors = self.embedder.embed_documents(
            [
                indexed_text(_headers(chunks[wanted_summaries[sid]]), result.text)
                for sid, result in zip(missing, results, strict=True)
            ]
        )
        report.seconds["embed"] += time.perf_counter() - clock
        self._emit(
            IngestEvent(stage="embed", source=source, done=len(new_originals) + len(missing))
        )

        clock = time.perf_counter()
        title = str(document.metadata.get("title") or "")
        record = SourceRecord(
            source=source,
            title=title,
            content_hash=doc_hash,
            settings_key=self.settings_key,
            status="ingesting",
            chunks=len(chunks),
            ingested_at=now(),
        )
        self.store.put_source_record(record)
        written = self.store.write_originals(
            [
                _original(cid, chunks[cid], vector)
                for cid, vector in zip(new_originals, original_vectors, strict=True)
            ]
        )
        self.store.update_chunk_indexes(moved)
        written += self.store.write_summaries(
            [
                _summary(
                    sid=sid,
                    cid=wanted_summaries[sid],
                    chunk=chunks[wanted_summaries[sid]],
                    result=result,
                    vector=vector,
                    model=model,
                    version=version,
                )
                for sid, result, vector in zip(missing, results, summary_vectors, strict=True)
            ]
        )
        stale_summaries = [sid for sid in stored_summaries if sid not in wanted_summaries]
        vanished = [cid for cid in stored_originals if cid not in chunks]
        self.store.delete_summaries(stale_summaries)
        self.store.delete_originals(vanished)
        report.deleted_chunks += len(vanished)
        record = dataclasses.replace(record, status="complete", ingested_at=now())
        self.store.put_source_record(record)
        report.objects_written += written
        report.seconds["write"] += time.perf_counter() - clock
        self._emit(
            IngestEvent(
                stage="source",
                source=source,
                message=f"{len(new_originals)} new, {len(vanished)} deleted chunks",
                done=len(chunks),
                total=len(chunks),
            )
        )

    def _summaries_for(
        self, source: str, chunks: list[Document], report: IngestReport
    ) -> list[SummaryResult]:
        """Summaries for `chunks`: from the cache where possible, else from the model."""
        clock = time.perf_counter()
        hashes = [_chunk_hash(chunk) for chunk in chunks]
        cached = self.store.cached_summaries(
            hashes, model=self.summarizer.model_name, prompt_version=self.summarizer.prompt_version
        )
        texts = [
            SummaryResult(text=cached[h].summary, kind=cached[h].kind, reason=cached[h].reason)
            if h in cached
            else SummaryResult(text="")
            for h in hashes
        ]
        todo = [index for index, h in enumerate(hashes) if h not in cached]
        report.cached_summaries += len(chunks) - len(todo)
        requests = [
            SummaryRequest(
                headers=_headers(chunks[index]),
                content=chunks[index].page_content,
                label=f"{source} § {header_path(_headers(chunks[index])) or '(top)'} "
                f"(chunk {chunks[index].metadata['chunk_index']})",
            )
            for index in todo
        ]
        done = 0

        def on_done(_index: int, _result: SummaryResult) -> None:
            nonlocal done
            done += 1
            self._emit(IngestEvent(stage="summarize", source=source, done=done, total=len(todo)))

        if requests:
            calls_before = self.summarizer.calls
            results = self.summarizer.summarize_many(requests, on_done=on_done)
            report.llm_calls += self.summarizer.calls - calls_before
            for index, result in zip(todo, results, strict=True):
                texts[index] = result
                report.retried_summaries += result.kind == "llm" and bool(result.reason)
                report.extractive_summaries += result.kind == "extractive"
        report.seconds["summarize"] += time.perf_counter() - clock
        return texts


def _timed(
    documents: Iterable[Document], seconds: dict[str, float], stage: str
) -> Iterator[Document]:
    iterator = iter(documents)
    while True:
        clock = time.perf_counter()
        try:
            document = next(iterator)
        except StopIteration:
            seconds[stage] += time.perf_counter() - clock
            return
        seconds[stage] += time.perf_counter() - clock
        yield document


def _headers(chunk: Document) -> list[str]:
    return list(chunk.metadata.get("headers") or [])


def _chunk_hash(chunk: Document) -> str:
    """The chunk's identity: its header path and its text."""
    return content_hash(header_path(_headers(chunk)) + "\n\n" + chunk.page_content)


def _unique_chunks(source: str, chunks: Iterable[Document]) -> dict[uuid.UUID, Document]:
    """Chunks by id, in order; an exact repeat (same headers and text) is kept once."""
    unique: dict[uuid.UUID, Document] = {}
    for chunk in chunks:
        unique.setdefault(chunk_id(source, _chunk_hash(chunk)), chunk)
    return unique


def _original(cid: uuid.UUID, chunk: Document, vector: list[float]) -> OriginalRecord:
    meta = chunk.metadata
    return OriginalRecord(
        id=cid,
        source=str(meta["source"]),
        title=str(meta.get("title") or ""),
        headers=_headers(chunk),
        chunk_index=int(meta["chunk_index"]),
        content=chunk.page_content,
        content_hash=_chunk_hash(chunk),
        content_type=str(meta.get("content_type") or ""),
        identifiers=extract_identifiers(chunk.page_content),
        page_start=meta.get("page_start"),
        page_end=meta.get("page_end"),
        vector=vector,
    )


def _summary(
    *,
    sid: uuid.UUID,
    cid: uuid.UUID,
    chunk: Document,
    result: SummaryResult,
    vector: list[float],
    model: str,
    version: str,
) -> SummaryRecord:
    return SummaryRecord(
        id=sid,
        original_id=cid,
        source=str(chunk.metadata["source"]),
        title=str(chunk.metadata.get("title") or ""),
        headers=_headers(chunk),
        summary=result.text,
        content_hash=_chunk_hash(chunk),
        model=model,
        prompt_version=version,
        kind=result.kind,
        reason=result.reason,
        identifiers=extract_identifiers(chunk.page_content),
        vector=vector,
    )
