"""Ask a chat model whether each labeled summary is supported by its chunk, and measure
that judge against the labels of eval/summaries/ (docs/summary-quality.md, section 6).

    uv run python scripts/judge_summaries.py run JUDGE [--model M]   # heavy: model calls
    uv run python scripts/judge_summaries.py report [--judge J]      # light: no model

`run` sends every labeled summary of `--model` (default: the configured chat model) in
eval/summaries/summaries.jsonl, with its chunk as the summarizer saw it (the header path
once, then `clean_for_prompt(content)`), to the chat model JUDGE on the configured
Ollama, and asks for one word, YES (the chunk states everything the summary says) or
NO. It keeps the probability of NO against YES from the reply's first token (Ollama's
`logprobs`) and appends one line per summary to eval/summaries/judged.jsonl (skipping
what is there). The verdict is NO when that probability is above 0.5: no threshold is
fitted to the labels.

`report` prints the judge's precision and recall (positive: labeled unfaithful) per
corpus and attempt, and what an ingest with the guard and the judge would store for the
sampled chunks: the first attempt if both pass it, else the extractive summary (the
strict retry off, as by default), and with the retry on.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict
from typing import Any

import httpx
from sample_summaries import CHUNKS, OUT, SUMMARIES, read_jsonl

from service.connections import ensure_stack, ollama_base_url
from service.ingest.quality import QualityThresholds, validate_summary
from service.ingest.summarize import clean_for_prompt
from service.settings import Settings

JUDGED = OUT / "judged.jsonl"

JUDGE_SYSTEM_PROMPT = (
    "You check summaries of technical documentation against the section they summarize. "
    "Answer with one word: YES or NO."
)
JUDGE_QUESTION = (
    "Does the section itself state everything the summary says? Answer NO if the summary "
    "adds any fact, name, number, purpose, benefit or behaviour that the section does not "
    "state, or says something the section contradicts. Answer YES only if every statement "
    "of the summary is supported by the section."
)


def judge_messages(chunk: dict[str, Any], summary: str) -> list[dict[str, str]]:
    topic = " › ".join(chunk["headers"]) or chunk["title"]
    section = clean_for_prompt(chunk["content"])
    user = (
        f"Section (Topic: {topic}):\n<<<\n{section}\n>>>\n\n"
        f"Summary:\n<<<\n{summary}\n>>>\n\n{JUDGE_QUESTION}"
    )
    return [{"role": "system", "content": JUDGE_SYSTEM_PROMPT}, {"role": "user", "content": user}]


def p_no(reply: dict[str, Any]) -> float:
    """P(NO) / (P(NO) + P(YES)) over the first token's top alternatives (case and spaces
    ignored); 0.5 when neither appears."""
    mass = {"YES": 0.0, "NO": 0.0}
    first = (reply.get("logprobs") or [{}])[0]
    for alternative in first.get("top_logprobs") or []:
        word = alternative["token"].strip().upper()
        if word in mass:
            mass[word] += math.exp(alternative["logprob"])
    total = mass["YES"] + mass["NO"]
    return mass["NO"] / total if total else 0.5


def run(settings: Settings, judge: str, model: str) -> None:
    ensure_stack(settings)
    chunks = {row["chunk_id"]: row for row in read_jsonl(CHUNKS)}
    done = {(r["judge"], r["chunk_id"], r["model"], r["attempt"]) for r in read_jsonl(JUDGED)}
    rows = [
        r
        for r in read_jsonl(SUMMARIES)
        if r["model"] == model
        and r.get("label")
        and (judge, r["chunk_id"], model, r["attempt"]) not in done
    ]
    url = f"{ollama_base_url(settings)}/api/chat"
    started = time.monotonic()
    with httpx.Client(timeout=600.0) as http, JUDGED.open("a") as out:
        for index, row in enumerate(rows, 1):
            clock = time.monotonic()
            reply = http.post(
                url,
                json={
                    "model": judge,
                    "stream": False,
                    "messages": judge_messages(chunks[row["chunk_id"]], row["summary"]),
                    "logprobs": True,
                    "top_logprobs": 10,
                    "options": {
                        "temperature": 0,
                        "num_predict": 1,
                        "num_ctx": settings.models.chat_context_tokens,
                    },
                },
            )
            reply.raise_for_status()
            body = reply.json()
            record = {
                "judge": judge,
                "chunk_id": row["chunk_id"],
                "corpus": row["corpus"],
                "model": model,
                "attempt": row["attempt"],
                "p_unsupported": round(p_no(body), 4),
                "reply": body["message"]["content"],
                "prompt_tokens": body.get("prompt_eval_count"),
                "seconds": round(time.monotonic() - clock, 2),
            }
            out.write(json.dumps(record) + "\n")
            out.flush()
            print(
                f"{index}/{len(rows)} {record['corpus']} {record['attempt']} "
                f"p={record['p_unsupported']:.2f} label={row['label']} {record['seconds']} s",
                file=sys.stderr,
            )
    print(f"{len(rows)} judged in {time.monotonic() - started:.0f} s", file=sys.stderr)


def _pr(pairs: list[tuple[bool, bool]]) -> str:
    """`pairs`: (labeled unfaithful, flagged)."""
    both = sum(1 for u, f in pairs if u and f)
    unfaithful = sum(1 for u, _ in pairs if u)
    flagged = sum(1 for _, f in pairs if f)
    precision = f"{both / flagged:.2f}" if flagged else "–"
    recall = f"{both / unfaithful:.2f}" if unfaithful else "–"
    return f"| {len(pairs)} | {unfaithful} | {flagged} | {both} | {precision} | {recall} |"


def report(judge: str) -> str:
    chunks = {row["chunk_id"]: row for row in read_jsonl(CHUNKS)}
    labels = {(r["chunk_id"], r["model"], r["attempt"]): r for r in read_jsonl(SUMMARIES)}
    judged = [r for r in read_jsonl(JUDGED) if r["judge"] == judge]
    thresholds = QualityThresholds.from_settings(Settings.from_env())

    def guard_flags(row: dict[str, Any]) -> bool:
        chunk = chunks[row["chunk_id"]]
        reasons = validate_summary(
            row["summary"],
            clean_for_prompt(chunk["content"]),
            chunk["headers"],
            thresholds,
            title=chunk["title"],
        )
        return bool(reasons)

    lines = [f"Judge `{judge}`; verdict NO when P(NO) > P(YES).", ""]
    lines += [
        "| model | attempt | corpus | summaries | unfaithful | judged NO | both | precision "
        "| recall |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    groups: dict[tuple[str, str, str], list[tuple[bool, bool]]] = defaultdict(list)
    verdicts: dict[tuple[str, str, str], bool] = {}
    for r in judged:
        label = labels[(r["chunk_id"], r["model"], r["attempt"])]["label"]
        flagged = r["p_unsupported"] > 0.5
        verdicts[(r["chunk_id"], r["model"], r["attempt"])] = flagged
        for corpus in (r["corpus"], "all"):
            groups[(r["model"], r["attempt"], corpus)].append((label == "unfaithful", flagged))
    for (model, attempt, corpus), pairs in sorted(groups.items()):
        lines.append(f"| {model} | {attempt} | {corpus} " + _pr(pairs))

    lines += [
        "",
        "What an ingest would store for the sampled chunks (generated: unfaithful / stored "
        "generated; the rest extractive):",
        "",
    ]
    lines += [
        "| model | corpus | guard | guard + judge | guard + judge, strict retry on |",
        "|---|---|---|---|---|",
    ]
    stored: dict[tuple[str, str], list[list[int]]] = defaultdict(lambda: [[0, 0], [0, 0], [0, 0]])
    for (chunk_id, model, attempt), flagged in verdicts.items():
        if attempt != "first":
            continue
        first = labels[(chunk_id, model, "first")]
        corpus = first["corpus"]
        guard_bad = guard_flags(first)
        choices: list[dict[str, Any] | None] = [
            None if guard_bad else first,
            None if guard_bad or flagged else first,
        ]
        retry = labels.get((chunk_id, model, "strict"))
        if guard_bad or flagged:
            ok = (
                retry is not None
                and (chunk_id, model, "strict") in verdicts
                and not verdicts[(chunk_id, model, "strict")]
                and not guard_flags(retry)
            )
            choices.append(retry if ok else None)
        else:
            choices.append(first)
        for key in ((model, corpus), (model, "all")):
            for column, chosen in enumerate(choices):
                if chosen is not None:
                    stored[key][column][1] += 1
                    stored[key][column][0] += chosen["label"] == "unfaithful"
    for (model, corpus), columns in sorted(stored.items()):
        cells = [
            f"{bad}/{total}" + (f" ({100 * bad / total:.1f} %)" if total else "")
            for bad, total in columns
        ]
        lines.append(f"| {model} | {corpus} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run")
    run_parser.add_argument("judge")
    run_parser.add_argument("--model", default="")
    report_parser = sub.add_parser("report")
    report_parser.add_argument("--judge", default="")
    args = parser.parse_args()
    settings = Settings.from_env()
    if args.command == "run":
        run(settings, args.judge, args.model or settings.models.chat_model)
    else:
        print(report(args.judge or settings.models.chat_model))


if __name__ == "__main__":
    main()
