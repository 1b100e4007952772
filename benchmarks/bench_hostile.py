"""Benchmark: every hostile input of `tests/loaders/hostile.py`, once, each in its own process.

Run from the repository root:

    uv run python benchmarks/bench_hostile.py [--case NAME ...] [--no-write]

The HTTP cases are served by `tests.loaders.hostile.HostileServer` in this process; each
case is loaded (and, if it loads, chunked) by `python -m tests.loaders.hostile CASE URL`
in a fresh process, killed after `--limit` seconds. Per case: the outcome (`refused`
with the loader's reason, `loaded` with its chunk count, or a failure: a crash, a hang,
or seconds or memory over the bounds), the wall time of load + chunk, and the process's
peak RSS (`ru_maxrss`) above what it held after its imports. The table goes to the
"Hostile input" section of docs/reliability.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from report import cpu_model, load_text, write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.loaders.hostile import CASES, FILES, hostile_server  # noqa: E402

#: The bounds every case must stay within. tests/loaders/test_hostile.py asserts each
#: case's outcome and memory; how long a case takes is measured here only.
MAX_SECONDS = 30.0
MAX_RSS_MB = 500.0
COMMAND = "uv run python benchmarks/bench_hostile.py"


def run(case: str, base_url: str, limit: float) -> dict[str, object]:
    """One case in a fresh process: its `Outcome` as a dict, or how it failed."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tests.loaders.hostile", case, base_url],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=limit,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"case": case, "outcome": "FAILED", "reasons": [f"hung: killed after {limit} s"]}
    if done.returncode != 0 or not done.stdout.strip():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {
            "case": case,
            "outcome": "FAILED",
            "reasons": [f"exit {done.returncode}: {last}"],
            "seconds": round(time.monotonic() - started, 1),
        }
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def verdict(result: dict[str, object]) -> str:
    """'' when the case stayed within the bounds, else why it did not."""
    if result["outcome"] == "FAILED":
        return "; ".join(map(str, result["reasons"]))  # type: ignore[call-overload]
    problems = []
    if float(result["seconds"]) > MAX_SECONDS:  # type: ignore[arg-type]
        problems.append(f"took {result['seconds']} s")
    rss = float(result["peak_rss_mb"]) - float(result["baseline_rss_mb"])  # type: ignore[arg-type]
    if rss > MAX_RSS_MB:
        problems.append(f"grew {rss:.0f} MB")
    if result["outcome"] == "refused" and not result["reasons"]:
        problems.append("refused without a reason")
    return "; ".join(problems)


def table(results: list[dict[str, object]]) -> str:
    lines = [
        "| case | outcome | reason (or chunks) | seconds | peak RSS MB (+ over imports) |",
        "|---|---|---|---|---|",
    ]
    for result in results:
        failure = verdict(result)
        outcome = f"**FAILED**: {failure}" if failure else str(result["outcome"])
        if result["outcome"] == "loaded":
            reason = f"{result['chunks']} chunks"
            if result["reasons"]:
                reason += "; " + "; ".join(map(str, result["reasons"]))  # type: ignore[call-overload]
        else:
            reasons = [str(r).split(": ", 1)[-1] for r in result.get("reasons", [])]  # type: ignore[attr-defined]
            reason = "; ".join(reasons)
        reason = reason.replace("|", "\\|")
        if "peak_rss_mb" in result:
            growth = float(result["peak_rss_mb"]) - float(result["baseline_rss_mb"])  # type: ignore[arg-type]
            rss = f"{result['peak_rss_mb']} (+{growth:.0f})"
        else:
            rss = "–"
        lines.append(
            f"| `{result['case']}` | {outcome} | {reason} | {result.get('seconds', '–')} | {rss} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", choices=CASES, help="only these cases")
    parser.add_argument("--limit", type=float, default=120.0, help="kill a case after N s")
    parser.add_argument("--no-write", action="store_true", help="print, do not write docs/")
    args = parser.parse_args()
    cases = args.case or CASES
    results = []
    with hostile_server() as server:
        for case in cases:
            result = run(case, server.base_url, args.limit)
            print(f"{case}: {result}", flush=True)
            results.append(result)
    failures = [r["case"] for r in results if verdict(r)]
    files = sum(1 for case in cases if case in FILES)
    body = "\n".join(
        [
            "## Hostile input",
            "",
            f"`{COMMAND}` (figures of {time.strftime('%Y-%m-%d')}, CPU {cpu_model()},"
            f" load {load_text()}): {len(cases)} cases, {files} files and"
            f" {len(cases) - files} served by a local HTTP server, generated by"
            " `tests/loaders/hostile.py`. Each case runs in a fresh process: `loaders.load`"
            " with `timeout=5`, `fetch_deadline=10`, `max_bytes=20000000` and `on_error`, then"
            " `splitters.chunk_documents` over what loaded. Seconds are load + chunk; RSS"
            " is the process's peak (`ru_maxrss`), with its growth over the imports. A case"
            f" fails if it crashes, hangs, takes over {MAX_SECONDS:.0f} s or grows over"
            f" {MAX_RSS_MB:.0f} MB. `tests/loaders/test_hostile.py` asserts each case's"
            " outcome with the exact reason, that the loader hangs up on an endless"
            " response, and the memory bound; the seconds are measured here only.",
            "",
            table(results),
            "",
            f"**{len(cases)} cases, {len(failures)} failures**"
            + (f": {', '.join(map(str, failures))}." if failures else "."),
            "",
            "Before `loaders/bodies.py` (commit c7a0272), two cases failed: the stacked gzip"
            " bomb took 4,368 MB of RSS and 21 s before the size cap was checked (httpx"
            " inflates a whole read at a time, and its second decoder all of the first's"
            " output), and the slow-loris trickle was killed after 60 s (httpx's timeouts are"
            " per read); the single gzip bomb grew 164 MB instead of 59. Until commit 48ef78d"
            " the splitter never cut a line: the 20 MB one-line page was one chunk of about 4"
            " million tokens (the byte soup and the nested quotes one each), which the embedder"
            " truncated. Lines over the limit are cut now; an ingest stores each distinct chunk"
            " once (the one-line page: 2), and a source of more distinct chunks than"
            " `SYNOPSIS_MAX_CHUNKS_PER_SOURCE` (2,000) is refused before anything of it is"
            " written, since each chunk costs a model call. Until `loaders/deadlines.py`"
            " (2026-12-01) response headers trickled a byte at a time (`http-slow-headers`)"
            " were bounded by nothing but the per-read timeout: the loaders' client now reads"
            " through a network backend whose every read ends at the fetch deadline. Through"
            " the HTTP API every case is tested as an upload or a URL job:"
            " `tests/service/api/test_api_hostile.py`.",
        ]
    )
    print()
    print(body)
    if not args.no_write:
        write_section(ROOT / "docs" / "reliability.md", "hostile", body)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
