"""Retrieval quality: run a question set through every search mode and score the rankings.

A question set is JSONL, one object per line::

    {"query": "loop over two lists at once",
     "expect": [{"source_suffix": "datastructures.html", "section": "5.6."}]}

A hit is relevant when its `source` ends with one `source_suffix` and one of its
`headers` starts with that expectation's `section`. An empty `expect` marks a question
the corpus cannot answer (out of scope).

Metrics, per mode, over the in-scope questions:

- Recall@n: the share of questions with at least one relevant hit among the first n.
- MRR@n: the mean of 1 / rank of the first relevant hit (0 when none is in the first n).

And for the absolute relevance gate (`max_vector_distance`), run separately with the
gate on: the share of out-of-scope questions for which the gate leaves no hit (good),
and the share of in-scope questions it empties (bad).

Rankings are scored without the gate, so the gate distance does not change them.

And for `ask`'s named-term check (service/query/answer.py): with the first `answer_k` hits of
each ranking as the passages, the share of out-of-scope questions that `ask` would answer
"I don't know" because the question names something no passage mentions (good), and the
share of in-scope questions it would refuse that way (bad).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from service.errors import QuerySetError, SearchError
from service.query.answer import missing_terms
from service.query.modes import Mode
from service.query.search import Hit, SearchRequest

__all__ = [
    "BASELINES",
    "RUNS",
    "EvaluationReport",
    "Expectation",
    "GatePoint",
    "ModeMetrics",
    "Query",
    "QueryResult",
    "QuerySetError",
    "Run",
    "Searcher",
    "choose_gate",
    "cutoffs",
    "evaluate",
    "first_relevant_rank",
    "load_queries",
    "mrr_at",
    "parse_queries",
    "plot",
    "recall_at",
    "render_document",
    "render_markdown",
    "render_sweep",
    "unique_hits",
    "write_report",
]


class Searcher(Protocol):
    """What the evaluation needs: `Synopsis` or anything with its `search`."""

    def search(self, request: SearchRequest) -> list[Hit]: ...  # pragma: no cover


@dataclass(frozen=True, kw_only=True)
class Expectation:
    """One place an answer may be: a source (by suffix) and a section (by header prefix)."""

    source_suffix: str
    section: str

    def matches(self, hit: Hit) -> bool:
        """True when `hit` is in this source and under this section."""
        return hit.source.endswith(self.source_suffix) and any(
            header.startswith(self.section) for header in hit.headers
        )


@dataclass(frozen=True, kw_only=True)
class Query:
    """One question of the set, with where its answer is (nothing: out of scope)."""

    text: str
    expect: tuple[Expectation, ...]
    line: int = 0

    @property
    def in_scope(self) -> bool:
        """True when the corpus is expected to answer it."""
        return bool(self.expect)

    def is_relevant(self, hit: Hit) -> bool:
        """True when `hit` matches any expectation."""
        return any(expectation.matches(hit) for expectation in self.expect)


@dataclass(frozen=True, kw_only=True)
class Run:
    """One configuration scored: a search mode and its BM25/vector balance."""

    name: str
    mode: Mode
    alpha: float | None = None  # None: the settings' default alpha
    summary_weight: float | None = None  # `joint` mode; None: the settings' default
    summary_keywords: bool | None = None  # `joint` mode; None: the settings' default
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
        summary_keywords=False,
        description="the chunk's and its summary's vectors; BM25 over the chunk only",
    ),
    Run(
        name="joint: summary BM25 only",
        mode="joint",
        summary_weight=0.0,
        summary_keywords=True,
        description="the chunk's vector only; BM25 over the chunk and its summary",
    ),
    *(
        Run(
            name=f"joint: summary weight {weight:g}",
            mode="joint",
            summary_weight=weight,
            description=f"summary vector weight {weight:g}, BM25 over both",
        )
        for weight in (0.25, 0.5, 0.75)
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


# -- the question set ------------------------------------------------------------------


def load_queries(path: Path) -> list[Query]:
    """Read a JSONL question set; QuerySetError names the file and line of a bad entry."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise QuerySetError(f"{path}: cannot read the question set: {exc}") from exc
    return parse_queries(text.splitlines(), name=str(path))


