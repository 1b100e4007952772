"""Search: hybrid (BM25 + vector) over the chunks and their summaries; originals come back.

Modes:

- `joint` (default): hybrid over the chunks, each scored together with its summary — the
  vector part reads the chunk's `context` vector (its summary and its text embedded
  together; `summary_vector` and `summary_weight` choose another vector or a share of the
  chunk's own), and BM25 reads the chunk alone (`summary_keyword_weight` 0; above 0 it
  also reads the summary's words at that weight). The summary is the chunk's context, not
  a competitor.
- `summaries`: hybrid over SummarizedDocuments, then the originals they summarize (fetched
  by `original_id`, which measured faster than resolving `originalDocument`).
- `originals`: hybrid over the chunks alone (their `content` vector and text): the same
  search with the summaries switched off.
- `both`: the summaries' and the originals' lists, each hit labelled with its leg.
- `fused`: reciprocal-rank fusion of those two legs, de-duplicated by original.

docs/eval.md has the measurements behind the default and the weights.

Scores: Weaviate's hybrid score (`relativeScore` fusion) is normalized per query — the
best hit of any query scores about 1 — so it ranks hits within one query but cannot
tell a relevant hit from an irrelevant one across queries. `max_vector_distance` is the
absolute gate: a hit whose matched object (the summary in the `summaries` leg, else the
chunk itself, also in `joint` mode) is farther than that cosine distance from the query
embedding is dropped.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from service.errors import InvalidSourceError, SearchError
from service.index.identifiers import extract_identifiers
from service.index.interfaces import SearchStore
from service.index.queries import (
    DEFAULT_SUMMARY_USE,
    HybridQuery,
    Match,
    SearchFilters,
    SummaryUse,
)
from service.index.records import CONTENT_VECTOR, ShownSummary, SummaryVector
from service.index.rows import attached_summary
from service.index.versions import ALL_VERSIONS, check_version
from service.models.embed import Embedder
from service.query.hits import Hit
from service.query.modes import DEFAULT_MODE, MODES, Mode
from service.settings import MAX_K

if TYPE_CHECKING:
    from service.settings import Settings

__all__ = ["MODES", "Hit", "Mode", "SearchRequest", "Searcher", "search_request", "versioned"]

_RRF_K = 60

#: `joint` on an index built before chunks had a `context` vector (until `synopsis
#: reattach` or the next ingest adds them): the summary's own vector at half weight and
#: its words in BM25, the default measured before (docs/eval.md).
LEGACY_SUMMARY_USE = SummaryUse(vector="summary", weight=0.5, keyword_weight=1.0)


@dataclass(frozen=True, kw_only=True)
class SearchRequest:
    """One search: the query, how many originals to return, and how to find them."""

    query: str
    k: int = 5
    mode: Mode = DEFAULT_MODE
    alpha: float = 0.5
    fusion: Literal["relative", "ranked"] = "relative"
    # `joint` mode: which vector of each chunk's summary is read (`context`: summary and
    # chunk embedded together; `summary`: the summary alone), its share of the vector
    # score, and the weight of the summary's words in BM25 against the chunk's (both 0:
    # the `originals` mode).
    summary_vector: SummaryVector = DEFAULT_SUMMARY_USE.vector
    summary_weight: float = DEFAULT_SUMMARY_USE.weight
    summary_keyword_weight: float = DEFAULT_SUMMARY_USE.keyword_weight
    source: str | None = None
    source_prefix: str | None = None
    header_prefix: str | None = None
    title: str | None = None
    max_vector_distance: float = 0.0  # 0: no gate
    explain: bool = False
    # The version label to read (`*`: every version); None: the latest of each group of
    # versions, as `latest` (group, version) pairs say (`Synopsis.search` fills them from
    # the registered sources; `service.index.versions`).
    version: str | None = None
    latest: tuple[tuple[str, str], ...] = ()

    @property
    def needs_distances(self) -> bool:
        """Distances cost a vector per hit: fetched only for the gate or an explanation."""
        return self.max_vector_distance > 0 or self.explain

    def validate(self) -> None:
        """Raise SearchError for a request that cannot be run."""
        if not self.query.strip():
            raise SearchError("the query is empty")
        if not 1 <= self.k <= MAX_K:
            raise SearchError(f"k must be between 1 and {MAX_K}, not {self.k}")
        if not 0.0 <= self.alpha <= 1.0:
            raise SearchError(f"alpha must be between 0 and 1, not {self.alpha}")
        if not 0.0 <= self.summary_weight <= 1.0:
            raise SearchError(f"summary_weight must be between 0 and 1, not {self.summary_weight}")
        if not 0.0 <= self.summary_keyword_weight <= 1.0:
            raise SearchError(
                f"summary_keyword_weight must be between 0 and 1, not {self.summary_keyword_weight}"
            )
        if self.mode not in MODES:
            raise SearchError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.summary_vector not in ("context", "summary"):
            raise SearchError(
                f"summary_vector must be 'context' or 'summary', not {self.summary_vector!r}"
            )
        if self.fusion not in ("relative", "ranked"):
            raise SearchError(f"fusion must be 'relative' or 'ranked', not {self.fusion!r}")
        if not 0.0 <= self.max_vector_distance <= 2.0:
            raise SearchError("max_vector_distance must be between 0 and 2 (cosine distance)")
        if self.version is not None and self.version != ALL_VERSIONS:
            try:
                check_version(self.version)
            except InvalidSourceError as error:
                raise SearchError(str(error)) from error

    def summary_use(self) -> SummaryUse:
        """How `joint` mode reads each chunk's summary."""
        return SummaryUse(
            vector=self.summary_vector,
            weight=self.summary_weight,
            keyword_weight=self.summary_keyword_weight,
        )

    def hybrid(self, vector: list[float], *, limit: int) -> HybridQuery:
        """The store query of one leg of this request."""
        return HybridQuery(
            keywords=_keyword_query(self.query),
            vector=vector,
            alpha=self.alpha,
            limit=limit,
            filters=SearchFilters(
                source=self.source,
                source_prefix=self.source_prefix,
                header_prefix=self.header_prefix,
                title=self.title,
                version=self.version,
                latest=self.latest,
            ),
            ranked=self.fusion == "ranked",
            with_vectors=self.needs_distances,
            explain=self.explain,
        )


