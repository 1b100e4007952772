"""Ingestion: sources → chunks → vectors → Weaviate, then summaries attached, idempotently.

Two phases, so that a source is searchable (by its chunks) within seconds and the
summaries — one LLM call each, the expensive part — follow:

0. Deletes stopped part-way are finished (`service.ingest.delete`).
1. For each source document (streamed, one at a time): unchanged (same content hash,
   same chunking/model settings, last ingest complete, as many chunks stored as it
   says) → nothing is read from the model
   and nothing is written. Otherwise it is split; chunk ids are deterministic, so the
   chunks already stored are known. New chunks are embedded and written (their
   `summary` vector is their own until a summary is attached); vanished chunks and
   stale summaries are deleted. The source record says `ingesting`, with the number of
   chunks whose summary is pending.
2. For each source with pending chunks: summaries from the cache (same chunk text,
   model and prompt version, any source) or from the chat model, embedded, scored
   against their chunk (`service.ingest.attach`), written to SummarizedDocuments, then
   attached to their chunks — in batches as the model finishes them, so that a stopped
   ingest keeps what it paid for. The record becomes `complete` after the last.

An interrupted ingest leaves records that are not `complete`; the next ingest finds
those sources changed and finishes them (a chunk's attached summary id says whether
it is done).

With `leases`, each source is held from before its record is read until its summaries
are attached (`service.ingest.locks`): a second ingest of the same source waits for the
first rather than deciding what to delete from its half-written state.

What an ingest reports: `service.ingest.report`; how a chunk becomes its stored record:
`service.ingest.chunk_records`.
"""

from __future__ import annotations

import dataclasses
import queue
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from langchain_core.documents import Document

from loaders import LoadOptions, load
from loaders.documents import CONTENT_HASH, SOURCE, TITLE
from service.errors import LoaderError, SourceBusyError
from service.index.identity import content_hash, summary_id
from service.index.interfaces import IngestStore
from service.index.records import (
    OriginalRecord,
    SourceRecord,
    StoredOriginal,
    SummaryRecord,
    header_path,
    indexed_text,
    now,
)
from service.index.versions import VERSION, VERSION_GROUP, check_version, labelled
from service.ingest.attach import attachments, summary_record, upgrade_context
from service.ingest.chunk_records import (
    chunk_headers,
    chunk_place,
    original_record,
    settings_key,
    unique_chunks,
)
from service.ingest.delete import finish_deletions
from service.ingest.locks import Leases, SourceLocks
from service.ingest.report import IngestEvent, IngestReport
from service.ingest.summarize import Summarizer, SummaryRequest, SummaryResult
from service.models.embed import Embedder
from splitters import chunk_documents

__all__ = ["Ingestor"]

#: Summaries are embedded, written and attached in batches of this many as the model
#: finishes them: a stopped ingest loses at most this many (fewer calls would each
#: carry more; more would lose more).
ATTACH_EVERY = 8
#: How long one wait of the ingest (`on_wait`, twice a second) waits for the summary calls
#: in flight to end before a batch's turn (`service.ingest.turns`).
_TURN_WAIT_SECONDS = 0.4


@dataclass(kw_only=True)
class _PendingSource:
    """A source whose chunks are written and whose summaries are still to attach."""

    record: SourceRecord
    originals: list[OriginalRecord]  # the chunks to attach a summary to (vectors if known)


