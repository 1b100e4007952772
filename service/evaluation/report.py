"""The evaluation as Markdown (a table, a page) and a chart."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

from service.evaluation.metrics import cutoffs
from service.evaluation.runner import EvaluationReport, GatePoint

__all__ = ["plot", "render_document", "render_markdown", "render_sweep", "write_report"]


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
