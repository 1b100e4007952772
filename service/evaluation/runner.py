"""Run a question set through search configurations and score rankings, gate and `ask`.

Rankings are scored without the gate, so the gate distance does not change them. For
the absolute relevance gate (`max_vector_distance`), run separately with the gate on:
the share of out-of-scope questions for which it leaves no hit (good) and of in-scope
questions it empties (bad). For `ask`'s named-term check (service/query/answer.py):
with the first `answer_k` hits of each ranking as the passages, the share of questions
`ask` would answer "I don't know" because the question names something no passage
mentions (good out of scope, bad in scope).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from service.errors import SearchError
from service.evaluation.metrics import (
    cutoffs,
    first_relevant_rank,
    mrr_at,
    recall_at,
    share,
    unique_hits,
)
from service.evaluation.questions import Query
from service.index.queries import SummaryUse
from service.query.answer import missing_terms
from service.query.modes import Mode
from service.query.search import Hit, SearchRequest

__all__ = [
    "ABLATIONS",
    "BASELINES",
    "RUNS",
    "EvaluationReport",
    "GatePoint",
    "ModeMetrics",
    "QueryResult",
    "Run",
    "Searcher",
    "choose_gate",
    "evaluate",
]


class Searcher(Protocol):
    """What the evaluation needs: `Synopsis` or anything with its `search`."""

    def search(self, request: SearchRequest) -> list[Hit]: ...  # pragma: no cover


@dataclass(frozen=True, kw_only=True)
class Run:
    """One configuration scored: a search mode and its BM25/vector balance."""

    name: str
    mode: Mode
    alpha: float | None = None  # None: the settings' default alpha
    summary: SummaryUse | None = None  # `joint` mode; None: the settings' default
    description: str = ""


#: The Synopsis modes, at the configured alpha and summary weight.
RUNS: tuple[Run, ...] = (
    Run(name="summaries", mode="summaries", description="hybrid over summaries → originals"),
    Run(name="originals", mode="originals", description="hybrid over the chunks"),
    Run(name="both", mode="both", description="both lists, concatenated, de-duplicated"),
    Run(name="fused", mode="fused", description="reciprocal-rank fusion of the two legs"),
    Run(name="joint", mode="joint", description="hybrid over the chunks, each with its summary"),
)
#: Baselines over the originals: one leg of the hybrid each.
BASELINES: tuple[Run, ...] = (
    Run(name="bm25", mode="originals", alpha=0.0, description="BM25 only over the chunks"),
    Run(name="vector", mode="originals", alpha=1.0, description="vector only over the chunks"),
)
#: What each part of `joint` adds over the chunks alone (`originals`), and its weights.
ABLATIONS: tuple[Run, ...] = (
    Run(
        name="joint: summary vector only",
        mode="joint",
        summary=SummaryUse(vector="summary", weight=0.5, keyword_weight=0.0),
        description="the chunk's vector and its summary's (0.5 each); BM25 over the chunk",
    ),
    Run(
        name="joint: summary BM25 only",
        mode="joint",
        summary=SummaryUse(weight=0.0, keyword_weight=1.0),
        description="the chunk's vector only; BM25 over the chunk and its summary",
    ),
    Run(
        name="joint: summary vector + BM25",
        mode="joint",
        summary=SummaryUse(vector="summary", weight=0.5, keyword_weight=1.0),
        description="the summary's vector (0.5) and its text in BM25 (the previous default)",
    ),
    Run(
        name="joint: context vector only",
        mode="joint",
        summary=SummaryUse(vector="context", weight=1.0, keyword_weight=0.0),
        description="the context vector (summary and chunk embedded together); BM25 over the chunk",
    ),
    Run(
        name="joint: context, summary BM25 weight 1",
        mode="joint",
        summary=SummaryUse(vector="context", weight=1.0, keyword_weight=1.0),
        description="the context vector; the summary's words in BM25 as much as the chunk's",
    ),
    Run(
        name="joint: context weight 0.5",
        mode="joint",
        summary=SummaryUse(vector="context", weight=0.5, keyword_weight=0.5),
        description="the chunk's vector and the context vector, 0.5 each",
    ),
)


@dataclass(frozen=True, kw_only=True)
class QueryResult:
    """One question in one run: the rank of its first relevant hit and what came back."""

    run: str
    query: str
    in_scope: bool
    rank: int | None  # 1-based; None: no relevant hit in the list
    hits: tuple[str, ...]  # "source § header path" of each hit, in order
    gate_empty: bool | None = None  # with the gate on: nothing came back (None: no gate)
    # Named in the question, mentioned by none of the first answer_k hits (ask refuses).
    missing_terms: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dataclasses.asdict(self) | {
            "hits": list(self.hits),
            "missing_terms": list(self.missing_terms),
        }


@dataclass(frozen=True, kw_only=True)
class ModeMetrics:
    """The scores of one run."""

    run: str
    description: str
    in_scope: int
    out_of_scope: int
    recall: dict[int, float]  # cutoff → Recall@cutoff
    mrr: float  # MRR@k
    gate_rejects_out_of_scope: float | None = None  # share emptied by the gate (want 1)
    gate_empties_in_scope: float | None = None  # share emptied by the gate (want 0)
    terms_refuse_out_of_scope: float = 0.0  # share ask refuses by missing terms (want 1)
    terms_refuse_in_scope: float = 0.0  # share ask refuses by missing terms (want 0)
    # With the gate pass: the gate empties the list, or a name is missing (ask's checks).
    ask_refuses_out_of_scope: float | None = None
    ask_refuses_in_scope: float | None = None


@dataclass(frozen=True, kw_only=True)
class GatePoint:
    """The gate's trade-off at one distance, for one run."""

    run: str
    max_distance: float
    rejects_out_of_scope: float
    empties_in_scope: float


