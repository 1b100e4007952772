"""The retrieval-quality harness: metrics on hand-made rankings, question-set parsing,
the Markdown output, and one run against the real stack on a tiny ingested document."""

from __future__ import annotations

import dataclasses
import json
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from service.cli import main
from service.errors import SynopsisError
from service.evaluation import (
    BASELINES,
    RUNS,
    EvaluationReport,
    Expectation,
    GatePoint,
    ModeMetrics,
    Query,
    QuerySetError,
    Run,
    choose_gate,
    cutoffs,
    evaluate,
    first_relevant_rank,
    load_queries,
    mrr_at,
    parse_queries,
    recall_at,
    render_markdown,
    unique_hits,
    write_report,
)
from service.query.search import Hit, SearchRequest
from service.settings import Settings


def hit(source: str, *headers: str, id: str | None = None, distance: float = 0.3) -> Hit:
    return Hit(
        id=id or f"{source}#{'>'.join(headers)}",
        source=source,
        title="",
        headers=list(headers),
        chunk_index=0,
        content="",
        summary=None,
        score=1.0,
        leg="originals",
        distance=distance,
    )


def query(text: str, *expect: tuple[str, str]) -> Query:
    return Query(
        text=text,
        expect=tuple(Expectation(source_suffix=s, section=section) for s, section in expect),
    )


# -- relevance and ranks -----------------------------------------------------------------

DOC = "/usr/share/doc/python3.11/html/tutorial/controlflow.html"


@pytest.mark.parametrize(
    ("source", "headers", "expected"),
    [
        (DOC, ["4. More Control Flow Tools", "4.3. The `range()` Function"], True),
        (DOC, ["4. More Control Flow Tools"], False),  # the page, not the section
        (DOC, ["4. More", "4.3.1. A subsection"], True),  # below the section counts
        (DOC.replace("controlflow", "classes"), ["4.3. Same number"], False),  # other file
        (DOC, ["4.30. Not the same section"], False),  # the trailing dot matters
        (DOC + ".bak", ["4.3. Range"], False),  # suffix, not substring
    ],
)
def test_expectation_matches_source_suffix_and_header_prefix(
    source: str, headers: list[str], expected: bool
) -> None:
    expectation = Expectation(source_suffix="controlflow.html", section="4.3.")
    assert expectation.matches(hit(source, *headers)) is expected


def test_first_relevant_rank_is_one_based_and_takes_any_expectation() -> None:
    q = query("loop indices", ("controlflow.html", "4.3."), ("datastructures.html", "5.6."))
    hits = [
        hit("a/classes.html", "9. Classes"),
        hit("a/datastructures.html", "5. Data Structures", "5.6. Looping Techniques"),
        hit("a/controlflow.html", "4. More", "4.3. The range() Function"),
    ]
    assert first_relevant_rank(q, hits) == 2
    assert first_relevant_rank(q, hits[:1]) is None
    assert first_relevant_rank(q, []) is None


def test_unique_hits_keeps_the_first_of_each_original_in_order() -> None:
    a, b, c = hit("a", id="1"), hit("b", id="2"), hit("c", id="3")
    both = [a, b, dataclasses.replace(a, leg="summaries"), c, b]
    assert [h.id for h in unique_hits(both)] == ["1", "2", "3"]


RANKS: list[int | None] = [1, 3, None, 7, 12, 1]


@pytest.mark.parametrize(
    ("n", "recall", "mrr"),
    [
        (1, 2 / 6, 2 / 6),
        (5, 3 / 6, (1 + 1 / 3 + 1) / 6),
        (10, 4 / 6, (1 + 1 / 3 + 1 / 7 + 1) / 6),
        (12, 5 / 6, (1 + 1 / 3 + 1 / 7 + 1 / 12 + 1) / 6),
    ],
)
def test_recall_and_mrr_exact_values(n: int, recall: float, mrr: float) -> None:
    assert recall_at(RANKS, n) == pytest.approx(recall, abs=1e-12)
    assert mrr_at(RANKS, n) == pytest.approx(mrr, abs=1e-12)


def test_metrics_of_no_questions_are_zero() -> None:
    assert recall_at([], 5) == 0.0
    assert mrr_at([], 5) == 0.0


@pytest.mark.parametrize(
    ("k", "expected"), [(10, (1, 5, 10)), (5, (1, 5)), (3, (1, 3)), (1, (1,)), (20, (1, 5, 20))]
)
def test_cutoffs(k: int, expected: tuple[int, ...]) -> None:
    assert cutoffs(k) == expected


