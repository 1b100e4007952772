"""Search: hybrid (BM25 + vector) over summaries that returns the originals.

Modes:

- `summaries`: hybrid over SummarizedDocuments, then the originals they summarize (the seed;
  fetched by `original_id`, which measured faster than resolving `originalDocument`).
- `originals`: hybrid over the chunks themselves.
- `both`: both lists, each hit labelled with its leg.
- `fused`: reciprocal-rank fusion of the two legs, de-duplicated by original.

The default is `originals` (each hit still carries its chunk's summary): on the Python
tutorial with SmolLM2-135M summaries it scored best of all modes (MRR@10 0.822 against
0.743 for `fused` and 0.643 for `summaries`; docs/eval.md). `synopsis eval` measures
every mode on a question set; re-decide with it, especially with a larger summary model.

Scores: Weaviate's hybrid score (`relativeScore` fusion) is normalized per query — the
best hit of any query scores about 1 — so it ranks hits within one query but cannot
tell a relevant hit from an irrelevant one across queries. `max_vector_distance` is the
absolute gate: a hit whose matched object (summary or chunk) is farther than that
cosine distance from the query embedding is dropped.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from weaviate.classes.query import Filter, HybridFusion, MetadataQuery
from weaviate.collections.classes.filters import _Filters

from service.errors import SearchError, StoreError
from service.index.identifiers import extract_identifiers
from service.index.store import Store
from service.models.embed import Embedder

__all__ = ["MODES", "Hit", "SearchRequest", "Searcher"]

Mode = Literal["summaries", "originals", "both", "fused"]
MODES: tuple[Mode, ...] = ("summaries", "originals", "both", "fused")
_RRF_K = 60
_ORIGINAL_PROPERTIES = ["content", "source", "title", "headers", "chunk_index"]


@dataclass(frozen=True, kw_only=True)
class SearchRequest:
    """One search: the query, how many originals to return, and how to find them."""

    query: str
    k: int = 5
    mode: Mode = "originals"
    alpha: float = 0.5
    fusion: Literal["relative", "ranked"] = "relative"
    source: str | None = None
    source_prefix: str | None = None
    header_prefix: str | None = None
    title: str | None = None
    max_vector_distance: float = 0.0  # 0: no gate
    explain: bool = False

    @property
    def needs_distances(self) -> bool:
        """Distances cost a vector per hit: fetched only for the gate or an explanation."""
        return self.max_vector_distance > 0 or self.explain

    def validate(self) -> None:
        """Raise SearchError for a request that cannot be run."""
        if not self.query.strip():
            raise SearchError("the query is empty")
        if not 1 <= self.k <= 100:
            raise SearchError(f"k must be between 1 and 100, not {self.k}")
        if not 0.0 <= self.alpha <= 1.0:
            raise SearchError(f"alpha must be between 0 and 1, not {self.alpha}")
        if self.mode not in MODES:
            raise SearchError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.fusion not in ("relative", "ranked"):
            raise SearchError(f"fusion must be 'relative' or 'ranked', not {self.fusion!r}")
        if not 0.0 <= self.max_vector_distance <= 2.0:
            raise SearchError("max_vector_distance must be between 0 and 2 (cosine distance)")


@dataclass(frozen=True, kw_only=True)
class Hit:
    """One original returned by a search, with the summary that matched it (if any)."""

    id: str
    source: str
    title: str
    headers: list[str]
    chunk_index: int
    content: str
    summary: str | None
    score: float
    leg: str  # "summaries", "originals" or "fused"
    distance: float | None = None  # cosine distance of the matched object to the query
    scores: dict[str, float] = field(default_factory=dict)  # per-leg scores (explain)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (per-leg scores only when present)."""
        data: dict[str, Any] = {
            "id": self.id,
            "source": self.source,
            "title": self.title,
            "headers": self.headers,
            "chunk_index": self.chunk_index,
            "content": self.content,
            "summary": self.summary,
            "score": round(self.score, 6),
            "leg": self.leg,
        }
        if self.distance is not None:
            data["distance"] = round(self.distance, 6)
        if self.scores:
            data["scores"] = {leg: round(value, 6) for leg, value in self.scores.items()}
        return data