def search_request(settings: Settings, query: str, **overrides: Any) -> SearchRequest:
    """A request for `query` with the settings' defaults; an override of None keeps the
    default (so optional CLI options and API fields pass straight through)."""
    defaults: dict[str, Any] = {
        "k": settings.search.k,
        "mode": settings.search.mode,
        "alpha": settings.search.alpha,
        "summary_vector": settings.search.summary_vector,
        "summary_weight": settings.search.summary_weight,
        "summary_keyword_weight": settings.search.summary_keyword_weight,
        "max_vector_distance": settings.search.max_vector_distance,
    }
    given = {name: value for name, value in overrides.items() if value is not None}
    if given.get("version") == "":
        del given["version"]  # no label: the default, the latest versions
    return SearchRequest(query=query, **{**defaults, **given})


def versioned(request: SearchRequest, latest: Callable[[], Mapping[str, str]]) -> SearchRequest:
    """`request` with the latest versions to read (`latest()`: group → version) when it
    names no version (an empty label names none)."""
    if request.version:
        return request
    request = dataclasses.replace(request, version=None)
    found = latest()
    if not found:
        return request
    return dataclasses.replace(request, latest=tuple(sorted(found.items())))


class Searcher:
    """Runs searches against one store with one embedder."""

    def __init__(self, store: SearchStore, embedder: Embedder) -> None:
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
        if request.mode in ("originals", "joint"):
            # Alone and ungated, the chunks' leg needs no spare candidates.
            limit = request.k * 3 if request.max_vector_distance else request.k
            hits = self._original_leg(request, vector, limit, joint=request.mode == "joint")
            return self._attach_summaries(hits[: request.k])
        summaries = self._pool.submit(self._summary_leg, request, vector)
        originals = self._original_leg(request, vector, request.k * 3, joint=False)
        summary_hits = summaries.result()
        if request.mode == "both":
            return summary_hits[: request.k] + originals[: request.k]
        return self._attach_summaries(_fuse(summary_hits, originals, request))

    def _attach_summaries(self, hits: list[Hit]) -> list[Hit]:
        """Give each hit found through its chunk the stored summary of that chunk (one
        filtered out, and the kind of one in an index that did not keep it on the chunk)."""
        missing = [hit.id for hit in hits if hit.summary is None or hit.summary_kind is None]
        if not missing:
            return hits
        summaries = self.store.summaries_of(missing)
        return [
            _with_summary(hit, summaries[hit.id])
            if hit.id in missing and hit.id in summaries
            else hit
            for hit in hits
        ]

    def _summary_leg(self, request: SearchRequest, vector: list[float]) -> list[Hit]:
        # Spare candidates: the gate and de-duplication drop some.
        found = self.store.search_summaries(request.hybrid(vector, limit=request.k * 3))
        matched: list[tuple[str, Match, float | None]] = []  # (original id, summary, distance)
        seen: set[str] = set()
        for match in found:
            original_id = str(match.properties.get("original_id") or "")
            if not original_id or original_id in seen:
                continue
            distance = (
                _distance(vector, match.vectors.get("default")) if request.needs_distances else None
            )
            if _gated(request, distance):
                continue
            seen.add(original_id)
            matched.append((original_id, match, distance))
        originals = self.store.hit_originals([original_id for original_id, _, _ in matched])
        return [
            _hit(
                original_id,
                originals[original_id],
                summary=ShownSummary.of(
                    str(match.properties.get("summary") or ""),
                    stored_kind=str(match.properties.get("kind") or "llm"),
                    model=str(match.properties.get("model") or ""),
                ),
                score=match.score,
                leg="summaries",
                distance=distance,
                scores={"summaries": match.score} if request.explain else {},
            )
            for original_id, match, distance in matched
            if original_id in originals  # a summary whose original is gone is never returned
        ]

    def _original_leg(
        self, request: SearchRequest, vector: list[float], limit: int, *, joint: bool
    ) -> list[Hit]:
        use = request.summary_use() if joint else None
        if use is not None and use.vector == "context" and not self.store.has_context_vectors():
            use = LEGACY_SUMMARY_USE
        found = self.store.search_originals(request.hybrid(vector, limit=limit), use=use)
        leg = "joint" if joint else "originals"
        hits: list[Hit] = []
        for match in found:
            # The gate judges the chunk itself: a short, generic summary sits closer to
            # any query than its chunk, so it would let unrelated questions through
            # (docs/eval.md: out-of-scope questions rejected 3/6 by the nearer vector,
            # 5/6 by the chunk's).
            distance = (
                _distance(vector, match.vectors.get(CONTENT_VECTOR))
                if request.needs_distances
                else None
            )
            if _gated(request, distance):
                continue
            hits.append(
                _hit(
                    match.id,
                    match.properties,
                    # The attached summary comes with the chunk; only a filtered-out one
                    # is fetched from SummarizedDocuments (`_attach_summaries`).
                    summary=attached_summary(match.properties),
                    score=match.score,
                    leg=leg,
                    distance=distance,
                    scores={leg: match.score} if request.explain else {},
                )
            )
        return hits


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


def _with_summary(hit: Hit, summary: ShownSummary) -> Hit:
    return dataclasses.replace(
        hit, summary=summary.text, summary_kind=summary.kind, summary_model=summary.model
    )


def _hit(
    object_id: str,
    properties: dict[str, Any],
    *,
    summary: ShownSummary | None,
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
        summary=summary.text if summary else None,
        summary_kind=summary.kind if summary else None,
        summary_model=summary.model if summary else None,
        score=score,
        leg=leg,
        distance=distance,
        scores=scores,
        page_start=_page(properties.get("page_start")),
        page_end=_page(properties.get("page_end")),
        anchor=str(properties.get("anchor") or ""),
        version=str(properties.get("version") or "") or None,
        indexed_at=_date(properties.get("indexed_at")),
    )


def _date(value: Any) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, str) and value:
        return dt.datetime.fromisoformat(value)
    return None


def _page(value: Any) -> int | None:
    return None if value is None else int(value)


def _keyword_query(query: str) -> str:
    """The BM25 query: the text plus its identifiers without surrounding punctuation."""
    names = extract_identifiers(query)
    return " ".join([query, *names]) if names else query


def _distance(query: Sequence[float], vector: Sequence[float] | None) -> float | None:
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