# -- evaluate, with a searcher that returns canned rankings ------------------------------


class CannedSearcher:
    """Returns fixed hits per (query, mode, alpha); the gate drops hits by distance."""

    def __init__(self, table: dict[tuple[str, str, float], list[Hit]]) -> None:
        self.table = table
        self.requests: list[SearchRequest] = []

    def search(self, request: SearchRequest) -> list[Hit]:
        self.requests.append(request)
        hits = self.table.get((request.query, request.mode, request.alpha), [])
        if request.max_vector_distance:
            hits = [h for h in hits if (h.distance or 0) <= request.max_vector_distance]
        return hits[: request.k * (2 if request.mode == "both" else 1)]


RIGHT = hit("t/a.html", "1. A", "1.2. Right", distance=0.30)
WRONG = hit("t/a.html", "1. A", "1.1. Wrong", distance=0.40)
FAR = hit("t/b.html", "2. B", distance=0.70)
RIGHT_FARTHER = dataclasses.replace(RIGHT, id="right-2", distance=0.45)
QUESTIONS = [
    query("q1", ("a.html", "1.2.")),
    query("q2", ("a.html", "1.2.")),
    query("out"),
]


def canned() -> CannedSearcher:
    table: dict[tuple[str, str, float], list[Hit]] = {
        ("q1", "originals", 0.5): [RIGHT, WRONG],  # rank 1
        ("q2", "originals", 0.5): [WRONG, FAR, RIGHT_FARTHER],  # rank 3
        ("out", "originals", 0.5): [FAR],
        ("q1", "both", 0.5): [WRONG, RIGHT, WRONG, RIGHT],  # unique: WRONG, RIGHT → rank 2
        ("q2", "both", 0.5): [FAR, WRONG, FAR, RIGHT_FARTHER],  # unique: 3 hits → rank 3
        ("out", "both", 0.5): [FAR, FAR],
    }
    return CannedSearcher(table)


def test_evaluate_scores_each_run_and_the_gate_exactly() -> None:
    searcher = canned()
    runs = [RUNS[1], RUNS[2]]  # originals, both
    report = evaluate(searcher, QUESTIONS, k=2, max_distance=0.5, sweep=[0.35, 0.8], runs=runs)

    originals, both = report.metrics
    # q2's answer is third, so at k=2 only q1 counts (rank 1 here, rank 2 in `both`).
    assert originals.recall == {1: 0.5, 2: 0.5}
    assert originals.mrr == pytest.approx(0.5)
    assert both.recall == {1: 0.0, 2: 0.5}
    assert both.mrr == pytest.approx(0.25)
    # Gate 0.5: "out" has only FAR (0.70) → emptied; in-scope lists keep a hit.
    assert originals.gate_rejects_out_of_scope == 1.0
    assert originals.gate_empties_in_scope == 0.0
    assert (originals.ask_refuses_out_of_scope, originals.ask_refuses_in_scope) == (1.0, 0.0)
    assert (originals.in_scope, originals.out_of_scope) == (2, 1)

    ranks = {(r.run, r.query): r.rank for r in report.results}
    assert ranks == {
        ("originals", "q1"): 1,
        ("originals", "q2"): None,
        ("originals", "out"): None,
        ("both", "q1"): 2,
        ("both", "q2"): 3,  # `both` lists up to 2k; the metrics still cut at k
        ("both", "out"): None,
    }
    assert report.sweep == [
        GatePoint(run="originals", max_distance=0.35, rejects_out_of_scope=1.0,
                  empties_in_scope=0.5),  # q2 has nothing within 0.35
        GatePoint(run="originals", max_distance=0.8, rejects_out_of_scope=0.0,
                  empties_in_scope=0.0),
        GatePoint(run="both", max_distance=0.35, rejects_out_of_scope=1.0,
                  empties_in_scope=0.5),
        GatePoint(run="both", max_distance=0.8, rejects_out_of_scope=0.0,
                  empties_in_scope=0.0),
    ]  # fmt: skip
    # Ranking pass, gate pass and two sweep passes, three questions, two runs.
    assert len(searcher.requests) == 4 * 3 * 2
    assert {r.max_vector_distance for r in searcher.requests} == {0.0, 0.5, 0.35, 0.8}