class Searcher:
    """Runs searches against one store with one embedder."""

    def __init__(self, store: Store, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="synopsis-search")

    def close(self) -> None:
        self._pool.shutdown(wait=False)

    def search(self, request: SearchRequest) -> list[Hit]:
        """Run `request` and return its hits, best first."""
        request.validate()
        if not self.store.exists():
            return []
        vector = self.embedder.embed_query(request.query)
        return self._search_with_vector(request, vector)

    async def asearch(self, request: SearchRequest) -> list[Hit]:
        """Async `search` (Weaviate calls run in worker threads)."""
        request.validate()
        if not await asyncio.to_thread(self.store.exists):
            return []
        vector = await self.embedder.aembed_query(request.query)
        return await asyncio.to_thread(self._search_with_vector, request, vector)

    def _search_with_vector(self, request: SearchRequest, vector: list[float]) -> list[Hit]:
        if request.mode == "summaries":
            return self._summary_leg(request, vector)[: request.k]
        if request.mode == "originals":
            # Alone and ungated, the chunks' leg needs no spare candidates.
            limit = request.k * 3 if request.max_vector_distance else request.k
            return self._attach_summaries(self._original_leg(request, vector, limit)[: request.k])
        summaries = self._pool.submit(self._summary_leg, request, vector)
        originals = self._original_leg(request, vector, request.k * 3)
        summary_hits = summaries.result()
        if request.mode == "both":
            return summary_hits[: request.k] + originals[: request.k]
        return self._attach_summaries(_fuse(summary_hits, originals, request))

    def _attach_summaries(self, hits: list[Hit]) -> list[Hit]:
        """Give each hit found through its chunk the stored summary of that chunk."""
        missing = [hit.id for hit in hits if hit.summary is None]
        if not missing:
            return hits
        try:
            result = self.store.summaries.query.fetch_objects(
                filters=Filter.by_property("original_id").contains_any(missing),
                limit=len(missing) * 2,
                return_properties=["summary", "original_id"],
            )
        except Exception as exc:
            raise StoreError(f"reading the summaries of the hits failed: {exc}") from exc
        summaries = {
            str(obj.properties["original_id"]): str(obj.properties.get("summary") or "")
            for obj in result.objects
        }
        return [
            dataclasses.replace(hit, summary=summaries[hit.id])
            if hit.summary is None and hit.id in summaries
            else hit
            for hit in hits
        ]

    def _summary_leg(self, request: SearchRequest, vector: list[float]) -> list[Hit]:
        # The originals are fetched by id in a second query rather than through the
        # `originalDocument` cross-reference: measured faster on the tutorial index
        # (docs/benchmarks.md, "Reference resolution"). The reference stays in the schema.
        result = _hybrid(
            self.store.summaries,
            request,
            vector,
            searched="summary",
            limit=request.k * 3,  # spare candidates: the gate and de-duplication drop some
            query_properties=["summary", "headers", "identifiers"],
            return_properties=["summary", "original_id"],
        )
        matched: list[tuple[str, Any, float | None]] = []  # (original id, summary, distance)
        seen: set[str] = set()
        for obj in result.objects:
            original_id = str(obj.properties.get("original_id") or "")
            if not original_id or original_id in seen:
                continue
            distance = (
                _distance(vector, obj.vector.get("default")) if request.needs_distances else None
            )
            if _gated(request, distance):
                continue
            seen.add(original_id)
            matched.append((original_id, obj, distance))
        originals = self._originals_by_id([original_id for original_id, _, _ in matched])
        hits: list[Hit] = []
        for original_id, obj, distance in matched:
            if original_id not in originals:
                continue  # a summary whose original is gone is never returned
            score = float(obj.metadata.score or 0.0)
            hits.append(
                _hit(
                    original_id,
                    originals[original_id],
                    summary=str(obj.properties.get("summary") or ""),
                    score=score,
                    leg="summaries",
                    distance=distance,
                    scores={"summaries": score} if request.explain else {},
                )
            )
        return hits

    def _originals_by_id(self, ids: list[str]) -> dict[str, Any]:
        """The properties of the originals with these ids (missing ones are absent)."""
        if not ids:
            return {}
        try:
            result = self.store.originals.query.fetch_objects(
                filters=Filter.by_id().contains_any(ids),
                limit=len(ids),
                return_properties=_ORIGINAL_PROPERTIES,
            )
        except Exception as exc:
            raise StoreError(f"reading the originals of the hits failed: {exc}") from exc
        return {str(obj.uuid): obj.properties for obj in result.objects}

    def _original_leg(self, request: SearchRequest, vector: list[float], limit: int) -> list[Hit]:
        result = _hybrid(
            self.store.originals,
            request,
            vector,
            searched="original",
            limit=limit,
            query_properties=["content", "headers", "identifiers"],
            return_properties=_ORIGINAL_PROPERTIES,
        )
        hits: list[Hit] = []
        for obj in result.objects:
            distance = (
                _distance(vector, obj.vector.get("default")) if request.needs_distances else None
            )
            if _gated(request, distance):
                continue
            score = float(obj.metadata.score or 0.0)
            hits.append(
                _hit(
                    str(obj.uuid),
                    obj.properties,
                    summary=None,
                    score=score,
                    leg="originals",
                    distance=distance,
                    scores={"originals": score} if request.explain else {},
                )
            )
        return hits


