"""Hybrid search (BM25 + vector) over the chunks and over the summaries."""

from __future__ import annotations

from typing import Any

from weaviate.classes.query import Filter, HybridFusion, MetadataQuery, TargetVectors
from weaviate.collections import Collection

from service.index import rows
from service.index.access import IndexAccess, store_errors
from service.index.queries import (
    CHUNK_KEYWORD_PROPERTIES,
    ORIGINAL_HIT_PROPERTIES,
    HybridQuery,
    Match,
    SearchFilters,
    SummaryUse,
    like_prefix,
)
from service.index.records import CONTENT_VECTOR
from service.index.versions import ALL_VERSIONS, VERSION, VERSION_GROUP

__all__ = ["HybridSearch"]


class HybridSearch(IndexAccess):
    """Runs `HybridQuery`s: over the chunks (with their summaries as context) or the
    summaries."""

    def search_originals(self, query: HybridQuery, *, use: SummaryUse | None) -> list[Match]:
        """Hybrid over the chunks: by their own text and vector alone (`use` None), or
        with their summaries as `use` says: one of the summary's vectors joins the chunk's
        (`TargetVectors.manual_weights`), and its text joins BM25 at its boost."""
        target: Any = CONTENT_VECTOR
        keywords = list(CHUNK_KEYWORD_PROPERTIES)
        if use is not None:
            if use.weight >= 1.0:
                target = use.vector
            elif use.weight > 0:
                target = TargetVectors.manual_weights(
                    {CONTENT_VECTOR: 1.0 - use.weight, use.vector: use.weight}
                )
            keywords = use.keyword_properties()
        return self._hybrid(
            self.originals,
            query,
            target=target,
            query_properties=keywords,
            return_properties=ORIGINAL_HIT_PROPERTIES,
        )

    def search_summaries(self, query: HybridQuery) -> list[Match]:
        """Hybrid over the summaries (each match's properties name its `original_id`)."""
        return self._hybrid(
            self.summaries,
            query,
            target=None,
            query_properties=["summary", "headers", "identifiers"],
            # source and headers: for `SearchFilters.admits`
            return_properties=["summary", "original_id", "kind", "model", "source", "headers"],
        )

    def _hybrid(
        self,
        collection: Collection[Any, Any],
        query: HybridQuery,
        *,
        target: Any,
        query_properties: list[str],
        return_properties: list[str],
    ) -> list[Match]:
        if query.filters.matches_nothing():
            return []
        exact = query.filters.needs_exact_check()
        with store_errors(f"search in {collection.name}"):
            result = collection.query.hybrid(
                query.keywords,
                vector=query.vector,
                alpha=query.alpha,
                fusion_type=HybridFusion.RANKED if query.ranked else HybridFusion.RELATIVE_SCORE,
                target_vector=target,
                query_properties=query_properties,
                filters=_filters(query.filters),
                limit=query.limit,
                include_vector=query.with_vectors,
                return_properties=return_properties,
                return_metadata=MetadataQuery(score=True, explain_score=query.explain),
            )
        return [
            rows.match(obj)
            for obj in result.objects
            if not exact or query.filters.admits(obj.properties)
        ]


def _filters(filters: SearchFilters) -> Any:
    parts: list[Any] = []
    if filters.source:
        parts.append(Filter.by_property("source").equal(filters.source))
    if filters.source_prefix:
        parts.append(Filter.by_property("source").like(like_prefix(filters.source_prefix)))
    if filters.header_prefix:
        parts.append(Filter.by_property("header_path").like(like_prefix(filters.header_prefix)))
    if filters.title:
        parts.append(Filter.by_property("title").equal(filters.title))
    parts.extend(_version_filters(filters))
    return Filter.all_of(parts) if parts else None


def _version_filters(filters: SearchFilters) -> list[Any]:
    """`SearchFilters.admits_version` as Weaviate filters. `not_equal` admits an object
    without the property (written before chunks kept their version): no group."""
    if filters.version == ALL_VERSIONS:
        return []
    if filters.version is not None:
        return [Filter.by_property(VERSION).equal(filters.version)]
    return [
        Filter.any_of(
            [
                Filter.by_property(VERSION_GROUP).not_equal(group),
                Filter.by_property(VERSION).equal(version),
            ]
        )
        for group, version in filters.latest
    ]