def test_evaluate_counts_what_asks_named_term_check_would_refuse() -> None:
    python = dataclasses.replace(RIGHT, content="In Python, for i in range(3): ...")
    questions = [
        query("count in Python", ("a.html", "1.2.")),  # Python is in the first hit
        query("count in Python please", ("a.html", "1.2.")),  # only in the third
        query("count in Go"),  # out of scope, Go in no hit
    ]
    table: dict[tuple[str, str, float], list[Hit]] = {
        ("count in Python", "originals", 0.5): [python, WRONG, FAR],
        ("count in Python please", "originals", 0.5): [WRONG, FAR, python],
        ("count in Go", "originals", 0.5): [python, WRONG],
    }
    report = evaluate(CannedSearcher(table), questions, k=3, answer_k=2, runs=[RUNS[1]])

    [metrics] = report.metrics
    assert (metrics.terms_refuse_out_of_scope, metrics.terms_refuse_in_scope) == (1.0, 0.5)
    assert [r.missing_terms for r in report.results] == [(), ("Python",), ("Go",)]


def test_evaluate_at_full_depth_finds_the_rank_three_hit() -> None:
    report = evaluate(canned(), QUESTIONS, k=3, runs=[RUNS[1]])
    (metrics,) = report.metrics
    assert metrics.recall == {1: 0.5, 3: 1.0}
    assert metrics.mrr == pytest.approx((1 + 1 / 3) / 2)
    assert metrics.gate_rejects_out_of_scope is None  # no gate, no gate columns
    assert report.sweep == []


def test_baselines_search_the_originals_at_alpha_zero_and_one() -> None:
    searcher = CannedSearcher({})
    evaluate(searcher, QUESTIONS[:1], k=5, alpha=0.7, runs=[RUNS[0], *BASELINES])
    assert [(r.mode, r.alpha) for r in searcher.requests] == [
        ("summaries", 0.7),
        ("originals", 0.0),
        ("originals", 1.0),
    ]


def test_evaluate_rejects_a_bad_depth() -> None:
    with pytest.raises(SynopsisError, match="k must be between 1 and 100"):
        evaluate(CannedSearcher({}), QUESTIONS, k=0)


@pytest.mark.parametrize(
    ("points", "expected"),
    [
        # 0.6 rejects as much as 0.5 but empties fewer in-scope questions: the larger wins.
        ([(0.5, 0.8, 0.04), (0.6, 0.8, 0.02), (0.7, 0.4, 0.0)], 0.6),
        ([(0.5, 1.0, 0.10), (0.6, 0.6, 0.05), (0.7, 0.2, 0.0)], 0.6),  # ≤ 5 % in-scope emptied
        ([(0.5, 1.0, 0.30), (0.6, 0.9, 0.20)], None),
    ],
)
def test_choose_gate(points: list[tuple[float, float, float]], expected: float | None) -> None:
    sweep = [
        GatePoint(run="fused", max_distance=d, rejects_out_of_scope=r, empties_in_scope=e)
        for d, r, e in points
    ] + [GatePoint(run="other", max_distance=0.9, rejects_out_of_scope=1, empties_in_scope=0)]
    assert choose_gate(sweep, "fused") == expected


# -- the question set -------------------------------------------------------------------


def test_parse_queries_reads_scope_and_skips_blanks_and_comments() -> None:
    lines = [
        "# a comment",
        '{"query": "loop two lists", "expect": [{"source_suffix": "ds.html", "section": "5.6."}]}',
        "",
        '{"query": "rust borrow checker", "expect": []}',
    ]
    queries = parse_queries(lines)
    assert queries == [
        Query(
            text="loop two lists",
            expect=(Expectation(source_suffix="ds.html", section="5.6."),),
            line=2,
        ),
        Query(text="rust borrow checker", expect=(), line=4),
    ]
    assert [q.in_scope for q in queries] == [True, False]


GOOD = '{"query": "q", "expect": []}'


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ('{"query": "q", "expect": [}', "set.jsonl, line 2: not valid JSON"),
        ('["q"]', "line 2: expected an object with 'query' and 'expect'"),
        ('{"expect": []}', "line 2: 'query' must be a non-empty string"),
        ('{"query": "  ", "expect": []}', "line 2: 'query' must be a non-empty string"),
        ('{"query": "q"}', "line 2: 'expect' must be a list"),
        ('{"query": "q", "expect": {}}', "line 2: 'expect' must be a list"),
        ('{"query": "q", "expect": [{"source_suffix": "a.html"}]}', "line 2: each 'expect'"),
        (
            '{"query": "q", "expect": [{"source_suffix": "a", "section": ""}]}',
            "line 2: each 'expect'",
        ),
        ('{"query": "q", "expect": [], "note": 1}', "line 2: unknown keys ['note']"),
    ],
)
def test_parse_queries_names_the_bad_line(bad: str, message: str) -> None:
    with pytest.raises(QuerySetError) as caught:
        parse_queries([GOOD, bad, GOOD], name="set.jsonl")
    assert message in str(caught.value)
    assert isinstance(caught.value, SynopsisError)