def _hybrid(
    collection: Any,
    request: SearchRequest,
    vector: list[float],
    *,
    searched: str,
    limit: int,
    query_properties: list[str],
    return_properties: list[str],
) -> Any:
    """One hybrid query of a leg, `limit` candidates."""
    try:
        return collection.query.hybrid(
            _keyword_query(request.query),
            vector=vector,
            alpha=request.alpha,
            fusion_type=_fusion(request),
            query_properties=query_properties,
            filters=_filters(request),
            limit=limit,
            include_vector=request.needs_distances,
            return_properties=return_properties,
            return_metadata=MetadataQuery(score=True, explain_score=request.explain),
        )
    except Exception as exc:
        raise StoreError(f"{searched} search failed: {exc}") from exc


def _fuse(summary_hits: list[Hit], original_hits: list[Hit], request: SearchRequest) -> list[Hit]:
    """Reciprocal-rank fusion of the two legs, one entry per original."""
    best: dict[str, Hit] = {}  # the hit shown: the summary leg's when it has one
    rrf: dict[str, float] = {}
    leg_scores: dict[str, dict[str, float]] = {}
    distances: dict[str, float] = {}
    for leg, hits in (("summaries", summary_hits), ("originals", original_hits)):
        for rank, hit in enumerate(hits, start=1):
            best.setdefault(hit.id, hit)
            rrf[hit.id] = rrf.get(hit.id, 0.0) + 1.0 / (_RRF_K + rank)
            leg_scores.setdefault(hit.id, {})[leg] = hit.score
            if hit.distance is not None:
                distances[hit.id] = min(distances.get(hit.id, hit.distance), hit.distance)
    ranked = sorted(rrf, key=lambda object_id: -rrf[object_id])[: request.k]
    return [
        dataclasses.replace(
            best[object_id],
            score=rrf[object_id],
            leg="fused",
            distance=distances.get(object_id),
            scores={**leg_scores[object_id], "rrf": rrf[object_id]} if request.explain else {},
        )
        for object_id in ranked
    ]


def _hit(
    object_id: str,
    properties: Any,
    *,
    summary: str | None,
    score: float,
    leg: str,
    distance: float | None,
    scores: dict[str, float],
) -> Hit:
    return Hit(
        id=object_id,
        source=str(properties.get("source") or ""),
        title=str(properties.get("title") or ""),
        headers=list(properties.get("headers") or []),
        chunk_index=int(properties.get("chunk_index") or 0),
        content=str(properties.get("content") or ""),
        summary=summary,
        score=score,
        leg=leg,
        distance=distance,
        scores=scores,
    )


def _keyword_query(query: str) -> str:
    """The BM25 query: the text plus its identifiers without surrounding punctuation."""
    names = extract_identifiers(query)
    return " ".join([query, *names]) if names else query


def _fusion(request: SearchRequest) -> HybridFusion:
    return HybridFusion.RANKED if request.fusion == "ranked" else HybridFusion.RELATIVE_SCORE


def _filters(request: SearchRequest) -> _Filters | None:
    parts: list[_Filters] = []
    if request.source:
        parts.append(Filter.by_property("source").equal(request.source))
    if request.source_prefix:
        parts.append(Filter.by_property("source").like(request.source_prefix + "*"))
    if request.header_prefix:
        parts.append(Filter.by_property("header_path").like(request.header_prefix + "*"))
    if request.title:
        parts.append(Filter.by_property("title").equal(request.title))
    if not parts:
        return None
    return Filter.all_of(parts)


def _distance(query: Sequence[float], vector: Any) -> float | None:
    """Cosine distance between the query and a stored vector (None if not returned)."""
    if not vector:
        return None
    dot = sum(a * b for a, b in zip(query, vector, strict=False))
    norms = math.sqrt(sum(a * a for a in query)) * math.sqrt(sum(b * b for b in vector))
    return 1.0 - dot / norms if norms else 1.0


def _gated(request: SearchRequest, distance: float | None) -> bool:
    return bool(request.max_vector_distance) and (
        distance is None or distance > request.max_vector_distance
    )
