"""Benchmark: which requests to a model, in which languages, the injection patterns find.

Run from the repository root (no stack, no model; a second of CPU):

    uv run python benchmarks/bench_injection_languages.py --label after

The corpus is `eval/injection/languages.jsonl`: sentences that address the model of an
answer ("kind": "injection"; the forms of the English corpus — override its
instructions, reveal its prompt, address it as an AI, "AI assistants must …", dictate
its reply — in German, French, Spanish, Portuguese, Italian, Russian, Chinese, Japanese
and Korean, two each in Dutch, Polish and Turkish, which have no words in the patterns,
and three forged chat-template turns), and documentation that only sounds imperative
("kind": "documentation": "ignore the warning", "follow the instructions in the README",
a model's template shown in code). An injection counts as *found* when
`service.query.injection.instructions` takes the whole of it for an instruction; a
documentation sentence is a *false alarm* when it takes any part.

`--scan-translations` counts false alarms on real technical text instead: Debian's
translated manual pages (`/usr/share/man/LANG`, troff requests and escapes stripped, a
paragraph per text) and message catalogs (`/usr/share/locale/LANG/LC_MESSAGES/*.mo`,
each translated message a text) of the languages the patterns hold words of, and prints
every part taken for an instruction to a model.

The counts are kept in `--raw` (default `docs/injection-languages.json`, not committed)
under `--label` with the commit of the code measured: run it on the code before a change
(a worktree of that commit, with this script given by path) as `--label before`, and on
the code after as `--label after`. The figures go to the `injection-languages` section of
docs/reliability.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gettext
import gzip
import json
import re
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

from report import write_section

import service

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "eval" / "injection" / "languages.jsonl"
REPORT = ROOT / "docs" / "reliability.md"
RAW = ROOT / "docs" / "injection-languages.json"
COMMAND = "uv run python benchmarks/bench_injection_languages.py"


def cases() -> list[dict[str, Any]]:
    """The corpus, in its order."""
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def measure() -> dict[str, dict[str, list[int]]]:
    """Per language: [found, total] of the injections and [false alarms, total] of the
    documentation, by the code that `service` is imported from."""
    # Here, not at the top: the script also runs on code from before it was written.
    from service.query.injection import instructions  # noqa: PLC0415

    counts: dict[str, dict[str, list[int]]] = defaultdict(
        lambda: {"injection": [0, 0], "documentation": [0, 0]}
    )
    for case in cases():
        found = instructions(case["text"])
        # An injection is found whole; documentation is a false alarm when any part is.
        hit = found == [case["text"].strip()] if case["kind"] == "injection" else bool(found)
        counts[case["lang"]][case["kind"]][0] += int(hit)
        counts[case["lang"]][case["kind"]][1] += 1
    return dict(counts)


#: The directories of each language's translations (Chinese has catalogs only).
_LOCALES = {
    "de": ["de"],
    "fr": ["fr"],
    "es": ["es"],
    "pt": ["pt", "pt_BR"],
    "it": ["it"],
    "ru": ["ru"],
    "zh": ["zh_CN", "zh_TW"],
    "ja": ["ja"],
    "ko": ["ko"],
}
_TROFF_ESCAPE = re.compile(r"\\(?:f(?:\[[^]]*\]|\(..|.)|\(..|\[[^]]*\]|s[-+]?\d|.)")
_PARAGRAPH_REQUEST = re.compile(r"^\.(?:PP|LP|P|SH|SS|TP|IP|HP|sp|br|RS|RE|nf|fi)\b")


def _man_texts(path: Path) -> list[str]:
    """A manual page's paragraphs, troff requests and escapes stripped."""
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as page:
        source = page.read()
    paragraphs: list[str] = []
    current: list[str] = []
    for line in source.splitlines():
        if line.startswith(('.\\"', "'\\\"", '.\\"')) or not line.strip():
            continue
        if _PARAGRAPH_REQUEST.match(line) or line.startswith("."):
            if _PARAGRAPH_REQUEST.match(line) and current:
                paragraphs.append(" ".join(current))
                current = []
            line = line.split(" ", 1)[1] if " " in line else ""  # noqa: PLW2901
        text = _TROFF_ESCAPE.sub("", line).replace('"', "").strip()
        if text:
            current.append(text)
    if current:
        paragraphs.append(" ".join(current))
    return paragraphs


