"""The faithfulness figures of docs/summary-quality.md, from the labels in eval/summaries/.

    uv run python scripts/faithfulness_report.py            # print, and rewrite the doc's section
    uv run python scripts/faithfulness_report.py --print    # print only

No model and no stack: it reads the sampled chunks (`chunks.jsonl`) and the labeled
summaries (`summaries.jsonl`, written by scripts/sample_summaries.py and labeled by
hand), runs the summary guard on each first attempt as an ingest would, and reports:

- the `invented` check's precision and recall against the labels (positive: labeled
  unfaithful), per corpus, on the tuning corpus (the tutorial) and on the two held out;
- the same for the whole guard (any reason);
- per model, the share of unfaithful summaries among its first attempts (no check), and
  among what the guard would store: the first attempt if it passes, else the strict
  retry if that passes (its own label), else the extractive fallback (no generated
  summary; quoted from the chunk).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service.ingest.quality import QualityThresholds, detect_invented, validate_summary
from service.ingest.summarize import clean_for_prompt

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "eval" / "summaries"
DOC = ROOT / "docs" / "summary-quality.md"
MARK = "faithfulness"
TUNING = ("tutorial",)  # the check was tuned on this corpus's labels only
CORPORA = ("tutorial", "mkdocs", "rustbook")
MODELS = ("smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@dataclass
class Confusion:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, flagged: bool, unfaithful: bool) -> None:
        if flagged and unfaithful:
            self.tp += 1
        elif flagged:
            self.fp += 1
        elif unfaithful:
            self.fn += 1
        else:
            self.tn += 1

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    def precision(self) -> str:
        flagged = self.tp + self.fp
        return f"{self.tp / flagged:.2f}" if flagged else "–"

    def recall(self) -> str:
        positive = self.tp + self.fn
        return f"{self.tp / positive:.2f}" if positive else "–"

    def row(self, name: str) -> str:
        return (
            f"| {name} | {self.n} | {self.tp + self.fn} | {self.tp + self.fp} | {self.tp} | "
            f"{self.precision()} | {self.recall()} |"
        )


def pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.1f} %)" if whole else "–"


def reasons_of(
    row: dict[str, Any], chunks: dict[str, dict[str, Any]], thresholds: QualityThresholds
) -> list[str]:
    """What the guard flags in the summary `row` of its chunk."""
    chunk = chunks[row["chunk_id"]]
    return validate_summary(
        row["summary"],
        clean_for_prompt(chunk["content"]),
        chunk["headers"],
        thresholds,
        title=chunk["title"],
    )


def build(thresholds: QualityThresholds) -> str:
    chunks = {row["chunk_id"]: row for row in read_jsonl(DATA / "chunks.jsonl")}
    rows = read_jsonl(DATA / "summaries.jsonl")
    by_key = {(r["chunk_id"], r["model"], r["attempt"]): r for r in rows}
    unlabeled = [
        r
        for r in rows
        if r["label"] not in ("faithful", "unfaithful")
        and not (r["attempt"] == "strict" and reasons_of(r, chunks, thresholds))
    ]

    def reasons(row: dict[str, Any]) -> list[str]:
        return reasons_of(row, chunks, thresholds)

    def invented(row: dict[str, Any]) -> bool:
        chunk = chunks[row["chunk_id"]]
        view = clean_for_prompt(chunk["content"])
        return bool(
            detect_invented(
                row["summary"], view, chunk["headers"], thresholds, title=chunk["title"]
            )
        )

    check: dict[str, Confusion] = defaultdict(Confusion)
    guard: dict[str, Confusion] = defaultdict(Confusion)
    labeled_first: Counter[tuple[str, str]] = Counter()
    unfaithful_first: Counter[tuple[str, str]] = Counter()
    stored: Counter[tuple[str, str, str]] = Counter()  # (model, corpus, outcome)
    missing_retries: list[str] = []
    passed: Counter[tuple[str, str]] = Counter()
    passed_bad: Counter[tuple[str, str]] = Counter()
    for row in rows:
        if row["attempt"] != "first" or row["label"] is None:
            continue
        corpus, model, bad = row["corpus"], row["model"], row["label"] == "unfaithful"
        held = "tuning" if corpus in TUNING else "held out"
        flagged = reasons(row)
        for key in (corpus, held, "all"):
            check[key].add(invented(row), bad)
            guard[key].add(bool(flagged), bad)
        labeled_first[model, corpus] += 1
        unfaithful_first[model, corpus] += bad
        if not flagged:
            passed[model, corpus] += 1
            passed_bad[model, corpus] += bad
            stored[model, corpus, "unfaithful" if bad else "faithful"] += 1
            continue
        # A retry the guard flags again is replaced by the extractive summary: its label
        # does not matter (only the retries that pass were labeled).
        retry = by_key.get((row["chunk_id"], model, "strict"))
        if retry is not None and reasons(retry):
            stored[model, corpus, "extractive"] += 1
        elif retry is None or retry["label"] is None:
            missing_retries.append(f"{model} {row['chunk_id']}")
            stored[model, corpus, "unknown"] += 1
        else:
            stored[
                model, corpus, "unfaithful" if retry["label"] == "unfaithful" else "faithful"
            ] += 1

    lines = [
        f"Thresholds: at least {thresholds.max_invented_claims} unsupported claim(s), or an "
        f"unsupported share above {thresholds.max_unsupported_share:g}. Summaries: "
        f"{len(rows)}; without a label: {len(unlabeled)} (a strict retry that the guard "
        "flags again needs none: the extractive summary replaces it).",
        "",
        "**The `invented` check against the labels** (positive: labeled unfaithful; first "
        "attempts of every model; tuned on the tutorial only):",
        "",
        "| sample | summaries | unfaithful | flagged | both | precision | recall |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *(check[key].row(key) for key in (*CORPORA, "tuning", "held out", "all") if check[key].n),
        "",
        "**The whole guard** (any reason: `invented`, `drift`, `verbatim`, …):",
        "",
        "| sample | summaries | unfaithful | flagged | both | precision | recall |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *(guard[key].row(key) for key in (*CORPORA, "tuning", "held out", "all") if guard[key].n),
        "",
        "**Unfaithful summaries per model.** *No check*: the first attempts labeled "
        "unfaithful. *Guard, no retry*: the first attempts the guard passes, and how many of "
        "those are unfaithful (every flagged one replaced by the extractive fallback). *Guard "
        "with retry*, what an ingest stores: the first attempt if it passes, else the strict "
        "retry if it passes (its own label), else the extractive fallback; the unfaithful "
        "share is of the generated summaries stored.",
        "",
        "| model | corpus | no check: unfaithful | guard passes | of those unfaithful | "
        "guard with retry: generated unfaithful | extractive |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for model in MODELS:
        for corpus in (*CORPORA, "all"):
            wanted = CORPORA if corpus == "all" else (corpus,)
            first = sum(labeled_first[model, c] for c in wanted)
            if not first:
                continue
            bad = sum(unfaithful_first[model, c] for c in wanted)
            ok = sum(passed[model, c] for c in wanted)
            ok_bad = sum(passed_bad[model, c] for c in wanted)
            outcome = Counter({o: sum(stored[model, c, o] for c in wanted) for o in
                               ("faithful", "unfaithful", "extractive", "unknown")})  # fmt: skip
            generated = outcome["faithful"] + outcome["unfaithful"]
            if outcome["unknown"]:
                retried = f"– ({outcome['unknown']} retries not labeled)"
                extractive = "–"
            else:
                retried = pct(outcome["unfaithful"], generated)
                extractive = pct(outcome["extractive"], first)
            lines.append(
                f"| {model} | {corpus} | {pct(bad, first)} | {pct(ok, first)} | "
                f"{pct(ok_bad, ok)} | {retried} | {extractive} |"
            )
    stored_path = DATA / "stored.jsonl"
    if stored_path.exists():
        kept = read_jsonl(stored_path)
        lines += [
            "",
            "**Summaries stored by an ingest** (`stored.jsonl`: the summaries an index holds "
            "for the sampled chunks, read back, generated ones labeled; the guard named in "
            "each row was the one of that ingest). The last columns: what the current check "
            "flags among the stored generated summaries, against their labels.",
            "",
            "| index | model | guard at ingest | chunks | generated stored: unfaithful | "
            "extractive | current check: precision | recall |",
            "|---|---|---|---:|---:|---:|---:|---:|",
        ]
        for index in dict.fromkeys(r["index"] for r in kept):
            mine = [r for r in kept if r["index"] == index]
            generated = [r for r in mine if r["kind"] == "llm"]
            bad = sum(r["label"] == "unfaithful" for r in generated)
            confusion = Confusion()
            for r in generated:
                confusion.add(invented(r), r["label"] == "unfaithful")
            lines.append(
                f"| {index} | {mine[0]['model']} | {mine[0]['guard']} | {len(mine)} | "
                f"{pct(bad, len(generated))} | {pct(len(mine) - len(generated), len(mine))} | "
                f"{confusion.precision()} | {confusion.recall()} |"
            )
    if missing_retries:
        lines += ["", f"Flagged first attempts without a labeled retry: {len(missing_retries)}."]
    return "\n".join(lines)


def write_section(path: Path, key: str, body: str) -> None:
    begin, end = f"<!-- {key} -->", f"<!-- /{key} -->"
    text = path.read_text(encoding="utf-8")
    block = f"{begin}\n{body.rstrip()}\n{end}"
    if begin in text and end in text:
        before, rest = text.split(begin, 1)
        text = before + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print", action="store_true", help="print only; leave the doc")
    parser.add_argument("--max-invented-claims", type=int, default=None)
    parser.add_argument("--max-unsupported-share", type=float, default=None)
    args = parser.parse_args()
    defaults = QualityThresholds()
    thresholds = QualityThresholds(
        max_invented_claims=defaults.max_invented_claims
        if args.max_invented_claims is None
        else args.max_invented_claims,
        max_unsupported_share=defaults.max_unsupported_share
        if args.max_unsupported_share is None
        else args.max_unsupported_share,
    )
    body = build(thresholds)
    print(body)
    if not args.print:
        write_section(DOC, MARK, body)


if __name__ == "__main__":
    main()