@dataclass(frozen=True, kw_only=True)
class EvaluationReport:
    """Everything one evaluation measured."""

    k: int
    alpha: float
    max_distance: float
    answer_k: int
    queries: int
    in_scope: int
    out_of_scope: int
    metrics: list[ModeMetrics]
    results: list[QueryResult]
    sweep: list[GatePoint] = field(default_factory=list)
    context: dict[str, str] = field(default_factory=dict)  # models, date, command, …

    @property
    def best(self) -> ModeMetrics:
        """The run with the highest MRR@k (ties: higher Recall@k, then listed order)."""
        k = max(self.metrics[0].recall)
        return max(self.metrics, key=lambda m: (round(m.mrr, 6), round(m.recall[k], 6)))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the whole report."""
        return {
            "k": self.k,
            "alpha": self.alpha,
            "max_distance": self.max_distance,
            "answer_k": self.answer_k,
            "queries": self.queries,
            "in_scope": self.in_scope,
            "out_of_scope": self.out_of_scope,
            "context": self.context,
            "metrics": [
                dataclasses.asdict(m) | {"recall": {str(n): v for n, v in m.recall.items()}}
                for m in self.metrics
            ],
            "sweep": [dataclasses.asdict(point) for point in self.sweep],
            "results": [result.to_dict() for result in self.results],
        }


def evaluate(
    searcher: Searcher,
    queries: Sequence[Query],
    *,
    k: int = 10,
    alpha: float = 0.5,
    summary: SummaryUse | None = None,
    max_distance: float = 0.0,
    answer_k: int = 5,
    sweep: Sequence[float] = (),
    runs: Sequence[Run] = RUNS + BASELINES,
    workers: int = 4,
    context: dict[str, str] | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> EvaluationReport:
    """Search every question in every run and score the rankings and the gate.

    Rankings come from searches without the gate. With `max_distance` > 0, every question
    is searched again with that gate; each distance of `sweep` is one more such pass.
    `workers` questions are searched at a time (the order of results does not depend on it).
    The named-term check looks at the first `answer_k` hits of each ranking.
    """
    if not 1 <= k <= 100:
        raise SearchError(f"k must be between 1 and 100, not {k}")
    in_scope = [query for query in queries if query.in_scope]
    out_of_scope = [query for query in queries if not query.in_scope]
    results: list[QueryResult] = []
    metrics: list[ModeMetrics] = []
    points: list[GatePoint] = []
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:

        def search_all(run: Run, distance: float) -> list[list[Hit]]:
            use = run.summary or summary or SummaryUse()
            template = SearchRequest(
                query="-",
                k=k,
                mode=run.mode,
                alpha=alpha if run.alpha is None else run.alpha,
                summary_vector=use.vector,
                summary_weight=use.weight,
                summary_keyword_weight=use.keyword_weight,
                max_vector_distance=distance,
            )
            return list(pool.map(lambda q: _search(searcher, q, template), queries))

        for run in runs:
            if on_progress:
                on_progress(f"{run.name}: {len(queries)} questions")
            ranked = search_all(run, 0.0)
            gated = search_all(run, max_distance) if max_distance else None
            run_results = [
                QueryResult(
                    run=run.name,
                    query=query.text,
                    in_scope=query.in_scope,
                    rank=first_relevant_rank(query, hits) if query.in_scope else None,
                    hits=tuple(f"{hit.source} § {' > '.join(hit.headers)}" for hit in hits),
                    gate_empty=None if gated is None else not gated[index],
                    missing_terms=tuple(missing_terms(query.text, hits[:answer_k])),
                )
                for index, (query, hits) in enumerate(zip(queries, ranked, strict=True))
            ]
            results.extend(run_results)
            ranks = [result.rank for result in run_results if result.in_scope]
            gate_in = [bool(r.gate_empty) for r in run_results if r.in_scope]
            gate_out = [bool(r.gate_empty) for r in run_results if not r.in_scope]
            refused_in = [bool(r.missing_terms) for r in run_results if r.in_scope]
            refused_out = [bool(r.missing_terms) for r in run_results if not r.in_scope]
            ask_in = [bool(r.gate_empty or r.missing_terms) for r in run_results if r.in_scope]
            ask_out = [bool(r.gate_empty or r.missing_terms) for r in run_results if not r.in_scope]
            metrics.append(
                ModeMetrics(
                    run=run.name,
                    description=run.description,
                    in_scope=len(in_scope),
                    out_of_scope=len(out_of_scope),
                    recall={n: recall_at(ranks, n) for n in cutoffs(k)},
                    mrr=mrr_at(ranks, k),
                    gate_rejects_out_of_scope=share(gate_out) if gated is not None else None,
                    gate_empties_in_scope=share(gate_in) if gated is not None else None,
                    terms_refuse_out_of_scope=share(refused_out),
                    terms_refuse_in_scope=share(refused_in),
                    ask_refuses_out_of_scope=share(ask_out) if gated is not None else None,
                    ask_refuses_in_scope=share(ask_in) if gated is not None else None,
                )
            )
            for distance in sweep:
                if on_progress:
                    on_progress(f"{run.name}: gate sweep at {distance:g}")
                empty = [not hits for hits in search_all(run, distance)]
                points.append(
                    GatePoint(
                        run=run.name,
                        max_distance=distance,
                        rejects_out_of_scope=share(
                            [e for q, e in zip(queries, empty, strict=True) if not q.in_scope]
                        ),
                        empties_in_scope=share(
                            [e for q, e in zip(queries, empty, strict=True) if q.in_scope]
                        ),
                    )
                )
    return EvaluationReport(
        k=k,
        alpha=alpha,
        max_distance=max_distance,
        answer_k=answer_k,
        queries=len(queries),
        in_scope=len(in_scope),
        out_of_scope=len(out_of_scope),
        metrics=metrics,
        results=results,
        sweep=points,
        context=dict(context or {}),
    )


def choose_gate(
    points: Sequence[GatePoint], run: str, *, max_emptied: float = 0.05
) -> float | None:
    """The swept distance that rejects the most out-of-scope questions for `run` while
    emptying at most `max_emptied` of the in-scope ones (ties: the larger, gentler distance).
    None when no distance qualifies."""
    allowed = [p for p in points if p.run == run and p.empties_in_scope <= max_emptied + 1e-9]
    if not allowed:
        return None
    return max(allowed, key=lambda p: (p.rejects_out_of_scope, p.max_distance)).max_distance


def _search(searcher: Searcher, query: Query, template: SearchRequest) -> list[Hit]:
    hits = searcher.search(dataclasses.replace(template, query=query.text))
    return unique_hits(hits) if template.mode == "both" else list(hits)
