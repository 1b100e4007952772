"""`Synopsis`: the wired-up service — one Weaviate client, one store, embedder, summarizer.

The CLI, the LangChain retriever, the MCP server and the HTTP API all go through this
object:

    with Synopsis.open(settings) as synopsis:
        synopsis.ingest(["docs/"])
        hits = synopsis.search(SearchRequest(query="range()"))

It holds the connection and what is built from the settings (`service.wiring`: the
embedder at once, the models and the other stores on first use), and hands each job to
the module that does it: ingest (`service.ingest`), search and reading
(`service.query.search`, `.context`, `.reading`), answers and conversations
(`service.query.answer`, `.rewrite`), and registered sources (`service.sources.registered`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING

import weaviate

from service import wiring
from service.connections import connect_weaviate, ensure_stack
from service.index.records import SourceChunk, SourceRecord
from service.index.replication import Replication
from service.index.store import Store
from service.index.versions import LatestVersions
from service.models.embed import Embedder
from service.query.search import Hit, Searcher, SearchRequest, search_request, versioned
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
        # A lambda: the registry is built (and its module imported) on first use.
        self._latest = LatestVersions(lambda: self.registered_sources.synced_versions())  # noqa: PLW0108
        self.searcher = Searcher(self.store, embedder)

    @property
    def summarizer(self) -> Summarizer:
        """The summarizer (built from the settings on first use unless one was given)."""
        if self._summarizer is None:
            self._summarizer = wiring.summarizer(self.settings)
        return self._summarizer

    @property
    def answerer(self) -> Answerer:
        """The answerer (built from the settings on first use)."""
        if self._answerer is None:
            self._answerer = wiring.answerer(self.settings)
        return self._answerer

    @property
    def document_summarizer(self) -> DocumentSummarizer:
        """The document summarizer (the answer model's; built on first use)."""
        if self._document_summarizer is None:
            self._document_summarizer = wiring.document_summarizer(self.settings)
        return self._document_summarizer

    @property
    def rewriter(self) -> QueryRewriter:
        """The follow-up rewriter (the answer model's, when it uses one; built on first use)."""
        if self._rewriter is None:
            self._rewriter = wiring.rewriter(self.settings)
        return self._rewriter

    @property
    def conversations(self) -> ConversationStore:
        """The durable conversations (their collection is created on first use)."""
        if self._conversations is None:
            self._conversations = wiring.conversation_store(self.client, self.settings)
        return self._conversations

    @property
    def registered_sources(self) -> SourceRegistry:
        """The registered sources (`synopsis sources`; their collection is created on first
        use)."""
        if self._registry is None:
            self._registry = wiring.source_registry(self.client, self.settings)
        return self._registry

    @classmethod
    def open(cls, settings: Settings, *, progress: Progress = silent) -> Synopsis:
        """Connect to the configured Weaviate and Ollama, starting the local stack if needed."""
        ensure_stack(settings, progress=progress)
        client = connect_weaviate(settings)
        return cls(settings, client=client, embedder=wiring.embedder(settings))

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
        return wiring.ingestor(
            self.settings,
            store=self.store,
            summarizer=self.summarizer,
            embedder=self.embedder,
            on_event=on_event,
        )

    def resummarize(
        self,
        *,
        kind: str | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> ResummarizeReport:
        """Regenerate stored summaries of `kind` (all when None), in place."""
        from service.ingest.maintenance import resummarize_stored

        return resummarize_stored(
            self.store,
            self.summarizer,
            self.embedder,
            self.settings,
            kind=kind,
            on_progress=on_progress,
        )

    def reattach(self) -> ReattachReport:
        """Apply SYNOPSIS_SUMMARY_MIN_SIMILARITY and, with the summary guard on, the
        faithfulness check to every stored summary again (no LLM call; a generated summary
        the check flags is replaced by its extractive one; each attached summary is
        embedded with its chunk). An index built before chunks had `context` vectors gets
        them."""
        from service.ingest.maintenance import reattach_stored

        return reattach_stored(self.store, self.embedder, self.settings)

    def reindex(
        self, from_prefix: str, *, on_progress: Callable[[str], None] | None = None
    ) -> ReindexReport:
        """Copy the collections named with `from_prefix` into the configured ones, embedded
        with the configured model (no LLM call); see `service.ingest.reindex`."""
        from service.ingest.maintenance import reindex_from

        return reindex_from(
            self.client,
            from_prefix,
            self.store,
            self.embedder,
            self.settings,
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
        return self.searcher.search(versioned(request, self.latest_versions))

    async def asearch(self, request: SearchRequest) -> list[Hit]:
        """Async `search` (the embedding check and the registry read Weaviate once, in a
        worker thread)."""
        request = await asyncio.to_thread(self._checked_versioned, request)
        return await self.searcher.asearch(request)

    def _checked_versioned(self, request: SearchRequest) -> SearchRequest:
        self._check_embedding()
        return versioned(request, self.latest_versions)

    def latest_versions(self) -> dict[str, str]:
        """The latest version of each group of registered sources, among those that
        completed a sync (`service.index.versions`): what a search without a `version`
        reads of each group. Read again after `LATEST_RECHECK_SECONDS`."""
        return self._latest.get()

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
        from service.query.reading import read_section

        return read_section(
            self.store,
            source,
            section,
            max_tokens=max_tokens,
            offset=offset,
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
        from service.query.reading import read_document

        return read_document(
            self.store, source, max_tokens=max_tokens, offset=offset, continuation=continuation
        )

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
        from service.conversations import Conversation

        conversation = Conversation.new(owner)
        self.conversations.create(conversation)
        return conversation

    def converse(self, conversation: Conversation, question: str) -> tuple[Conversation, Answer]:
        """Ask `question` in `conversation`: rewritten into a self-contained query from the
        earlier turns (`service.query.rewrite`), answered like `ask`; the turn is stored
        (the last `conversation_max_turns` are kept). Returns the updated conversation."""
        from service.conversations import Turn

        rewrite = self.rewriter.rewrite(conversation.queries, question)
        answer = self.ask(rewrite.query)
        turn = Turn.answered(question, rewrite, answer)
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
        from service.query.document_summary import indexed_document

        record, chunks = indexed_document(self.store, source)
        return self.document_summarizer.summarize(record, chunks, style=style)

    def delete_source(self, source: str, *, wait: float = 0.0) -> tuple[int, int]:
        """Remove a source's originals and summaries; returns (originals, summaries) deleted.

        Its record is marked first, so a delete stopped part-way is finished by the next
        ingest (`service.ingest.delete`). It holds the source as an ingest does: while an
        ingest of it runs (after waiting up to `wait` seconds), `SourceBusyError`."""
        from service.ingest.delete import delete_source
        from service.ingest.locks import holding

        if not self.store.exists():
            return 0, 0
        busy = (
            f"{source} is being ingested or deleted by another process; try again once that is done"
        )
        seconds = self.settings.ingest.lock_seconds
        with holding(self.store.leases, source, seconds=seconds, busy=busy, wait=wait):
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
        from service.sources.registered import sync_registered

        synced = sync_registered(self, name, options=options, on_event=on_event)
        self._latest.forget()  # its version may be the latest of its group now
        return synced

    def relabel_source(self, source: str, *, version: str, group: str) -> int:
        """Give an indexed source's chunks, summaries and record another version label and
        group, in place (`service.ingest.relabel`); how many chunks were relabelled.
        Held as an ingest holds a source: `SourceBusyError` while one of it runs."""
        from service.ingest.locks import holding
        from service.ingest.relabel import relabel_source

        if not self.store.exists():
            return 0
        busy = f"{source} is being ingested or deleted by another process"
        seconds = self.settings.ingest.lock_seconds
        with holding(self.store.leases, source, seconds=seconds, busy=busy):
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
        from service.sources.registered import edit_registered

        source = edit_registered(self, name, interval=interval, version=version, group=group)
        self._latest.forget()  # its group's latest version may be another now
        return source

    def remove_registered(self, name: str, *, keep_documents: bool = False) -> int:
        """Forget the source registered as `name` and, unless `keep_documents`, remove the
        pages its syncs indexed; returns how many pages were removed from the index.
        Refused (`SourceBusyError`) while a sync of it runs; `SourceNotFoundError` when no
        source is registered as `name`."""
        from service.sources.registered import remove_registered

        removed = remove_registered(self, name, keep_documents=keep_documents)
        self._latest.forget()
        return removed

    def stats(self) -> dict[str, object]:
        """Collection counts and the embedding model the index was built with."""
        if not self.store.exists():
            return {"originals": 0, "summaries": 0, "sources": 0}
        return self.store.stats()

    def _check_embedding(self) -> None:
        self.store.check_embedding(embedding_model=self.embedder.model)