def test_an_empty_question_set_is_an_error() -> None:
    with pytest.raises(QuerySetError, match=r"set\.jsonl: no questions"):
        parse_queries(["", "# nothing"], name="set.jsonl")


def test_load_queries_reports_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(QuerySetError, match=r"missing\.jsonl: cannot read the question set"):
        load_queries(tmp_path / "missing.jsonl")


TUTORIAL_PAGES = (
    "appendix", "appetite", "classes", "controlflow", "datastructures", "errors",
    "floatingpoint", "inputoutput", "interactive", "interpreter", "introduction",
    "modules", "stdlib", "stdlib2", "venv", "whatnow",
)  # fmt: skip


def test_the_committed_tutorial_set_covers_every_page() -> None:
    queries = load_queries(Path(__file__).parents[3] / "eval" / "tutorial.jsonl")
    pages = {e.source_suffix for q in queries for e in q.expect}
    assert len([q for q in queries if q.in_scope]) >= 40
    assert len([q for q in queries if not q.in_scope]) >= 5
    assert pages >= {f"{name}.html" for name in TUTORIAL_PAGES}
    assert len({q.text for q in queries}) == len(queries)


def test_the_cli_reports_a_bad_question_set_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(GOOD + "\nnot json\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["eval", str(path), "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert f"Error: {path}, line 2: not valid JSON" in result.output


# -- output ------------------------------------------------------------------------------


def small_report(**changes: object) -> EvaluationReport:
    metrics = [
        ModeMetrics(
            run="originals", description="hybrid over the chunks", in_scope=4, out_of_scope=2,
            recall={1: 0.5, 5: 0.75, 10: 1.0}, mrr=0.625,
            gate_rejects_out_of_scope=0.5, gate_empties_in_scope=0.0,
            terms_refuse_out_of_scope=0.5, terms_refuse_in_scope=0.25,
        ),
        ModeMetrics(
            run="fused", description="reciprocal-rank fusion", in_scope=4, out_of_scope=2,
            recall={1: 0.75, 5: 1.0, 10: 1.0}, mrr=0.8125,
            gate_rejects_out_of_scope=1.0, gate_empties_in_scope=0.25,
            terms_refuse_out_of_scope=1.0, terms_refuse_in_scope=0.0,
            ask_refuses_out_of_scope=1.0, ask_refuses_in_scope=0.25,
        ),
    ]  # fmt: skip
    report = EvaluationReport(
        k=10,
        alpha=0.5,
        max_distance=0.6,
        answer_k=5,
        queries=6,
        in_scope=4,
        out_of_scope=2,
        metrics=metrics,
        results=[],
        context={
            "date": "2026-11-30",
            "command": "synopsis eval q.jsonl --k 10",
            "models": "summaries by smollm2-135m-instruct",
        },
    )
    return dataclasses.replace(report, **changes)  # type: ignore[arg-type]


def test_render_markdown_table_exactly() -> None:
    assert render_markdown(small_report()) == (
        "| mode | Recall@1 | Recall@5 | Recall@10 | MRR@10 | out-of-scope rejected "
        "| in-scope emptied | ask: out-of-scope refused | ask: in-scope refused |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
        "| originals | 0.500 | 0.750 | 1.000 | 0.625 | 0.50 (1/2) | 0.00 (0/4) "
        "| 0.50 (1/2) | 0.25 (1/4) |\n"
        "| **fused** | 0.750 | 1.000 | 1.000 | 0.812 | 1.00 (2/2) | 0.25 (1/4) "
        "| 1.00 (2/2) | 0.00 (0/4) |\n"
    )


def test_render_markdown_without_gate_has_no_gate_columns_and_adds_the_sweep() -> None:
    metrics = [
        dataclasses.replace(m, gate_rejects_out_of_scope=None, gate_empties_in_scope=None)
        for m in small_report().metrics
    ]
    sweep = [
        GatePoint(run="fused", max_distance=0.5, rejects_out_of_scope=1.0, empties_in_scope=0.5),
        GatePoint(run="fused", max_distance=0.7, rejects_out_of_scope=0.5, empties_in_scope=0.0),
    ]
    text = render_markdown(small_report(max_distance=0.0, metrics=metrics, sweep=sweep))
    assert text.splitlines()[0] == (
        "| mode | Recall@1 | Recall@5 | Recall@10 | MRR@10 "
        "| ask: out-of-scope refused | ask: in-scope refused |"
    )
    assert text.endswith(
        "| max distance | fused |\n| ---: | ---: |\n| 0.5 | 2/2 · 2/4 |\n| 0.7 | 1/2 · 0/4 |\n"
    )


def test_write_report_writes_the_page_the_chart_and_the_raw_results(tmp_path: Path) -> None:
    written = write_report(small_report(), tmp_path / "docs", per_question=True)
    assert [p.name for p in written] == ["eval.md", "eval.png", "eval.json"]
    page = (tmp_path / "docs" / "eval.md").read_text(encoding="utf-8")
    for needle in (
        "Measured on 2026-11-30",
        "synopsis eval q.jsonl --k 10",
        "summaries by smollm2-135m-instruct",
        "Best by MRR@10: **fused**",
        "a larger chat or embedding model may change the result",
        "held-out questions",
        "(eval.json)",
        "the gate at 0.6 leaves no hit or the question names something none of the first 5",
        "| fused | 1.00 (2/2) | 0.25 (1/4) |",
    ):
        assert needle in page
    assert (tmp_path / "docs" / "eval.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    raw = json.loads((tmp_path / "docs" / "eval.json").read_text(encoding="utf-8"))
    assert raw["metrics"][1]["recall"] == {"1": 0.75, "5": 1.0, "10": 1.0}


# -- against the real stack ----------------------------------------------------------------

TINY = """# Widget Toolkit

## 1. Installing the toolkit

Run `pip install widget-toolkit` and check the version with `widget --version`.

## 2. Frobnicating widgets

Call `frobnicate_widget(widget, strength=3)` to frobnicate a widget. The strength
goes from 1 to 10; values above 7 may crack the casing.

## 3. Recycling old widgets

Widgets older than five years go to the `recycle_bin()`: it melts them down and
returns the salvaged copper in grams.
"""


@pytest.mark.integration
def test_evaluation_on_a_tiny_ingested_document(cheap_settings: Settings, tmp_path: Path) -> None:
    """The runner on the real stack; its summaries only need to exist (`cheap_settings`)."""
    from service.synopsis import Synopsis  # noqa: PLC0415 - loads the whole pipeline

    source = tmp_path / f"widgets-{uuid.uuid4().hex[:8]}.md"
    source.write_text(TINY, encoding="utf-8")
    queries = [
        query("frobnicate_widget strength", (source.name, "2.")),
        query("how do I install it and see which version I have", (source.name, "1.")),
        query("recycle_bin copper", (source.name, "3.")),
        query("configure a Kubernetes ingress controller"),
    ]
    eval_settings = cheap_settings.with_overrides(collection_prefix="TestEval")
    with Synopsis.open(eval_settings) as synopsis:
        try:
            report = synopsis.ingest([str(source)])
            assert report.sources == 1
            result = evaluate(synopsis, queries, k=3, max_distance=0.9, sweep=[0.3])
        finally:
            synopsis.store.drop()

    assert [m.run for m in result.metrics] == [r.name for r in (*RUNS, *BASELINES)]
    ranks = {(r.run, r.query): r.rank for r in result.results}
    # A unique identifier finds its section first by keyword, with or without vectors.
    for run in ("originals", "bm25", "fused"):
        assert ranks[(run, "frobnicate_widget strength")] == 1
        assert ranks[(run, "recycle_bin copper")] == 1
    for m in result.metrics:
        assert (m.in_scope, m.out_of_scope) == (3, 1)
        assert 0.0 <= m.recall[1] <= m.mrr <= m.recall[3] <= 1.0
        assert m.gate_rejects_out_of_scope in (0.0, 1.0)
        assert m.gate_empties_in_scope is not None
    # Only three sections: every in-scope question finds its section in the top 3.
    assert {run: m.recall[3] for run, m in ((m.run, m) for m in result.metrics)} == {
        r.name: 1.0 for r in (*RUNS, *BASELINES)
    }
    assert len(result.sweep) == len(result.metrics)


def test_run_names_are_unique() -> None:
    names = [r.name for r in (*RUNS, *BASELINES)]
    assert len(set(names)) == len(names)
    assert all(isinstance(r, Run) for r in (*RUNS, *BASELINES))