class Ingestor:
    """Runs ingests against one store with one summarizer and one embedder."""

    def __init__(
        self,
        *,
        store: IngestStore,
        summarizer: Summarizer,
        embedder: Embedder,
        max_tokens: int = 500,
        max_chunks: int = 0,
        min_similarity: float = 0.0,
        on_event: Callable[[IngestEvent], None] | None = None,
        leases: Leases | None = None,
        lock_seconds: float = 60.0,
        lock_wait_seconds: float = 600.0,
        exclusive_model_calls: bool = True,
    ) -> None:
        self.store = store
        self.summarizer = summarizer
        self.embedder = embedder
        self.max_tokens = max_tokens
        self.max_chunks = max_chunks  # per source; 0: no limit
        self.min_similarity = min_similarity
        self._emit = on_event or (lambda _event: None)
        # Each source is held (a lease) while it is changed; None: no holds (one writer).
        self.leases = leases
        self.lock_seconds = lock_seconds
        self.lock_wait_seconds = lock_wait_seconds
        # Batches of summaries are embedded while no summary call runs (`service.ingest.turns`).
        self.exclusive_model_calls = exclusive_model_calls
        self._locks: SourceLocks | None = None
        self.settings_key = settings_key(
            max_tokens=max_tokens,
            chat_model=summarizer.model_name,
            prompt_version=summarizer.prompt_version,
            embedding_model=embedder.model,
        )

    def ingest(
        self, sources: Sequence[str], *, options: LoadOptions | None = None, version: str = ""
    ) -> IngestReport:
        """Load `sources` (files, directories, URLs, crawls) and ingest every document,
        its chunks labelled `version` (`service.index.versions`; empty: none)."""
        report = IngestReport()

        def failed(error: LoaderError) -> None:
            report.failed.append(str(error))
            self._emit(IngestEvent(stage="error", source=error.source, message=str(error)))

        documents = labelled(
            load(sources, options=options, on_error=failed), version=check_version(version)
        )
        return self.ingest_documents(documents, report=report)

    def ingest_documents(
        self, documents: Iterable[Document], *, report: IngestReport | None = None
    ) -> IngestReport:
        """Ingest already-loaded Markdown documents: every chunk first, then the summaries."""
        report = report or IngestReport()
        started = time.perf_counter()
        self.store.ensure_schema(
            embedding_model=self.embedder.model, dimension=self.embedder.dimension()
        )
        self._upgrade_context()
        self._locks = self._open_locks()
        try:
            finish_deletions(self.store, locks=self._locks)
            pending = [
                work
                for document in _timed(documents, report.seconds, "load")
                if (work := self._write_held(document, report)) is not None
            ]
            for work in pending:
                self._attach_held(work, report)
        finally:
            if self._locks is not None:
                self._locks.close()
            self._locks = None
        report.wall_seconds = time.perf_counter() - started
        return report

    def _open_locks(self) -> SourceLocks | None:
        if self.leases is None:
            return None

        def waiting(source: str) -> None:
            self._emit(
                IngestEvent(
                    stage="held", source=source, message=f"another ingest of {source} holds it"
                )
            )

        return SourceLocks(
            self.leases,
            seconds=self.lock_seconds,
            wait=self.lock_wait_seconds,
            on_wait=waiting,
        )

    def _write_held(self, document: Document, report: IngestReport) -> _PendingSource | None:
        """Phase 1 for one source, holding it (when there are leases) until phase 2."""
        locks = self._locks
        if locks is None:
            return self._write_chunks(document, report)
        source = str(document.metadata[SOURCE])
        if not locks.acquire(source):
            name = "SYNOPSIS_INGEST_LOCK_WAIT_SECONDS"
            self._busy(
                report,
                source,
                f"{source}: another ingest or delete of it still held it after "
                f"{locks.wait:g} s ({name}); not indexed this time",
            )
            return None
        try:
            work = self._write_chunks(document, report)
        except SourceBusyError as exc:
            report.sources -= 1
            locks.release(source)
            self._busy(report, source, str(exc))
            return None
        if work is None:
            locks.release(source)
        return work

    def _attach_held(self, work: _PendingSource, report: IngestReport) -> None:
        """Phase 2 for one source; its hold is released after it."""
        source = work.record.source
        try:
            self._attach_summaries(work, report)
        except SourceBusyError as exc:
            self._busy(report, source, str(exc))
        finally:
            if self._locks is not None:
                self._locks.release(source)

    def _busy(self, report: IngestReport, source: str, message: str) -> None:
        report.failed.append(message)
        self._emit(IngestEvent(stage="error", source=source, message=message))

    def _upgrade_context(self) -> None:
        """An index built before chunks had a `context` vector gets them first (no LLM
        call; one embedding per attached summary), so that every chunk has one."""
        if self.store.has_context_vectors():
            return
        self._emit(IngestEvent(stage="upgrade", source="", message="adding context vectors"))
        upgraded = upgrade_context(
            self.store, embedder=self.embedder, min_similarity=self.min_similarity
        )
        if upgraded is not None:
            self._emit(IngestEvent(stage="upgrade", source="", message=upgraded.summary_line()))

    def _write_chunks(self, document: Document, report: IngestReport) -> _PendingSource | None:
        """Phase 1 for one source; returns what phase 2 has to do (None: nothing)."""
        source = str(document.metadata[SOURCE])
        report.sources += 1
        doc_hash = str(document.metadata.get(CONTENT_HASH) or content_hash(document.page_content))
        version = str(document.metadata.get(VERSION) or "")
        group = str(document.metadata.get(VERSION_GROUP) or "")
        previous = self.store.source_record(source)
        if (
            previous is not None
            and previous.status == "complete"
            and previous.content_hash == doc_hash
            and previous.settings_key == self.settings_key
            and (previous.version, previous.version_group) == (version, group)
            # A record that outlived its chunks (a delete stopped part-way before deletes
            # marked the record first) is not unchanged.
            and self.store.count_originals(source) == previous.chunks
        ):
            report.unchanged_sources += 1
            report.unchanged_chunks += previous.chunks
            self._emit(IngestEvent(stage="source", source=source, message="unchanged"))
            return None

        clock = time.perf_counter()
        chunks = unique_chunks(source, chunk_documents([document], max_tokens=self.max_tokens))
        report.seconds["split"] += time.perf_counter() - clock
        if self.max_chunks and len(chunks) > self.max_chunks:
            # Each chunk costs a model call: refuse before anything of it is written.
            message = (
                f"{source}: {len(chunks)} chunks, more than SYNOPSIS_MAX_CHUNKS_PER_SOURCE "
                f"({self.max_chunks}); not indexed (raise the setting to index it)"
            )
            report.failed.append(message)
            report.sources -= 1  # refused: counted among the failed instead
            self._emit(IngestEvent(stage="error", source=source, message=message))
            return None
        self._emit(IngestEvent(stage="split", source=source, total=len(chunks)))

        clock = time.perf_counter()
        stored = self.store.existing_originals(source)
        stored_summaries = self.store.existing_summaries(source)
        report.seconds["write"] += time.perf_counter() - clock

        wanted = {cid: self._summary_id(cid) for cid in chunks}
        new = [cid for cid in chunks if cid not in stored]
        report.new_chunks += len(new)
        report.unchanged_chunks += len(chunks) - len(new)

        clock = time.perf_counter()
        vectors = self.embedder.embed_documents(
            [indexed_text(chunk_headers(chunks[cid]), chunks[cid].page_content) for cid in new]
        )
        report.seconds["embed"] += time.perf_counter() - clock

        clock = time.perf_counter()
        new_records = {
            cid: original_record(cid, chunks[cid], vector)
            for cid, vector in zip(new, vectors, strict=True)
        }
        to_attach = [cid for cid in chunks if _summary_pending(stored.get(cid), wanted[cid])]
        record = SourceRecord(
            source=source,
            title=str(document.metadata.get(TITLE) or ""),
            content_hash=doc_hash,
            settings_key=self.settings_key,
            status="ingesting",
            chunks=len(chunks),
            pending=len(to_attach),
            ingested_at=now(),
            version=version,
            version_group=group,
        )
        if self._locks is not None:  # the first write of this source: it must be ours
            self._locks.confirm(source)
        self.store.put_source_record(record)
        written = self.store.write_originals(list(new_records.values()))
        places = {cid: chunk_place(chunk) for cid, chunk in chunks.items() if cid in stored}
        self.store.update_unchanged(
            {cid: place for cid, place in places.items() if stored[cid].place != place}
        )
        # Kept chunks of a source labelled otherwise now (and their summaries) follow it.
        relabelled = {
            cid
            for cid in places
            if (stored[cid].version, stored[cid].version_group) != (version, group)
        }
        wanted_ids = set(wanted.values())
        if relabelled:
            self.store.relabel(
                originals=sorted(relabelled),
                summaries=sorted(
                    sid
                    for sid, oid in stored_summaries.items()
                    if oid in relabelled and sid in wanted_ids
                ),
                version=version,
                version_group=group,
            )
        self.store.delete_summaries([sid for sid in stored_summaries if sid not in wanted_ids])
        vanished = [cid for cid in stored if cid not in chunks]
        self.store.delete_originals(vanished)
        report.deleted_chunks += len(vanished)
        report.objects_written += written
        if not to_attach:
            self.store.put_source_record(dataclasses.replace(record, status="complete"))
        report.seconds["write"] += time.perf_counter() - clock
        self._emit(
            IngestEvent(
                stage="write",
                source=source,
                message=f"{len(new)} new, {len(vanished)} deleted chunks; "
                f"{len(to_attach)} summaries to write",
                done=len(chunks),
                total=len(chunks),
            )
        )
        if not to_attach:
            self._emit(IngestEvent(stage="source", source=source, message="complete"))
            return None
        originals = [
            new_records.get(cid) or original_record(cid, chunks[cid], []) for cid in to_attach
        ]
        return _PendingSource(record=record, originals=originals)

    def _attach_summaries(self, work: _PendingSource, report: IngestReport) -> None:
        """Phase 2 for one source: its missing summaries, written and attached in batches
        of `ATTACH_EVERY` as the model finishes them, so that an ingest stopped part-way
        keeps every summary it paid for (the next one finds them attached, or cached)."""
        source = work.record.source
        finished: queue.SimpleQueue[tuple[int, SummaryResult]] = queue.SimpleQueue()
        attached: set[int] = set()
        attaching_seconds = 0.0  # spent attaching while the model was still writing

        def attach(items: list[tuple[int, tuple[SummaryResult, list[float]]]]) -> None:
            if items:
                self._attach_batch(work, items, report)
                attached.update(index for index, _ in items)

        turns = self.summarizer.turns
        pausing = False  # this source holds a pause of the summary calls

        def attach_finished() -> None:
            nonlocal attaching_seconds, pausing
            if finished.qsize() < ATTACH_EVERY:
                return
            if self.exclusive_model_calls:
                # The batch's turn: no new summary call until it is attached; the
                # calls in flight end first (looked at again on the next wait).
                if not pausing:
                    turns.pause()
                    pausing = True
                if not turns.wait_idle(timeout=_TURN_WAIT_SECONDS):
                    return
            clock = time.perf_counter()
            items: list[tuple[int, tuple[SummaryResult, list[float]]]] = []
            while not finished.empty():
                index, result = finished.get()
                items.append((index, (result, [])))
            try:
                attach(items)
            finally:
                if pausing:
                    turns.resume()
                    pausing = False
            attaching_seconds += time.perf_counter() - clock

        try:
            results = self._summaries_for(
                source,
                work.originals,
                report,
                on_result=lambda index, result: finished.put((index, result)),
                on_wait=attach_finished,
            )
        finally:
            if pausing:  # stopped while the calls in flight were ending
                turns.resume()
        report.seconds["summarize"] -= attaching_seconds  # counted in its own stages
        attach([(i, result) for i, result in enumerate(results) if i not in attached])

        clock = time.perf_counter()
        self.store.put_source_record(
            dataclasses.replace(work.record, status="complete", pending=0, ingested_at=now())
        )
        report.seconds["write"] += time.perf_counter() - clock
        self._emit(
            IngestEvent(
                stage="source",
                source=source,
                message=f"{len(results)} summaries attached",
                done=len(results),
                total=len(results),
            )
        )

    def _attach_batch(
        self,
        work: _PendingSource,
        items: Sequence[tuple[int, tuple[SummaryResult, list[float]]]],
        report: IngestReport,
    ) -> None:
        """Embed, write and attach the summaries of some of a source's chunks: `items` are
        (the chunk's position in `work.originals`, (its summary, the summary's vector if
        the cache had one))."""
        originals = [work.originals[index] for index, _ in items]
        results = [result for _, result in items]

        clock = time.perf_counter()
        unknown = [o.id for o in originals if not o.vector]
        stored_vectors = {
            oid: record.vector
            for oid, record in self.store.originals_by_id(unknown, with_vectors=True).items()
        }
        content_vectors = [o.vector or stored_vectors.get(o.id, []) for o in originals]
        todo = [index for index, (_, vector) in enumerate(results) if not vector]
        fresh = self.embedder.embed_documents(
            [indexed_text(originals[i].headers, results[i][0].text) for i in todo]
        )
        summary_vectors = [vector for _, vector in results]
        for index, vector in zip(todo, fresh, strict=True):
            summary_vectors[index] = vector
        report.seconds["embed"] += time.perf_counter() - clock

        clock = time.perf_counter()
        if self._locks is not None:  # still ours after the model calls
            self._locks.confirm(work.record.source)
        model, version = self.summarizer.model_name, self.summarizer.prompt_version
        summaries = [
            summary_record(
                original,
                result,
                summary_id=self._summary_id(original.id),
                vector=vector,
                content_vector=content_vector,
                model=model,
                prompt_version=version,
            )
            for original, (result, _), vector, content_vector in zip(
                originals, results, summary_vectors, content_vectors, strict=True
            )
        ]
        report.objects_written += self.store.write_summaries(summaries)
        report.seconds["write"] += time.perf_counter() - clock

        # An original deleted meanwhile (no vector) gets nothing.
        clock = time.perf_counter()
        present = {
            o.id: dataclasses.replace(o, vector=v)
            for o, v in zip(originals, content_vectors, strict=True)
            if v
        }
        attached = attachments(
            summaries, present, embedder=self.embedder, min_similarity=self.min_similarity
        )
        report.seconds["context"] += time.perf_counter() - clock

        clock = time.perf_counter()
        self.store.attach_summaries(attached)
        report.filtered_summaries += sum(s.similarity < self.min_similarity for s in summaries)
        report.seconds["write"] += time.perf_counter() - clock

    def _summary_id(self, cid: uuid.UUID) -> uuid.UUID:
        return summary_id(cid, self.summarizer.model_name, self.summarizer.prompt_version)

    def _summaries_for(
        self,
        source: str,
        originals: list[OriginalRecord],
        report: IngestReport,
        *,
        on_result: Callable[[int, SummaryResult], None] | None = None,
        on_wait: Callable[[], None] | None = None,
    ) -> list[tuple[SummaryResult, list[float]]]:
        """Summaries for `originals`, with their vector when the cache had one: from the
        cache where possible, else from the model. `on_result(i, summary)` is told of each
        one the model finishes (on the summarizer's thread); `on_wait` is called on this
        thread about twice a second while the model writes."""
        clock = time.perf_counter()
        cached = self.store.cached_summaries(
            [o.content_hash for o in originals],
            model=self.summarizer.model_name,
            prompt_version=self.summarizer.prompt_version,
        )
        results: list[tuple[SummaryResult, list[float]]] = [
            (_result(cached[o.content_hash]), cached[o.content_hash].vector)
            if o.content_hash in cached
            else (SummaryResult(text=""), [])
            for o in originals
        ]
        todo = [index for index, o in enumerate(originals) if o.content_hash not in cached]
        report.cached_summaries += len(originals) - len(todo)
        requests = [
            SummaryRequest(
                headers=originals[index].headers,
                content=originals[index].content,
                label=f"{source} § {header_path(originals[index].headers) or '(top)'} "
                f"(chunk {originals[index].chunk_index})",
                title=originals[index].title,
            )
            for index in todo
        ]
        done = 0

        def on_done(index: int, result: SummaryResult) -> None:
            nonlocal done
            done += 1
            if on_result is not None:
                on_result(todo[index], result)
            self._emit(
                IngestEvent(
                    stage="summarize",
                    source=source,
                    done=done,
                    total=len(todo),
                    seconds=self.summarizer.last_call_seconds,
                )
            )

        def waiting() -> None:
            self._emit(IngestEvent(stage="wait", source=source))
            if on_wait is not None:
                on_wait()

        if requests:
            calls_before = self.summarizer.calls
            usage_before = self.summarizer.usage.copy()
            skipped_before = self.summarizer.retries_skipped
            slow_before, timeouts_before = self.summarizer.slow_calls, self.summarizer.timeouts
            fresh = self.summarizer.summarize_many(
                requests,
                on_done=on_done,
                on_wait=waiting,
            )
            report.llm_calls += self.summarizer.calls - calls_before
            report.model.merge(self.summarizer.usage.since(usage_before))
            report.unretried_summaries += self.summarizer.retries_skipped - skipped_before
            report.slow_summary_calls += self.summarizer.slow_calls - slow_before
            report.timed_out_summaries += self.summarizer.timeouts - timeouts_before
            for index, result in zip(todo, fresh, strict=True):
                results[index] = (result, [])
                report.retried_summaries += result.kind == "llm" and bool(result.reason)
                report.extractive_summaries += result.kind == "extractive"
        report.seconds["summarize"] += time.perf_counter() - clock
        return results


def _summary_pending(stored: StoredOriginal | None, wanted: uuid.UUID) -> bool:
    return stored is None or stored.summary_id != str(wanted)


def _result(record: SummaryRecord) -> SummaryResult:
    return SummaryResult(text=record.summary, kind=record.kind, reason=record.reason)


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
