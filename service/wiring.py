"""What the facade (`service.synopsis.Synopsis`) builds from the settings: the embedder when
it opens, and, on first use, the models and the stores only some commands need.

Each builder imports what it builds when it is called: a search must not pay for the chat
model, the loaders or the PDF stack (docs/benchmarks.md), so `Synopsis` calls these from
properties that build once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import weaviate

from service.index.replication import Replication
from service.models.embed import Embedder, ollama_embeddings
from service.settings import Settings

if TYPE_CHECKING:
    from service.conversations import ConversationStore
    from service.index.store import Store
    from service.ingest.pipeline import Ingestor
    from service.ingest.report import IngestEvent
    from service.ingest.summarize import Summarizer
    from service.query.answer import Answerer
    from service.query.document_summary import DocumentSummarizer
    from service.query.rewrite import QueryRewriter
    from service.sources import SourceRegistry

__all__ = [
    "answerer",
    "conversation_store",
    "document_summarizer",
    "embedder",
    "ingestor",
    "rewriter",
    "source_registry",
    "summarizer",
]


def embedder(settings: Settings) -> Embedder:
    """The configured embedding model behind Ollama, with its batch sizes."""
    return Embedder(
        ollama_embeddings(settings),
        model=settings.models.embedding_identity,
        batch_size=settings.models.embedding_batch_size,
        query_batch_size=settings.models.query_embedding_batch_size,
    )


def summarizer(settings: Settings) -> Summarizer:
    """The summarizer: the chat model, its bounds and retries, and the guard when it is on."""
    from service.ingest.quality import QualityThresholds
    from service.ingest.summarize import Summarizer
    from service.models.chat import chat_model

    return Summarizer(
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


def answerer(settings: Settings) -> Answerer:
    """The answerer: the answer model and the answer settings' checks."""
    from service.models.chat import answer_model
    from service.query.answer import Answerer

    return Answerer(
        answer_model(settings),
        model_name=settings.models.resolved_answer_model,
        term_check=settings.answers.term_check,
        min_support=settings.answers.min_support,
        quote_on_refusal=settings.answers.quote_on_refusal,
    )


def document_summarizer(settings: Settings) -> DocumentSummarizer:
    """The document summarizer: the answer model, its cache under the data directory."""
    from service.models.chat import answer_model
    from service.query.document_summary import DocumentSummarizer

    return DocumentSummarizer(
        answer_model(settings),
        model_name=settings.models.resolved_answer_model,
        cache_dir=settings.stack.data_dir / "document-summaries",
        min_support=settings.answers.min_support,
    )


def rewriter(settings: Settings) -> QueryRewriter:
    """The follow-up rewriter: the answer model's when the rewrite method is "model"."""
    from service.models.chat import answer_model
    from service.query.rewrite import QueryRewriter

    method = settings.conversations.rewrite
    return QueryRewriter(
        answer_model(settings) if method == "model" else None,
        model_name=settings.models.resolved_answer_model,
        method=method,
        context_turns=settings.conversations.context_turns,
    )


def conversation_store(client: weaviate.WeaviateClient, settings: Settings) -> ConversationStore:
    """The durable conversations (their collection is created on first use)."""
    from service.conversations import ConversationStore

    return ConversationStore(
        client,
        prefix=settings.external.collection_prefix,
        replication=Replication.from_settings(settings),
        per_owner=settings.conversations.per_key,
    )


def source_registry(client: weaviate.WeaviateClient, settings: Settings) -> SourceRegistry:
    """The registered sources (their collection is created on first use)."""
    from service.sources import SourceRegistry

    return SourceRegistry(
        client,
        prefix=settings.external.collection_prefix,
        replication=Replication.from_settings(settings),
    )


def ingestor(
    settings: Settings,
    *,
    store: Store,
    summarizer: Summarizer,
    embedder: Embedder,
    on_event: Callable[[IngestEvent], None] | None,
) -> Ingestor:
    """An ingest into `store` with the settings' bounds and its sources' leases."""
    from service.ingest.pipeline import Ingestor

    return Ingestor(
        store=store,
        summarizer=summarizer,
        embedder=embedder,
        max_tokens=settings.ingest.max_tokens,
        max_chunks=settings.ingest.max_chunks_per_source,
        min_similarity=settings.summaries.min_similarity,
        on_event=on_event,
        leases=store.leases,
        lock_seconds=settings.ingest.lock_seconds,
        lock_wait_seconds=settings.ingest.lock_wait_seconds,
        exclusive_model_calls=settings.ingest.exclusive_model_calls,
    )
