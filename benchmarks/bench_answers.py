"""Benchmark: how many answers pass the grounding check, on both question sets.

Run from the repository root, against the local stack with the Python tutorial indexed in
the default collections and the MkDocs manual under `SYNOPSIS_COLLECTION_PREFIX=Mkdocs`
(eval/README.md says how to ingest each):

    uv run python benchmarks/bench_answers.py            # ask, check, write docs/answers.md
    uv run python benchmarks/bench_answers.py --recheck  # check the stored replies again

Each question set is sampled the same fixed way: every third line, starting with the first
(`--stride 3`), at most 40 questions (`--limit 40`). Each question goes the way of
`Synopsis.ask`: retrieval with the answer gate (`answer_max_vector_distance`), the "I don't
know" paths without a model call, else one reply of the answer model, which the grounding
check (`service.query.grounding`) passes or replaces with the extractive answer.

The replies, with the passages they were written from, are kept in `docs/answers.json`
(not committed), written after every question: an interrupted run goes on where it
stopped, and `--recheck` recomputes every figure from them without a model call (the
check is a pure function of reply, passages and question). The figures go to the
`answers` section of docs/answers.md, with a sweep of `answer_min_support`. A relevant
passage is one where the question set expects the answer (eval/README.md).
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from report import cpu_model, load_text, write_section
from stored_answers import checker, hit_from, hit_record, load_records, save_records

from service.evaluation.questions import Query, load_queries
from service.query.answer import Answer, Answerer
from service.query.search import Hit, search_request
from service.settings import Settings
from service.synopsis import Synopsis

REPORT = Path("docs/answers.md")
RAW = Path("docs/answers.json")
#: Question set → collection prefix of its index (`--set NAME=PREFIX` chooses others).
SETS = {"tutorial": ("eval/tutorial.jsonl", ""), "mkdocs": ("eval/mkdocs.jsonl", "Mkdocs")}
#: Every question set `--set` may name.
QUESTION_SETS = {
    "tutorial": "eval/tutorial.jsonl",
    "mkdocs": "eval/mkdocs.jsonl",
    "rustbook": "eval/rustbook.jsonl",
}
SWEEP = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def sample(queries: list[Query], *, stride: int, limit: int) -> list[Query]:
    """Every `stride`-th question from the first, at most `limit`."""
    return queries[::stride][:limit]


def _hit_record(hit: Hit, query: Query) -> dict[str, Any]:
    return hit_record(hit) | {"relevant": query.is_relevant(hit)}


def ask(synopsis: Synopsis, query: Query, name: str) -> dict[str, Any]:
    """One question the way `Synopsis.ask` answers it, with the reply kept unchecked."""
    settings = synopsis.settings
    request = search_request(
        settings, query.text, max_vector_distance=settings.answers.max_vector_distance
    )
    hits = synopsis.search(request)
    answerer = synopsis.answerer
    refused = answerer.refusal(query.text, hits)
    record: dict[str, Any] = {
        "set": name,
        "line": query.line,
        "question": query.text,
        "in_scope": query.in_scope,
        "hits": [_hit_record(hit, query) for hit in hits],
        "refused": None,
        "reply": None,
        "seconds": None,
    }
    if refused is not None:
        record["refused"] = "names" if refused.missing_terms else "gate"
        return record
    start = time.perf_counter()
    record["reply"] = answerer.reply(query.text, hits)
    record["seconds"] = round(time.perf_counter() - start, 2)
    return record


def checked(record: dict[str, Any], answerer: Answerer) -> Answer | None:
    """The answer to show for a stored reply (None when no reply was asked for)."""
    if record["reply"] is None:
        return None
    hits = [hit_from(hit) for hit in record["hits"]]
    return answerer.finish(record["question"], hits, record["reply"])


def _reason_kind(reason: str) -> str:
    for prefix, kind in (
        ("code", "code"),
        ("name", "name"),
        ("cites", "citation"),
        ("sentence", "support"),
        ("repetition", "repetition"),
    ):
        if reason.startswith(prefix):
            return kind
    return "other"


def figures(records: list[dict[str, Any]], min_support: float) -> str:
    """The Markdown figures of one run at `min_support`."""
    answerer = checker(min_support)
    lines = [
        "| set | asked | refused, gate | refused, names | model replies | model said "
        '"I don\'t know" | of those quoted instead | passed (generated) | failed (extractive) '
        "| **pass share** | median s per reply | extractive answers quoting a relevant "
        "passage |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    reasons: dict[str, collections.Counter[str]] = {}
    for name in SETS:
        rows = [record for record in records if record["set"] == name]
        if not rows:
            continue
        kinds: collections.Counter[str] = collections.Counter()
        counter: collections.Counter[str] = collections.Counter()
        for record in rows:
            answer = checked(record, answerer)
            if answer is None:
                kinds[f"refused {record['refused']}"] += 1
                continue
            # An extractive answer without a grounding verdict quotes a refusal.
            quoted = answer.kind == "extractive" and answer.grounding is None
            kinds["quoted refusal" if quoted else answer.kind] += 1
            if answer.kind == "extractive" and record["hits"][0]["relevant"]:
                kinds["quoted relevant" if quoted else "extractive relevant"] += 1
            if answer.grounding is not None:
                counter.update({_reason_kind(reason) for reason in answer.grounding.reasons})
        reasons[name] = counter
        judged = kinds["generated"] + kinds["extractive"]
        share = f"{kinds['generated'] / judged:.0%}" if judged else "–"
        seconds = [record["seconds"] for record in rows if record["seconds"] is not None]
        median = f"{statistics.median(seconds):.1f}" if seconds else "–"
        said_no = kinds["refusal"] + kinds["quoted refusal"]
        lines.append(
            f"| {name} | {len(rows)} | {kinds['refused gate']} | {kinds['refused names']} | "
            f"{len(seconds)} | {said_no} | {kinds['quoted refusal']} (relevant first: "
            f"{kinds['quoted relevant']}) | {kinds['generated']} | {kinds['extractive']} | "
            f"**{kinds['generated']}/{judged} = {share}** | {median} | "
            f"{kinds['extractive relevant']}/{kinds['extractive']} |"
        )
    lines += [
        "",
        "Why the failed replies failed (a reply may fail for several reasons):",
        "",
        "| set | code not in the passages | name not in the passages | citation out of "
        "range | a sentence below the support threshold | repetition |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, counter in reasons.items():
        lines.append(
            f"| {name} | {counter['code']} | {counter['name']} | {counter['citation']} | "
            f"{counter['support']} | {counter['repetition']} |"
        )
    return "\n".join(lines)


def sweep(records: list[dict[str, Any]]) -> str:
    """Pass share per set at each `answer_min_support` of `SWEEP`."""
    header = "| answer_min_support | " + " | ".join(SETS) + " |"
    lines = [header, "|---:|" + "---:|" * len(SETS)]
    for threshold in SWEEP:
        answerer = checker(threshold)
        cells = []
        for name in SETS:
            answers = [
                answer
                for record in records
                if record["set"] == name
                and (answer := checked(record, answerer)) is not None
                and answer.kind != "refusal"
                and answer.grounding is not None  # a quoted refusal was not checked
            ]
            passed = sum(answer.kind == "generated" for answer in answers)
            cells.append(f"{passed}/{len(answers)}" if answers else "–")
        lines.append(f"| {threshold:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stride", type=int, default=3, help="Ask every n-th question.")
    parser.add_argument("--limit", type=int, default=40, help="At most this many per set.")
    parser.add_argument("--raw", type=Path, default=RAW, help="The stored replies.")
    parser.add_argument(
        "--recheck", action="store_true", help="Only check the stored replies again."
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=PREFIX",
        help="Ask question set NAME (tutorial, mkdocs, rustbook) over the index with "
        "collection prefix PREFIX; repeat for more. Default: the tutorial (no prefix) and "
        "MkDocs (Mkdocs).",
    )
    parser.add_argument(
        "--report", type=Path, default=REPORT, help="The Markdown file to write the figures to."
    )
    args = parser.parse_args()
    if args.set:
        SETS.clear()
        for item in args.set:
            name, _, prefix = item.partition("=")
            if name not in QUESTION_SETS:
                parser.error(f"--set {item}: no question set {name!r}")
            SETS[name] = (QUESTION_SETS[name], prefix)

    settings = Settings.from_env()
    records = load_records(args.raw)
    absent: list[str] = []
    if not args.recheck:
        done = {(record["set"], record["line"]) for record in records}
        for name, (path, prefix) in SETS.items():
            queries = sample(load_queries(Path(path)), stride=args.stride, limit=args.limit)
            with Synopsis.open(settings.with_overrides(collection_prefix=prefix)) as synopsis:
                if not synopsis.index_exists():
                    absent.append(f"{name} (no collections with prefix {prefix!r})")
                    continue
                for number, query in enumerate(queries, start=1):
                    if (name, query.line) in done:
                        continue
                    record = ask(synopsis, query, name)
                    records.append(record)
                    save_records(args.raw, records)
                    outcome = record["refused"] or f"{record['seconds']} s"
                    print(
                        f"{name} {number}/{len(queries)} line {query.line}: {outcome}",
                        file=sys.stderr,
                        flush=True,
                    )
    if not records:
        raise SystemExit("no stored replies: run without --recheck first")

    when = dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    measured = (
        f"Checked again {when} (replies stored in {args.raw})"
        if args.recheck
        else f"Measured {when} on {cpu_model()} ({platform.machine()}), load {load_text()}"
    )
    body = [
        f"{measured}; answer "
        f"model `{settings.models.resolved_answer_model}`, k = {settings.search.k}, gate "
        f"{settings.answers.max_vector_distance}, `answer_min_support` = "
        f"{settings.answers.min_support}. Sample: lines 1, {1 + args.stride}, "
        f"{1 + 2 * args.stride}, … of each set, at most {args.limit}. Command: "
        "`uv run python benchmarks/bench_answers.py` (`--recheck` recomputes these figures "
        "from the stored replies).",
        "",
        figures(records, settings.answers.min_support),
        "",
        "Pass share (passed / checked replies) at other thresholds, same replies:",
        "",
        sweep(records),
    ]
    if absent:
        body += ["", "Not measured: " + ", ".join(absent) + "."]
    write_section(args.report, "answers", "\n".join(body))
    print("\n".join(body))


if __name__ == "__main__":
    main()