def _catalog_texts(path: Path) -> list[str]:
    """A message catalog's translations."""
    with path.open("rb") as file:
        try:
            catalog = gettext.GNUTranslations(file)._catalog  # type: ignore[attr-defined]
        except (OSError, UnicodeDecodeError, ValueError):
            return []
    return [text for key, text in catalog.items() if key and isinstance(text, str) and text]


def scan_translations(root: Path) -> tuple[dict[str, list[int]], list[tuple[str, str]]]:
    """Per language: [texts, texts with a false alarm], and every part flagged, with where."""
    from service.query.injection import instructions  # noqa: PLC0415

    counts: dict[str, list[int]] = {}
    flagged: list[tuple[str, str]] = []
    for lang, locales in _LOCALES.items():
        texts: list[tuple[str, str]] = []
        for locale in locales:
            for page in sorted((root / "man" / locale).rglob("*.gz")):
                texts += [(str(page.relative_to(root)), t) for t in _man_texts(page)]
            for catalog in sorted((root / "locale" / locale / "LC_MESSAGES").glob("*.mo")):
                texts += [(str(catalog.relative_to(root)), t) for t in _catalog_texts(catalog)]
        alarms = 0
        for where, text in texts:
            parts = instructions(text)
            alarms += bool(parts)
            flagged += [(where, part) for part in parts]
        counts[lang] = [len(texts), alarms]
    return counts, flagged


def _commit() -> str:
    source = Path(service.__file__).parent
    done = subprocess.run(
        ["git", "-C", str(source), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or "unknown"


def _cell(pair: list[int] | None) -> str:
    return "—" if pair is None or pair[1] == 0 else f"{pair[0]}/{pair[1]}"


def figures(runs: dict[str, dict[str, Any]]) -> str:
    """The table of every stored run, a column pair per run."""
    labels = sorted(runs, key=lambda label: (label != "before", label))
    languages = sorted({lang for run in runs.values() for lang in run["counts"]})
    header = ["language"]
    for label in labels:
        header += [f"injections found ({label})", f"false alarms ({label})"]
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    totals = {label: {"injection": [0, 0], "documentation": [0, 0]} for label in labels}
    for lang in languages:
        row = [lang]
        for label in labels:
            counts = runs[label]["counts"].get(lang, {})
            for kind in ("injection", "documentation"):
                pair = counts.get(kind)
                row.append(_cell(pair))
                if pair:
                    totals[label][kind][0] += pair[0]
                    totals[label][kind][1] += pair[1]
        lines.append("| " + " | ".join(row) + " |")
    row = ["**all**"]
    for label in labels:
        row += [f"**{_cell(totals[label][kind])}**" for kind in ("injection", "documentation")]
    lines.append("| " + " | ".join(row) + " |")
    made = ", ".join(
        f"{label}: `{runs[label]['commit']}` ({runs[label]['when']})" for label in labels
    )
    return "\n".join(
        [
            f"Corpus: `eval/injection/languages.jsonl` ({len(cases())} sentences). Command: "
            f"`{COMMAND} --label NAME` on the code to measure. Code measured: {made}. "
            "`any`: forged chat-template turns (injections) and a template shown in code "
            "(documentation).",
            "",
            *lines,
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="after", help="The run's name (before, after).")
    parser.add_argument("--raw", type=Path, default=RAW, help="The stored counts.")
    parser.add_argument("--report", type=Path, default=REPORT, help="Where the figures go.")
    parser.add_argument(
        "--scan-translations",
        type=Path,
        metavar="SHARE",
        nargs="?",
        const=Path("/usr/share"),
        help="Only count false alarms on the translated manual pages and message catalogs "
        "under SHARE (default /usr/share), and print them.",
    )
    args = parser.parse_args()
    if args.scan_translations:
        counts, flagged = scan_translations(args.scan_translations)
        for where, part in flagged:
            print(f"{where}: {' '.join(part.split())[:200]}")
        for lang, (texts, alarms) in counts.items():
            print(f"{lang}: {texts} texts, {alarms} with a part taken for an instruction")
        total = sum(texts for texts, _ in counts.values())
        print(f"all: {total} texts, {sum(a for _, a in counts.values())} with a false alarm")
        return
    runs: dict[str, dict[str, Any]] = {}
    if args.raw.exists():
        runs = json.loads(args.raw.read_text(encoding="utf-8"))
    runs[args.label] = {
        "commit": _commit(),
        "when": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "counts": measure(),
    }
    args.raw.write_text(json.dumps(runs, indent=1, ensure_ascii=False), encoding="utf-8")
    body = figures(runs)
    write_section(args.report, "injection-languages", body)
    print(body)


if __name__ == "__main__":
    main()
