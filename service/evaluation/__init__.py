"""Retrieval quality: run a question set through every search mode and score the rankings.

`questions` reads question sets, `metrics` scores rankings, `runner` runs the
searches, `report` writes the page and the chart.

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

from service.evaluation.metrics import (
    cutoffs,
    first_relevant_rank,
    mrr_at,
    recall_at,
    unique_hits,
)
from service.evaluation.questions import (
    Expectation,
    Query,
    QuerySetError,
    load_queries,
    parse_queries,
)
from service.evaluation.report import (
    plot,
    render_document,
    render_markdown,
    render_sweep,
    write_report,
)
from service.evaluation.runner import (
    ABLATIONS,
    BASELINES,
    RUNS,
    EvaluationReport,
    GatePoint,
    ModeMetrics,
    QueryResult,
    Run,
    Searcher,
    choose_gate,
    evaluate,
)

__all__ = [
    "ABLATIONS",
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
