"""Rework the stored index without ingesting its sources again, as the settings say:
regenerate summaries (`service.ingest.resummarize`), apply the summary checks again
(`service.ingest.attach`), copy into collections embedded with another model
(`service.ingest.reindex`). What `synopsis resummarize`, `reattach` and `reindex` run.
"""

from __future__ import annotations

from collections.abc import Callable

import weaviate

from service.errors import StoreError
from service.index.store import Store
from service.ingest.attach import ReattachReport, reattach, upgrade_context
from service.ingest.quality import QualityThresholds
from service.ingest.reindex import ReindexReport, reindex
from service.ingest.resummarize import ResummarizeReport, resummarize
from service.ingest.summarize import Summarizer
from service.models.embed import Embedder
from service.settings import Settings

__all__ = ["reattach_stored", "reindex_from", "resummarize_stored"]

_NOTHING_INDEXED = "nothing is indexed yet (see `synopsis ingest`)"


def resummarize_stored(
    store: Store,
    summarizer: Summarizer,
    embedder: Embedder,
    settings: Settings,
    *,
    kind: str | None,
    on_progress: Callable[[int, int], None] | None = None,
) -> ResummarizeReport:
    """Regenerate the stored summaries of `kind` (all when None), in place."""
    if not store.exists():
        raise StoreError(_NOTHING_INDEXED)
    return resummarize(
        store,
        summarizer,
        embedder,
        kind=kind,
        min_similarity=settings.summaries.min_similarity,
        on_progress=on_progress,
    )


def reattach_stored(store: Store, embedder: Embedder, settings: Settings) -> ReattachReport:
    """Apply the summary-similarity threshold and, with the guard on, the faithfulness
    check to every stored summary again; chunks without `context` vectors get them."""
    if not store.exists():
        raise StoreError(_NOTHING_INDEXED)
    store.check_embedding(embedding_model=embedder.model)
    threshold = settings.summaries.min_similarity
    upgrade_context(store, embedder=embedder, min_similarity=threshold)
    guard = QualityThresholds.from_settings(settings) if settings.guard.enabled else None
    return reattach(store, embedder=embedder, min_similarity=threshold, guard=guard)


def reindex_from(
    client: weaviate.WeaviateClient,
    from_prefix: str,
    store: Store,
    embedder: Embedder,
    settings: Settings,
    *,
    on_progress: Callable[[str], None] | None = None,
) -> ReindexReport:
    """Copy the collections named with `from_prefix` into `store` (the configured ones),
    embedded by `embedder`; `StoreError` when they are the same or there are none."""
    if from_prefix == settings.external.collection_prefix:
        raise StoreError(
            "reindex copies into new collections: set SYNOPSIS_COLLECTION_PREFIX to "
            f"another prefix than {from_prefix!r}"
        )
    source = Store(client, prefix=from_prefix)
    if not source.exists():
        raise StoreError(f"there are no collections with prefix {from_prefix!r} to copy")
    return reindex(
        source,
        store,
        embedder,
        max_tokens=settings.ingest.max_tokens,
        min_similarity=settings.summaries.min_similarity,
        on_progress=on_progress,
    )