def parse_queries(lines: Iterable[str], *, name: str = "<queries>") -> list[Query]:
    """Parse JSONL lines (blank lines and `#` comments are skipped) into queries."""
    queries: list[Query] = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{name}, line {number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise QuerySetError(f"{where}: not valid JSON ({exc.msg})") from exc
        queries.append(_query(data, where, number))
    if not queries:
        raise QuerySetError(f"{name}: no questions")
    return queries


def _query(data: object, where: str, number: int) -> Query:
    if not isinstance(data, dict):
        raise QuerySetError(f"{where}: expected an object with 'query' and 'expect'")
    unknown = set(data) - {"query", "expect"}
    if unknown:
        raise QuerySetError(f"{where}: unknown keys {sorted(unknown)}")
    text = data.get("query")
    if not isinstance(text, str) or not text.strip():
        raise QuerySetError(f"{where}: 'query' must be a non-empty string")
    expect = data.get("expect")
    if not isinstance(expect, list):
        raise QuerySetError(f"{where}: 'expect' must be a list (empty: out of scope)")
    expectations: list[Expectation] = []
    for item in expect:
        if (
            not isinstance(item, dict)
            or set(item) != {"source_suffix", "section"}
            or not all(isinstance(value, str) and value for value in item.values())
        ):
            raise QuerySetError(
                f"{where}: each 'expect' entry needs non-empty strings "
                "'source_suffix' and 'section' and nothing else"
            )
        expectations.append(
            Expectation(source_suffix=item["source_suffix"], section=item["section"])
        )
    return Query(text=text, expect=tuple(expectations), line=number)


# -- metrics ---------------------------------------------------------------------------


def unique_hits(hits: Iterable[Hit]) -> list[Hit]:
    """The hits in order, each original once (the `both` mode lists some twice)."""
    seen: set[str] = set()
    unique: list[Hit] = []
    for hit in hits:
        if hit.id not in seen:
            seen.add(hit.id)
            unique.append(hit)
    return unique


def first_relevant_rank(query: Query, hits: Sequence[Hit]) -> int | None:
    """1-based rank of the first hit relevant to `query`, or None."""
    for rank, hit in enumerate(hits, start=1):
        if query.is_relevant(hit):
            return rank
    return None


def recall_at(ranks: Sequence[int | None], n: int) -> float:
    """Share of questions whose first relevant hit is in the first `n` (0 for no questions)."""
    if not ranks:
        return 0.0
    return sum(1 for rank in ranks if rank is not None and rank <= n) / len(ranks)


def mrr_at(ranks: Sequence[int | None], n: int) -> float:
    """Mean reciprocal rank, counting only ranks ≤ `n` (0 for no questions)."""
    if not ranks:
        return 0.0
    return sum(1.0 / rank for rank in ranks if rank is not None and rank <= n) / len(ranks)


def cutoffs(k: int) -> tuple[int, ...]:
    """The Recall@n cutoffs reported for a search depth `k`: 1, 5 and k (those ≤ k)."""
    return tuple(sorted({n for n in (1, 5, k) if n <= k}))


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


# -- running ---------------------------------------------------------------------------


def evaluate(
    searcher: Searcher,
    queries: Sequence[Query],
    *,
    k: int = 10,
    alpha: float = 0.5,
    summary_weight: float = 0.5,
    summary_keywords: bool = True,
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
            template = SearchRequest(
                query="-",
                k=k,
                mode=run.mode,
                alpha=alpha if run.alpha is None else run.alpha,
                summary_weight=summary_weight if run.summary_weight is None else run.summary_weight,
                summary_keywords=(
                    summary_keywords if run.summary_keywords is None else run.summary_keywords
                ),
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
                    gate_rejects_out_of_scope=_share(gate_out) if gated is not None else None,
                    gate_empties_in_scope=_share(gate_in) if gated is not None else None,
                    terms_refuse_out_of_scope=_share(refused_out),
                    terms_refuse_in_scope=_share(refused_in),
                    ask_refuses_out_of_scope=_share(ask_out) if gated is not None else None,
                    ask_refuses_in_scope=_share(ask_in) if gated is not None else None,
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
                        rejects_out_of_scope=_share(
                            [e for q, e in zip(queries, empty, strict=True) if not q.in_scope]
                        ),
                        empties_in_scope=_share(
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


# -- output ----------------------------------------------------------------------------


def render_markdown(report: EvaluationReport) -> str:
    """The metrics table (and, when measured, the gate sweep) as Markdown."""
    ns = cutoffs(report.k)
    gate = bool(report.max_distance)
    header = ["mode", *(f"Recall@{n}" for n in ns), f"MRR@{report.k}"]
    if gate:
        header += ["out-of-scope rejected", "in-scope emptied"]
    header += ["ask: out-of-scope refused", "ask: in-scope refused"]
    rows = [header, ["---"] + ["---:"] * (len(header) - 1)]
    best = report.best.run
    for m in report.metrics:
        name = f"**{m.run}**" if m.run == best else m.run
        row = [name, *(f"{m.recall[n]:.3f}" for n in ns), f"{m.mrr:.3f}"]
        if gate:
            row += [
                _fraction(m.gate_rejects_out_of_scope, m.out_of_scope),
                _fraction(m.gate_empties_in_scope, m.in_scope),
            ]
        row += [
            _fraction(m.terms_refuse_out_of_scope, m.out_of_scope),
            _fraction(m.terms_refuse_in_scope, m.in_scope),
        ]
        rows.append(row)
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    if report.sweep:
        lines += ["", render_sweep(report.sweep, report.in_scope, report.out_of_scope)]
    return "\n".join(lines) + "\n"


def render_sweep(points: Sequence[GatePoint], in_scope: int, out_of_scope: int) -> str:
    """The gate sweep as Markdown: one row per distance, one column per run, each cell
    "out-of-scope rejected / in-scope emptied" as counts."""
    runs = list(dict.fromkeys(point.run for point in points))
    distances = sorted({point.max_distance for point in points})
    by_key = {(point.run, point.max_distance): point for point in points}
    header = ["max distance", *runs]
    rows = [header, ["---:"] * len(header)]
    for distance in distances:
        row = [f"{distance:g}"]
        for run in runs:
            point = by_key.get((run, distance))
            row.append(
                ""
                if point is None
                else f"{round(point.rejects_out_of_scope * out_of_scope)}/{out_of_scope} · "
                f"{round(point.empties_in_scope * in_scope)}/{in_scope}"
            )
        rows.append(row)
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def _fraction(share: float | None, total: int) -> str:
    if share is None:
        return "–"
    return f"{share:.2f} ({round(share * total)}/{total})"


def plot(report: EvaluationReport, path: Path) -> None:
    """Write a grouped bar chart (Recall@n and MRR@k per run) as a PNG to `path`."""
    import matplotlib  # noqa: PLC0415 - only this function needs it, and it is slow to import

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    ns = cutoffs(report.k)
    series = [(f"Recall@{n}", [m.recall[n] for m in report.metrics]) for n in ns]
    series.append((f"MRR@{report.k}", [m.mrr for m in report.metrics]))
    names = [m.run for m in report.metrics]
    width = 0.8 / len(series)
    figure, axes = plt.subplots(figsize=(9, 4.5), dpi=110)
    try:
        for index, (label, values) in enumerate(series):
            offsets = [x + (index - (len(series) - 1) / 2) * width for x in range(len(names))]
            bars = axes.bar(offsets, values, width, label=label)
            axes.bar_label(bars, labels=[f"{v:.2f}" for v in values], fontsize=6, padding=1)
        axes.set_xticks(range(len(names)), names)
        axes.set_ylim(0, 1.08)
        axes.set_ylabel("score")
        title = f"{report.in_scope} in-scope questions, k={report.k}, alpha={report.alpha:g}"
        models = report.context.get("models")
        axes.set_title(f"Retrieval quality per mode ({title})" + (f"\n{models}" if models else ""))
        axes.legend(loc="lower right", fontsize=8)
        axes.grid(axis="y", alpha=0.3)
        figure.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path)
    finally:
        plt.close(figure)


def render_document(report: EvaluationReport, *, chart: str = "eval.png") -> str:
    """The whole docs page: how it was measured, the tables, and what they do not show."""
    ctx = report.context
    best = report.best
    lines = ["# Retrieval quality", ""]
    if ctx.get("date"):
        lines += [f"Measured on {ctx['date']} by `synopsis eval`.", ""]
    if ctx.get("command"):
        lines += [
            "Reproduce (with the corpus ingested first):",
            "",
            "```",
            ctx["command"],
            "```",
            "",
        ]
    facts = [
        ("Corpus", ctx.get("corpus")),
        ("Models", ctx.get("models")),
        ("Questions", ctx.get("queries_file")),
        ("Index", ctx.get("index")),
    ]
    lines += [f"- {label}: {value}" for label, value in facts if value]
    lines += [
        f"- {report.queries} questions: {report.in_scope} in scope, "
        f"{report.out_of_scope} out of scope (their answer is not in the corpus).",
        f"- Search: top {report.k}, alpha {report.alpha:g} (0 = BM25 only, 1 = vector only)"
        + (
            f", relevance gate max_vector_distance {report.max_distance:g}."
            if report.max_distance
            else ", no relevance gate."
        ),
        "",
        "Recall@n is the share of in-scope questions with at least one relevant original in "
        f"the first n hits; MRR@{report.k} is the mean of 1/rank of the first relevant one. A "
        "hit is relevant when its source ends with the expected file name and one of its "
        "headers starts with the expected section (a header prefix, e.g. a section "
        "number). Rankings are measured without the gate; the gate columns come from a "
        "second pass with it: *out-of-scope rejected* is "
        "the share of out-of-scope questions that get no hit at all (higher is better), "
        "*in-scope emptied* the share of in-scope questions that lose every hit (lower is "
        'better). The *ask* columns count the questions `synopsis ask` would answer "I '
        "don't know\" without calling the model because the question names something (a "
        "capitalized name after its first word, an acronym, a code identifier) that none of "
        f"the first {report.answer_k} hits mentions: out-of-scope questions refused (higher "
        "is better), in-scope questions refused (lower is better).",
        "",
        "| mode | what it searches |",
        "|---|---|",
        *(f"| {m.run} | {m.description} |" for m in report.metrics),
        "",
        "## Results",
        "",
        render_markdown(dataclasses.replace(report, sweep=[])).rstrip(),
        "",
        f"Best by MRR@{report.k}: **{best.run}** (Recall@1 {best.recall[min(best.recall)]:.3f}, "
        f"Recall@{report.k} {best.recall[max(best.recall)]:.3f}, MRR@{report.k} {best.mrr:.3f}).",
        "",
        f"![Recall and MRR per mode]({chart})",
        "",
    ]
    if report.max_distance:
        lines += [
            "## What `ask` would do",
            "",
            f'`ask` refuses ("I don\'t know", no model call) when the gate at '
            f"{report.max_distance:g} leaves no hit or the question names something none of "
            f"the first {report.answer_k} hits mentions. Per mode, over the same questions:",
            "",
            "| mode | out-of-scope refused (want all) | in-scope refused (want none) |",
            "|---|---:|---:|",
            *(
                f"| {m.run} | {_fraction(m.ask_refuses_out_of_scope, m.out_of_scope)} "
                f"| {_fraction(m.ask_refuses_in_scope, m.in_scope)} |"
                for m in report.metrics
            ),
            "",
        ]
    if report.sweep:
        lines += [
            "## Relevance gate sweep",
            "",
            "Each distance is one more pass over every question with that gate. Each cell: "
            "out-of-scope questions rejected (no hit at all; want all) · in-scope questions "
            "emptied (want none).",
            "",
            render_sweep(report.sweep, report.in_scope, report.out_of_scope),
            "",
        ]
    lines += [
        "## What these figures do not show",
        "",
        "- They hold for these models only. The summaries come from a very small local "
        "model; a larger chat or embedding model may change the result, in either "
        "direction. Run `synopsis eval` with your own questions, documents and models to "
        "find out for your case.",
        "- The questions were written before any result was seen and were not tuned to the "
        "results; held-out questions will be used to check that the figures generalize. A "
        "gate distance chosen from the sweep on these same questions is fitted to them, so "
        "its gate columns are optimistic.",
        f"- {report.in_scope} in-scope questions: one question moves Recall by "
        f"{1 / max(report.in_scope, 1):.3f}; differences of that size are noise.",
        "",
    ]
    if ctx.get("raw"):
        lines += [f"Per-question ranks and hits: [{ctx['raw']}]({ctx['raw']}).", ""]
    return "\n".join(lines)


def write_report(
    report: EvaluationReport, out_dir: Path, *, name: str = "eval", per_question: bool = False
) -> list[Path]:
    """Write NAME.md (the page) and NAME.png (the chart); with `per_question`, also
    NAME.json (every question's rank and hits: large, so only on demand)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    markdown = out_dir / f"{name}.md"
    chart = out_dir / f"{name}.png"
    raw = out_dir / f"{name}.json"
    written = [markdown, chart]
    if per_question:
        report = dataclasses.replace(report, context={**report.context, "raw": raw.name})
        raw.write_text(json.dumps(report.to_dict(), indent=1, ensure_ascii=False) + "\n", "utf-8")
        written.append(raw)
    markdown.write_text(render_document(report, chart=chart.name), encoding="utf-8")
    plot(report, chart)
    return written
