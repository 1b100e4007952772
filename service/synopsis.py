"""`Synopsis`: the wired-up service — one Weaviate client, one store, embedder, summarizer.

The CLI, the LangChain retriever and the HTTP API all go through this object:

    with Synopsis.open(settings) as synopsis:
        synopsis.ingest(["docs/"])
        hits = synopsis.search(SearchRequest(query="range()"))
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING

import weaviate

from service.connections import connect_weaviate, ensure_stack
from service.errors import (
    SearchError,
    SourceBusyError,
    SourceNotFoundError,
    SourceNotReadyError,
    StoreError,
)
from service.index.access import store_errors
from service.index.records import SourceChunk, SourceRecord, header_path, now
from service.index.replication import Replication
from service.index.store import Store
from service.models.embed import Embedder, ollama_embeddings
from service.query.search import Hit, Searcher, SearchRequest, search_request
from service.settings import Settings
from service.stack.progress import Progress, silent

# What only ingesting or answering needs (the loaders, the chat model) is imported when
# first used: a search must not pay for the PDF and HTML stack (docs/benchmarks.md).
if TYPE_CHECKING:
    from langchain_core.documents import Document

    from loaders import LoadOptions
    from service.conversations import Conversation, ConversationStore
    from service.ingest.attach import ReattachReport
    from service.ingest.pipeline import Ingestor
    from service.ingest.reindex import ReindexReport
    from service.ingest.report import IngestEvent, IngestReport
    from service.ingest.resummarize import ResummarizeReport
    from service.ingest.summarize import Summarizer
    from service.query.answer import Answer, Answerer
    from service.query.context import ContextRequest, SearchContext
    from service.query.document_summary import DocumentSummarizer, DocumentSummary, SummaryStyle
    from service.query.reading import Reading
    from service.query.rewrite import QueryRewriter
    from service.sources import RegisteredSource, SourceRegistry

__all__ = ["Synopsis"]

#: Chunks read per query when a whole document is read (Weaviate reads at most 10,000
#: objects past an offset, so a page size keeps it in one window for most documents).
_CHUNK_PAGE = 500


#: How long a process trusts its reading of the registered sources' latest versions (a
#: sync in another process changes them; this process's own syncs and removals are seen
#: at once).
LATEST_RECHECK_SECONDS = 10.0


def _sync_hold(name: str) -> str:
    """What a sync of the registered source `name` holds (`SourceLocks`), so that one runs
    at a time and a removal waits for none."""
    return f"registered source\n{name}"


def _more_from(offset: int) -> str:
    """The line that ends a page of text that continues (`Synopsis.read_section`)."""
    return f"More follows from offset {offset}."


class Synopsis:
    """Everything Synopsis does, over one connection. Close it (or use `with`)."""

    def __init__(
        self,
        settings: Settings,
        *,
        client: weaviate.WeaviateClient,
        embedder: Embedder,
        summarizer: Summarizer | None = None,
    ) -> None:
        self.settings = settings
        self.client = client
        self.store = Store(
            client,
            prefix=settings.external.collection_prefix,
            replication=Replication.from_settings(settings),
        )
        self.embedder = embedder
        self._summarizer = summarizer
        self._answerer: Answerer | None = None
        self._document_summarizer: DocumentSummarizer | None = None
        self._rewriter: QueryRewriter | None = None
        self._conversations: ConversationStore | None = None
        self._registry: SourceRegistry | None = None
        self._latest: tuple[float, tuple[tuple[str, str], ...]] | None = None
        self.searcher = Searcher(self.store, embedder)

    @property
    def summarizer(self) -> Summarizer:
        """The summarizer (built from the settings on first use unless one was given)."""
        if self._summarizer is None:
            from service.ingest.quality import QualityThresholds
            from service.ingest.summarize import Summarizer
            from service.models.chat import chat_model

            settings = self.settings
            self._summarizer = Summarizer(
                chat_model(settings),
                model_name=settings.models.chat_model,
                concurrency=settings.summaries.concurrency,
                timeout=settings.summaries.timeout,
                retries=settings.summaries.retries,
                guard=QualityThresholds.from_settings(settings) if settings.guard.enabled else None,
                prompt_version=settings.summaries.prompt_version,
                slow_seconds=settings.summaries.slow_seconds,
                strict_retry=settings.guard.strict_retry,
                retry_floor=settings.guard.retry_floor,
            )
        return self._summarizer

    @property
    def answerer(self) -> Answerer:
        """The answerer (built from the settings on first use)."""
        if self._answerer is None:
            from service.models.chat import answer_model
            from service.query.answer import Answerer

            self._answerer = Answerer(
                answer_model(self.settings),
                model_name=self.settings.models.resolved_answer_model,
                term_check=self.settings.answers.term_check,
                min_support=self.settings.answers.min_support,
                quote_on_refusal=self.settings.answers.quote_on_refusal,
            )
        return self._answerer

    @property
    def document_summarizer(self) -> DocumentSummarizer:
        """The document summarizer (the answer model's; built on first use)."""
        if self._document_summarizer is None:
            from service.models.chat import answer_model
            from service.query.document_summary import DocumentSummarizer

            self._document_summarizer = DocumentSummarizer(
                answer_model(self.settings),
                model_name=self.settings.models.resolved_answer_model,
                cache_dir=self.settings.stack.data_dir / "document-summaries",
                min_support=self.settings.answers.min_support,
            )
        return self._document_summarizer

    @property
    def rewriter(self) -> QueryRewriter:
        """The follow-up rewriter (the answer model's, when it uses one; built on first use)."""
        if self._rewriter is None:
            from service.models.chat import answer_model
            from service.query.rewrite import QueryRewriter

            method = self.settings.conversations.rewrite
            self._rewriter = QueryRewriter(
                answer_model(self.settings) if method == "model" else None,
                model_name=self.settings.models.resolved_answer_model,
                method=method,
                context_turns=self.settings.conversations.context_turns,
            )
        return self._rewriter

    @property
    def conversations(self) -> ConversationStore:
        """The durable conversations (their collection is created on first use)."""
        if self._conversations is None:
            from service.conversations import ConversationStore

            self._conversations = ConversationStore(
                self.client,
                prefix=self.settings.external.collection_prefix,
                replication=Replication.from_settings(self.settings),
                per_owner=self.settings.conversations.per_key,
            )
        return self._conversations

    @property
    def registered_sources(self) -> SourceRegistry:
        """The registered sources (`synopsis sources`; their collection is created on first
        use)."""
        if self._registry is None:
            from service.sources import SourceRegistry

            self._registry = SourceRegistry(
                self.client,
                prefix=self.settings.external.collection_prefix,
                replication=Replication.from_settings(self.settings),
            )
        return self._registry

    @classmethod
    def open(cls, settings: Settings, *, progress: Progress = silent) -> Synopsis:
        """Connect to the configured Weaviate and Ollama, starting the local stack if needed."""
        ensure_stack(settings, progress=progress)
        client = connect_weaviate(settings)
        embedder = Embedder(
            ollama_embeddings(settings),
            model=settings.models.embedding_identity,
            batch_size=settings.models.embedding_batch_size,
            query_batch_size=settings.models.query_embedding_batch_size,
        )
        return cls(settings, client=client, embedder=embedder)

    def close(self) -> None:
        """Close every connection: Weaviate, and the Ollama clients of the models used."""
        self.searcher.close()
        if self._summarizer is not None:
            self._summarizer.close()
        self.embedder.close()
        if self._answerer is not None:
            self._answerer.close()
        if self._document_summarizer is not None:
            self._document_summarizer.close()
        if self._rewriter is not None:
            self._rewriter.close()
        self.client.close()

    def __enter__(self) -> Synopsis:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def ingest(
        self,
        sources: Sequence[str],
        *,
        options: LoadOptions | None = None,
        on_event: Callable[[IngestEvent], None] | None = None,
        version: str = "",
    ) -> IngestReport:
        """Load, split, summarize, embed and store `sources` (default options: the
        settings', crawl depth 0), their chunks labelled `version` (empty: none)."""
        from service.ingest.load_options import load_options

        options = options or load_options(self.settings)
        return self._ingestor(on_event).ingest(sources, options=options, version=version)

    def ingest_documents(
        self,
        documents: Iterable[Document],
        *,
        on_event: Callable[[IngestEvent], None] | None = None,
        report: IngestReport | None = None,
    ) -> IngestReport:
        """Split, summarize, embed and store already-loaded Markdown `documents`."""
        return self._ingestor(on_event).ingest_documents(documents, report=report)

    def _ingestor(self, on_event: Callable[[IngestEvent], None] | None) -> Ingestor:
        from service.ingest.pipeline import Ingestor

        return Ingestor(
            store=self.store,
            summarizer=self.summarizer,
            embedder=self.embedder,
            max_tokens=self.settings.ingest.max_tokens,
            max_chunks=self.settings.ingest.max_chunks_per_source,
            min_similarity=self.settings.summaries.min_similarity,
            on_event=on_event,
            leases=self.store.leases,
            lock_seconds=self.settings.ingest.lock_seconds,
            lock_wait_seconds=self.settings.ingest.lock_wait_seconds,
        )

    def resummarize(
        self,
        *,
        kind: str | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> ResummarizeReport:
        """Regenerate stored summaries of `kind` (all when None), in place."""
        from service.ingest.resummarize import resummarize

        if not self.store.exists():
            raise StoreError("nothing is indexed yet (see `synopsis ingest`)")
        return resummarize(
            self.store,
            self.summarizer,
            self.embedder,
            kind=kind,
            min_similarity=self.settings.summaries.min_similarity,
            on_progress=on_progress,
        )

    def reattach(self) -> ReattachReport:
        """Apply SYNOPSIS_SUMMARY_MIN_SIMILARITY and, with the summary guard on, the
        faithfulness check to every stored summary again (no LLM call; a generated summary
        the check flags is replaced by its extractive one; each attached summary is
        embedded with its chunk). An index built before chunks had `context` vectors gets
        them."""
        from service.ingest.attach import reattach, upgrade_context
        from service.ingest.quality import QualityThresholds

        if not self.store.exists():
            raise StoreError("nothing is indexed yet (see `synopsis ingest`)")
        self.store.check_embedding(embedding_model=self.embedder.model)
        threshold = self.settings.summaries.min_similarity
        upgrade_context(self.store, embedder=self.embedder, min_similarity=threshold)
        guard = (
            QualityThresholds.from_settings(self.settings) if self.settings.guard.enabled else None
        )
        return reattach(self.store, embedder=self.embedder, min_similarity=threshold, guard=guard)

    def reindex(
        self, from_prefix: str, *, on_progress: Callable[[str], None] | None = None
    ) -> ReindexReport:
        """Copy the collections named with `from_prefix` into the configured ones, embedded
        with the configured model (no LLM call); see `service.ingest.reindex`."""
        from service.ingest.reindex import reindex

        if from_prefix == self.settings.external.collection_prefix:
            raise StoreError(
                "reindex copies into new collections: set SYNOPSIS_COLLECTION_PREFIX to "
                f"another prefix than {from_prefix!r}"
            )
        source = Store(self.client, prefix=from_prefix)
        if not source.exists():
            raise StoreError(f"there are no collections with prefix {from_prefix!r} to copy")
        return reindex(
            source,
            self.store,
            self.embedder,
            max_tokens=self.settings.ingest.max_tokens,
            min_similarity=self.settings.summaries.min_similarity,
            on_progress=on_progress,
        )

    def weaviate_ready(self) -> bool:
        """True when Weaviate answers its readiness check."""
        return bool(self.client.is_ready())

    def index_exists(self) -> bool:
        """True when the collections exist and fit the configured embedding model, False
        before the first ingest creates them; raises `EmbeddingMismatchError` when they
        were built with another embedding model or an older schema."""
        if not self.store.exists():
            return False
        self._check_embedding()
        return True

    def pending_summaries(self) -> int:
        """Chunks that are searchable but whose summary is not attached yet."""
        return self.store.pending_summaries() if self.store.exists() else 0

    def search(self, request: SearchRequest) -> list[Hit]:
        """Hybrid search; see `service.query.search`. Without a `version`, the latest
        version of each group of registered sources is read (`latest_versions`)."""
        self._check_embedding()
        return self.searcher.search(self._versioned(request))

    async def asearch(self, request: SearchRequest) -> list[Hit]:
        """Async `search` (the embedding check and the registry read Weaviate once, in a
        worker thread)."""
        request = await asyncio.to_thread(self._checked_versioned, request)
        return await self.searcher.asearch(request)

    def _checked_versioned(self, request: SearchRequest) -> SearchRequest:
        self._check_embedding()
        return self._versioned(request)

    def _versioned(self, request: SearchRequest) -> SearchRequest:
        """`request` with the latest versions to read when it names no version (an
        empty label names none)."""
        if request.version:
            return request
        request = dataclasses.replace(request, version=None)
        latest = self.latest_versions()
        if not latest:
            return request
        return dataclasses.replace(request, latest=tuple(sorted(latest.items())))

    def latest_versions(self) -> dict[str, str]:
        """The latest version of each group of registered sources, among those that
        completed a sync (`service.index.versions`): what a search without a `version`
        reads of each group. Read again after `LATEST_RECHECK_SECONDS`."""
        from service.index.versions import latest_versions

        clock = time.monotonic()
        if self._latest is not None and clock - self._latest[0] < LATEST_RECHECK_SECONDS:
            return dict(self._latest[1])
        registry = self.registered_sources
        with store_errors(f"reading the versions of {registry.name}"):
            sources = registry.list(pages=False) if registry.exists() else []
        latest = latest_versions(
            (source.group, source.version) for source in sources if source.synced_at is not None
        )
        self._latest = (clock, tuple(latest.items()))
        return latest

    def search_context(self, request: SearchRequest, context: ContextRequest) -> SearchContext:
        """Search, then give each hit as its whole section (or chunk) within a token budget
        (`service.query.context`)."""
        from service.query.context import build_context

        context.validate()  # before the search: a bad budget costs nothing
        return build_context(request.query, self.search(request), self.store, context)

    async def asearch_context(
        self, request: SearchRequest, context: ContextRequest
    ) -> SearchContext:
        """Async `search_context` (the section reads run in a worker thread)."""
        from service.query.context import build_context

        context.validate()
        hits = await self.asearch(request)
        return await asyncio.to_thread(build_context, request.query, hits, self.store, context)

    def read_section(
        self,
        source: str,
        section: str,
        *,
        max_tokens: int,
        offset: int = 0,
        continuation: Callable[[int], str] = _more_from,
    ) -> Reading:
        """One page of a section's text, reassembled from its chunks (`service.query.
        reading`). `source` may be a `source#anchor` location, which names the section
        when `section` is empty. SourceNotFoundError when either is not indexed."""
        from service.query.reading import check_page, find_section, read_page, split_location

        check_page(max_tokens, offset)
        name, chunks = self._source_text(source)
        if name != source and not section:
            section = split_location(source)[1]
        if not section.strip():
            raise SearchError("name the section: its anchor or its header path")
        path, selected = find_section(name, chunks, section)
        return read_page(
            name,
            f"section {header_path(path)}",
            selected,
            offset=offset,
            max_tokens=max_tokens,
            base_depth=len(path) - 1,
            headers=path,
            continuation=continuation,
        )

    def read_document(
        self,
        source: str,
        *,
        max_tokens: int,
        offset: int = 0,
        continuation: Callable[[int], str] = _more_from,
    ) -> Reading:
        """One page of a whole document's text, reassembled from its chunks in order."""
        from service.query.reading import check_page, read_page

        check_page(max_tokens, offset)
        name, chunks = self._source_text(source)
        return read_page(
            name,
            "document",
            chunks,
            offset=offset,
            max_tokens=max_tokens,
            continuation=continuation,
        )

    def _source_text(self, source: str) -> tuple[str, list[SourceChunk]]:
        """The indexed source `source` names (a `source#anchor` location names its source)
        and all its chunks in order; SourceNotFoundError when it is not indexed."""
        from service.query.reading import split_location

        name = source
        if self.source(name) is None:
            name = split_location(source)[0]
            if name == source or self.source(name) is None:
                raise SourceNotFoundError(f"{source} is not indexed")
        chunks: list[SourceChunk] = []
        while True:
            page, total = self.store.source_chunks(name, limit=_CHUNK_PAGE, offset=len(chunks))
            chunks.extend(page)
            if not page or len(chunks) >= total:
                return name, chunks

    def ask(self, question: str, request: SearchRequest | None = None) -> Answer:
        """Retrieve, then answer from the retrieved originals only, with citations; the
        reply is checked against them (`service.query.answer`)."""
        hits = self.search(self._ask_request(question, request))
        return self.answerer.answer(question, hits)

    def ask_stream(
        self, question: str, request: SearchRequest | None = None
    ) -> Iterator[str | Answer]:
        """`ask`, streamed: retrieval runs now (its errors are raised here); the iterator
        yields the reply's tokens, then the checked `Answer` (`Answerer.stream`)."""
        hits = self.search(self._ask_request(question, request))
        return self.answerer.stream(question, hits)

    async def aask_stream(
        self, question: str, request: SearchRequest | None = None
    ) -> AsyncIterator[str | Answer]:
        """Async `ask_stream` (`Answerer.astream`: closing the iterator stops the model)."""
        hits = await self.asearch(self._ask_request(question, request))
        return self.answerer.astream(question, hits)

    def _ask_request(self, question: str, request: SearchRequest | None) -> SearchRequest:
        return request or search_request(
            self.settings, question, max_vector_distance=self.settings.answers.max_vector_distance
        )

    def start_conversation(self, owner: str) -> Conversation:
        """A new, empty conversation of `owner` (an API key's id), stored."""
        import uuid

        from service.conversations import Conversation

        started = now()
        conversation = Conversation(
            id=str(uuid.uuid4()), owner=owner, created_at=started, updated_at=started
        )
        self.conversations.create(conversation)
        return conversation

    def converse(self, conversation: Conversation, question: str) -> tuple[Conversation, Answer]:
        """Ask `question` in `conversation`: rewritten into a self-contained query from the
        earlier turns (`service.query.rewrite`), answered like `ask`; the turn is stored
        (the last `conversation_max_turns` are kept). Returns the updated conversation."""
        from service.conversations import Turn

        rewrite = self.rewriter.rewrite(conversation.queries, question)
        answer = self.ask(rewrite.query)
        turn = Turn(
            question=question,
            query=rewrite.query,
            rewrite=rewrite.method,
            answer=answer.text,
            kind=answer.kind,
            citations=[f"{hit.location} § {header_path(hit.headers)}" for hit in answer.citations],
            asked_at=now(),
        )
        updated = conversation.with_turn(turn, max_turns=self.settings.conversations.max_turns)
        self.conversations.save(updated)
        return updated, answer

    def sources(self) -> list[SourceRecord]:
        """Every ingested source."""
        return self.store.list_sources() if self.store.exists() else []

    def source(self, source: str) -> SourceRecord | None:
        """The record of one ingested source, if it is indexed."""
        return self.store.source_record(source) if self.store.exists() else None

    def source_chunks(
        self, source: str, *, limit: int, offset: int = 0
    ) -> tuple[list[SourceChunk], int]:
        """A page of one source's chunks with their summaries, and its chunk count."""
        if not self.store.exists():
            return [], 0
        return self.store.source_chunks(source, limit=limit, offset=offset)

    def document_summary(self, source: str, *, style: SummaryStyle = "brief") -> DocumentSummary:
        """A summary of the whole document from its chunks' summaries (cached; see
        `service.query.document_summary`). Raises SourceNotFoundError when it is not
        indexed, SourceNotReadyError while its ingest is still writing summaries."""
        record = self.source(source)
        if record is None:
            raise SourceNotFoundError(f"{source} is not indexed (see `synopsis docs list`)")
        if record.status != "complete":
            raise SourceNotReadyError(
                f"{source} is still being ingested ({record.pending} of its {record.chunks} "
                "summaries pending); ask again once its ingest is done"
            )
        chunks: list[SourceChunk] = []
        while len(chunks) < record.chunks:
            page, _ = self.store.source_chunks(source, limit=_CHUNK_PAGE, offset=len(chunks))
            if not page:
                break
            chunks.extend(page)
        return self.document_summarizer.summarize(record, chunks, style=style)

    def delete_source(self, source: str, *, wait: float = 0.0) -> tuple[int, int]:
        """Remove a source's originals and summaries; returns (originals, summaries) deleted.

        Its record is marked first, so a delete stopped part-way is finished by the next
        ingest (`service.ingest.delete`). It holds the source as an ingest does: while an
        ingest of it runs (after waiting up to `wait` seconds), `SourceBusyError`."""
        from service.ingest.delete import delete_source
        from service.ingest.locks import SourceLocks

        if not self.store.exists():
            return 0, 0
        with SourceLocks(self.store.leases, seconds=self.settings.ingest.lock_seconds) as locks:
            if not locks.acquire(source, wait=wait):
                raise SourceBusyError(
                    f"{source} is being ingested or deleted by another process; try again "
                    "once that is done"
                )
            locks.confirm(source)
            return delete_source(self.store, source)

    def sync_registered(
        self,
        name: str,
        *,
        options: LoadOptions | None = None,
        on_event: Callable[[IngestEvent], None] | None = None,
    ) -> RegisteredSource:
        """Sync the source registered as `name` (`service.sources.sync`) and store what it
        saw; returns it with its report. Held as an ingest holds a source, so that no two
        processes sync one registered source at once: `SourceBusyError` while another
        sync of it runs. `SourceNotFoundError` when no source is registered as `name`."""
        from service.ingest.load_options import load_options
        from service.ingest.locks import SourceLocks
        from service.sources import sync_source

        registry = self.registered_sources
        registry.require(name)
        hold = _sync_hold(name)
        with SourceLocks(self.store.leases, seconds=self.settings.ingest.lock_seconds) as locks:
            if not locks.acquire(hold, wait=0.0):
                raise SourceBusyError(f"{name} is being synced by another process")
            locks.confirm(hold)
            source = registry.require(name)  # as the last sync left it
            synced = sync_source(
                self, source, options=options or load_options(self.settings), on_event=on_event
            )
            locks.confirm(hold)  # still ours: no other sync stored its states meanwhile
            registry.save(synced)
        self._latest = None  # its version may be the latest of its group now
        return synced

    def relabel_source(self, source: str, *, version: str, group: str) -> int:
        """Give an indexed source's chunks, summaries and record another version label and
        group, in place (`service.ingest.relabel`); how many chunks were relabelled.
        Held as an ingest holds a source: `SourceBusyError` while one of it runs."""
        from service.ingest.locks import SourceLocks
        from service.ingest.relabel import relabel_source

        if not self.store.exists():
            return 0
        with SourceLocks(self.store.leases, seconds=self.settings.ingest.lock_seconds) as locks:
            if not locks.acquire(source, wait=0.0):
                raise SourceBusyError(f"{source} is being ingested or deleted by another process")
            locks.confirm(source)
            return relabel_source(self.store, source, version=version, group=group)

    def edit_registered(
        self,
        name: str,
        *,
        interval: str | None = None,
        version: str | None = None,
        group: str | None = None,
    ) -> RegisteredSource:
        """Change the sync interval, version label or group of the source registered as
        `name` (None: as it is; empty: none; checked as `sources add` checks them) and
        return it. A new version or group relabels the pages its syncs indexed, in place
        (no embedding, no model call); the registration is stored first, marked
        `relabel_pending`, so a relabel stopped part-way is finished by its next sync.
        `SourceBusyError` while a sync of it runs; `SourceNotFoundError` when no source is
        registered as `name`; `InvalidSourceError` naming the field at fault."""
        from service.ingest.locks import SourceLocks
        from service.sources import edited

        registry = self.registered_sources
        edited(registry.require(name), interval=interval, version=version, group=group)
        hold = _sync_hold(name)
        with SourceLocks(self.store.leases, seconds=self.settings.ingest.lock_seconds) as locks:
            if not locks.acquire(hold, wait=0.0):
                raise SourceBusyError(f"{name} is being synced; edit it once that is done")
            locks.confirm(hold)
            source = edited(registry.require(name), interval=interval, version=version, group=group)
            registry.save(source)
            if source.relabel_pending:
                for page in sorted(source.pages):
                    self.relabel_source(page, version=source.version, group=source.group)
                locks.confirm(hold)
                source = dataclasses.replace(source, relabel_pending=False)
                registry.save(source)
        self._latest = None  # its group's latest version may be another now
        return source

    def remove_registered(self, name: str, *, keep_documents: bool = False) -> int:
        """Forget the source registered as `name` and, unless `keep_documents`, remove the
        pages its syncs indexed; returns how many pages were removed from the index.
        Refused (`SourceBusyError`) while a sync of it runs; `SourceNotFoundError` when no
        source is registered as `name`."""
        from service.ingest.locks import SourceLocks

        registry = self.registered_sources
        registry.require(name)
        hold = _sync_hold(name)
        with SourceLocks(self.store.leases, seconds=self.settings.ingest.lock_seconds) as locks:
            if not locks.acquire(hold, wait=0.0):
                raise SourceBusyError(f"{name} is being synced; remove it once that is done")
            locks.confirm(hold)
            source = registry.require(name)
            removed = 0
            if not keep_documents:
                for page in sorted(source.pages):
                    originals, _ = self.delete_source(page)
                    removed += originals > 0
            registry.remove(name)
        self._latest = None
        return removed

    def stats(self) -> dict[str, object]:
        """Collection counts and the embedding model the index was built with."""
        if not self.store.exists():
            return {"originals": 0, "summaries": 0, "sources": 0}
        return self.store.stats()

    def _check_embedding(self) -> None:
        self.store.check_embedding(embedding_model=self.embedder.model)
