"""Benchmark: does rewriting a follow-up find its section better than searching it as asked?

Run from the repository root, against the local stack with the Python tutorial indexed in
the default collections (`uv run synopsis ingest /usr/share/doc/python3.11/html/tutorial/`):

    uv run python benchmarks/bench_conversations.py

`eval/followups.jsonl` holds two-turn questions over the tutorial: a first question, then
a follow-up that leans on it ("and how do I make it count down instead?"), and where the
follow-up's answer is. For each way of making the follow-up's query
(`service.query.rewrite`: `none`, `previous`, `model`) the follow-up is searched in the
default mode, k = 10, and ranked as `synopsis eval` ranks (a hit is relevant when its
source and one of its headers match). The first turn is searched as asked, and its
query is the earlier query the rewrite reads. Writes the `conversations` section of
docs/conversations.md, with every query the model wrote.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import time
from pathlib import Path

from report import cpu_model, load_text, write_section

from service.evaluation.metrics import first_relevant_rank, mrr_at, recall_at, unique_hits
from service.evaluation.questions import Expectation, Query
from service.models.chat import answer_model
from service.query.rewrite import QueryRewriter, RewriteMethod
from service.query.search import search_request
from service.settings import Settings
from service.synopsis import Synopsis

REPORT = Path("docs/conversations.md")
METHODS: tuple[RewriteMethod, ...] = ("none", "previous", "model")
K = 10


def _pairs(path: Path) -> list[tuple[str, Query]]:
    pairs: list[tuple[str, Query]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        data = json.loads(line)
        first, follow_up = data["turns"]
        expect = tuple(Expectation(**item) for item in data["expect"])
        pairs.append((first, Query(text=follow_up, expect=expect, line=number)))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="eval/followups.jsonl", type=Path)
    args = parser.parse_args()
    settings = Settings.from_env()
    pairs = _pairs(args.set)
    ranks: dict[str, list[int | None]] = {method: [] for method in METHODS}
    written: list[tuple[str, str, str, int | None]] = []
    used_fallback = 0
    seconds = 0.0
    with Synopsis.open(settings) as synopsis:
        model = answer_model(settings)
        rewriters = {
            method: QueryRewriter(
                model if method == "model" else None,
                model_name=settings.models.resolved_answer_model,
                method=method,
                context_turns=settings.conversations.context_turns,
            )
            for method in METHODS
        }
        for first, follow_up in pairs:
            for method, rewriter in rewriters.items():
                started = time.monotonic()
                rewrite = rewriter.rewrite([first], follow_up.text)
                if method == "model":
                    seconds += time.monotonic() - started
                    used_fallback += rewrite.method == "previous"
                hits = unique_hits(synopsis.search(search_request(settings, rewrite.query, k=K)))
                rank = first_relevant_rank(follow_up, hits)
                ranks[method].append(rank)
                if method == "model":
                    written.append((follow_up.text, rewrite.query, rewrite.method, rank))
            print(f"{follow_up.line:3}: " + "  ".join(f"{m}={ranks[m][-1]}" for m in METHODS))
        for rewriter in rewriters.values():
            rewriter.close()

    body = [
        "## Follow-up rewrite",
        "",
        f"Measured {dt.date.today().isoformat()} with `uv run python "
        "benchmarks/bench_conversations.py` on the tutorial index: "
        f"{len(pairs)} two-turn questions of `{args.set}` (written before any of these "
        f"results), mode `{settings.search.mode}`, k = {K}; rewrites by "
        f"`{settings.models.resolved_answer_model}` ({seconds / max(1, len(pairs)):.1f} s per "
        f"rewrite on this machine; {platform.machine()}, {cpu_model()}, load {load_text()}).",
        "",
        "| follow-up searched as | Recall@1 | Recall@5 | Recall@10 | MRR@10 |",
        "|---|---:|---:|---:|---:|",
    ]
    labels = {
        "none": "asked (`none`)",
        "previous": "the first question, then the follow-up (`previous`)",
        "model": "the model's rewrite (`model`; `previous` when unusable)",
    }
    for method in METHODS:
        found = ranks[method]
        body.append(
            f"| {labels[method]} | {recall_at(found, 1):.3f} | {recall_at(found, 5):.3f} | "
            f"{recall_at(found, 10):.3f} | {mrr_at(found, 10):.3f} |"
        )
    body += [
        "",
        f"The model's reply was unusable (so `previous` was searched) for {used_fallback} of "
        f"{len(pairs)} follow-ups.",
        "",
        "What the model wrote (rank of the first relevant hit; — not in the top 10):",
        "",
        "| follow-up | searched | how | rank |",
        "|---|---|---|---:|",
    ]
    for text, query, how, rank in written:
        cell = query.replace("|", "\\|")
        body.append(f"| {text} | {cell} | {how} | {rank or '—'} |")
    write_section(REPORT, "conversations", "\n".join(body))
    print(f"wrote {REPORT}")


if __name__ == "__main__":
    main()
