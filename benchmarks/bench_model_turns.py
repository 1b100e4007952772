"""Benchmark: an ingest's summaries and its embeddings taking turns, or computing at once.

Run from the repository root, with the local stack up and nothing else using the CPU:

    uv run python benchmarks/bench_model_turns.py [--model M] [--page PATH] [--rounds R]
        [--max-tokens N]

Each round ingests the same page twice into fresh collections (no summary cache), once
with `SYNOPSIS_INGEST_EXCLUSIVE_MODEL_CALLS=true` (a batch of finished summaries is
embedded and attached while no summary call runs: `service.ingest.turns`) and once with
`false` (embedded while the model writes the next summaries); the order alternates
between rounds, so a noisy minute hurts both alike. It prints and writes (the
"model-turns" section of docs/benchmarks.md) each ingest's wall time, its stages, the
seconds the model server itself spent computing the summaries (Ollama's durations, as
wall-clock overlap) and how many summaries were extractive.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from report import cpu_model, load_text, write_section

from service.ingest.report import IngestReport
from service.settings import Settings
from service.synopsis import Synopsis

REPORT = Path("docs/benchmarks.md")
PAGE = Path("/usr/share/doc/python3.11/html/tutorial/controlflow.html")
MODES = {"turns": True, "together": False}


@dataclass
class Runs:
    """The ingests of one mode over the rounds."""

    reports: list[IngestReport] = field(default_factory=list)


def ingest_once(base: Settings, *, exclusive: bool, page: Path, tag: str) -> IngestReport:
    """Ingest `page` into fresh collections and drop them afterwards."""
    settings = base.with_overrides(
        collection_prefix=f"BenchTurns{tag}", ingest_exclusive_model_calls=exclusive
    )
    synopsis = Synopsis.open(settings)
    try:
        synopsis.store.drop()  # left by a stopped run
        return synopsis.ingest([str(page)])
    finally:
        synopsis.store.drop()
        synopsis.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--page", type=Path, default=PAGE)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=120, help="summary_max_tokens")
    parser.add_argument("--section", default="model-turns")
    args = parser.parse_args()

    base = Settings.from_env().with_overrides(
        chat_model=args.model, summary_max_tokens=args.max_tokens
    )
    load_before = load_text()
    runs = {mode: Runs() for mode in MODES}
    for round_index in range(args.rounds):
        order = list(MODES) if round_index % 2 == 0 else list(reversed(MODES))
        for mode in order:
            started = time.perf_counter()
            report = ingest_once(
                base, exclusive=MODES[mode], page=args.page, tag=f"{mode.title()}{round_index}"
            )
            runs[mode].reports.append(report)
            print(
                f"round {round_index + 1} {mode}: {time.perf_counter() - started:.1f} s; "
                f"{report.summary_line()}\n  "
                + ", ".join(f"{stage} {s:.1f} s" for stage, s in report.seconds.items())
                + f"\n  {report.model_line()}",
                flush=True,
            )
    load_after = load_text()

    lines = [
        "## Summaries and embeddings take turns (`SYNOPSIS_INGEST_EXCLUSIVE_MODEL_CALLS`): "
        f"{args.model}\n",
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC: `uv run python "
        f"benchmarks/bench_model_turns.py --model {args.model} --page {args.page} --rounds "
        f"{args.rounds} --max-tokens {args.max_tokens} --section {args.section}` on {cpu_model()} "
        f"({os.cpu_count()} cores), load {load_before} → {load_after}. Each ingest into "
        "fresh collections (no cached summary), the order of the two alternating by round.\n",
        "| mode | ingest s (each round) | summarize s | embed s | context s | model computing s "
        "| extractive | × of together |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    together = statistics.median(r.wall_seconds for r in runs["together"].reports)
    for mode, entry in runs.items():
        reports = entry.reports
        walls = [r.wall_seconds for r in reports]

        def median(stage: str, reports: list[IngestReport] = reports) -> float:
            return statistics.median(r.seconds[stage] for r in reports)

        lines.append(
            f"| {mode} | {' / '.join(f'{w:.1f}' for w in walls)} | {median('summarize'):.1f} | "
            f"{median('embed'):.1f} | {median('context'):.1f} | "
            f"{statistics.median(r.model.busy_seconds for r in reports):.1f} | "
            f"{'/'.join(str(r.extractive_summaries) for r in reports)} | "
            f"{together / statistics.median(walls):.2f} |"
        )
    lines.append(
        "\n*turns*: a batch of finished summaries is embedded and attached while no summary "
        "call runs (the default); *together*: while the model writes the next ones. "
        "*× of together*: how many times faster than *together* (higher is better). "
        "*model computing*: the wall-clock seconds in which Ollama computed at least one "
        "summary (its own durations).\n"
    )
    body = "\n".join(lines)
    print(body)
    write_section(REPORT, args.section, body)


if __name__ == "__main__":
    main()
