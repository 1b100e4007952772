"""`synopsis eval`: score every search mode on a question set and write the report."""

from __future__ import annotations

import json
from pathlib import Path

import click

from service.cli import session
from service.cli.defaults import default_of
from service.cli.output import note
from service.settings import Settings

__all__ = ["evaluate"]


def _distances(value: str | None) -> list[float]:
    if not value:
        return []
    try:
        distances = sorted({float(part) for part in value.split(",") if part.strip()})
    except ValueError as exc:
        raise click.BadParameter(f"expected comma-separated numbers, not {value!r}") from exc
    if any(not 0 < distance <= 2 for distance in distances):
        raise click.BadParameter("every distance must be in (0, 2]")
    return distances


@click.command("eval")
@click.argument("queries", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--k",
    "k",
    type=click.IntRange(1, 100),
    default=10,
    show_default=True,
    help="Hits per search; Recall@1, @5 and @k and MRR@k are reported.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1),
    default=None,
    help=f"Hybrid balance of the Synopsis modes (default {default_of('search_alpha')}); "
    "the bm25 and vector baselines use 0 and 1.",
)
@click.option(
    "--max-distance",
    type=click.FloatRange(0, 2),
    default=None,
    help="Relevance gate to score (cosine distance; default SYNOPSIS_MAX_VECTOR_DISTANCE; "
    "0 = no gate columns).",
)
@click.option(
    "--sweep",
    default=None,
    help="Comma-separated gate distances to try, e.g. 0.5,0.6,0.7: one more pass each.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("docs"),
    show_default=True,
    help="Write NAME.md and NAME.png here (and NAME.json with --per-question).",
)
@click.option(
    "--name",
    default="eval",
    show_default=True,
    help="Base name of the files written, e.g. eval-mkdocs for a second question set.",
)
@click.option(
    "--per-question",
    is_flag=True,
    help="Also write NAME.json: every question's rank and hits (large; not kept in git).",
)
@click.option(
    "--only",
    default=None,
    help="Comma-separated run names to score (e.g. joint,originals) instead of all.",
)
@click.option(
    "--ablation",
    is_flag=True,
    help="Also score the parts of the joint mode one by one (the summary's vector, its "
    "words in BM25, the context vector, their weights).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 32),
    default=4,
    show_default=True,
    help="Questions searched at a time.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
@click.pass_obj
def evaluate(
    settings: Settings,
    queries: Path,
    k: int,
    alpha: float | None,
    max_distance: float | None,
    sweep: str | None,
    out_dir: Path,
    name: str,
    per_question: bool,
    only: str | None,
    ablation: bool,
    workers: int,
    as_json: bool,
) -> None:
    """Score every search mode on the question set QUERIES (JSONL) and write docs/eval.*."""
    from service import evaluation
    from service.evaluation.provenance import report_context

    questions = evaluation.load_queries(queries)
    distances = _distances(sweep)
    gate = settings.search.max_vector_distance if max_distance is None else max_distance
    alpha = settings.search.alpha if alpha is None else alpha
    command = [f"synopsis eval {queries}", f"--k {k}", f"--alpha {alpha:g}"]
    command += [f"--max-distance {gate:g}"] + (
        [f"--sweep {','.join(f'{d:g}' for d in distances)}"] if distances else []
    )
    command += ["--ablation"] if ablation else []
    command += [f"--only {only}"] if only else []
    runs = evaluation.RUNS + evaluation.BASELINES + (evaluation.ABLATIONS if ablation else ())
    if only:
        wanted = [name.strip() for name in only.split(",") if name.strip()]
        unknown = sorted(set(wanted) - {run.name for run in runs})
        if unknown:
            raise click.BadParameter(f"no run named {', '.join(unknown)}", param_hint="--only")
        runs = tuple(run for run in runs if run.name in wanted)
    command += [f"--name {name}"] if name != "eval" else []
    from service.query.search import search_request

    with session.open_synopsis(settings) as synopsis:
        stats = synopsis.stats()
        context = report_context(
            settings, stats, command=" ".join([*command, f"--out {out_dir}"]), queries=queries
        )
        report = evaluation.evaluate(
            synopsis,
            questions,
            k=k,
            alpha=alpha,
            summary=search_request(settings, "-").summary_use(),
            max_distance=gate,
            answer_k=settings.search.k,
            runs=runs,
            sweep=distances,
            workers=workers,
            context=context,
            on_progress=note,
        )
    written = evaluation.write_report(report, out_dir, name=name, per_question=per_question)
    if as_json:
        click.echo(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
    else:
        click.echo(evaluation.render_markdown(report), nl=False)
        for run in dict.fromkeys(point.run for point in report.sweep):
            chosen = evaluation.choose_gate(report.sweep, run)
            click.echo(
                f"gate for {run} (most out-of-scope rejected, ≤5% in-scope emptied): "
                f"{'none qualifies' if chosen is None else f'{chosen:g}'}"
            )
    note("wrote " + ", ".join(str(path) for path in written))
