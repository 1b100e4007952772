"""Benchmark: where the local stack's Ollama spends the integration tests' time, by test.

Run from the repository root with the local stack up (`uv run synopsis stack up`) and
nothing else using the CPU:

    uv run python benchmarks/bench_test_model_time.py [PYTEST ARGS]   # default: -m integration

It runs pytest once with this file as a plugin, which writes each test's start and end
(wall clock), then reads the lines Ollama's server logged meanwhile
(`<data dir>/run/ollama.log`): each `POST /api/chat` and `/api/embed` with its latency.
Each call goes to the test that was running when the call began (its logged end minus
its latency; the log's clock has whole seconds, so a call that begins within a second of
a test's edge may go to its neighbour; calls between tests are counted as "between").
Latencies of calls in flight together overlap (an ingest keeps two summary calls in
flight), so a file's sum of latencies can exceed its wall time. Tests that start an
Ollama of their own log elsewhere and are not counted. The tables go to the
"test-model-time" section of docs/testing.md.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from report import cpu_model, load_text, write_section

from service.settings import Settings

#: Where the plugin (this module, inside the pytest process) writes the timeline.
TIMELINE_ENV = "BENCH_TEST_TIMELINE"

# -- the plugin: loaded by the pytest run as `-p bench_test_model_time` ----------------


def _record(nodeid: str, event: str) -> None:
    path = os.environ.get(TIMELINE_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"id": nodeid, "event": event, "t": time.time()}) + "\n")


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _record(nodeid, "start")


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    _record(nodeid, "end")


# -- reading the timeline and Ollama's log ---------------------------------------------

#: `[GIN] 2026/12/04 - 04:40:02 | 200 |  2.183s | 127.0.0.1 | POST "/api/chat"`
_GIN = re.compile(
    r"\[GIN\] (\d{4}/\d\d/\d\d) - (\d\d:\d\d:\d\d) \|\s*\d+ \|\s*(\S+) \|"
    r".*POST\s+\"/api/(chat|embed)\""
)
_UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


@dataclass(frozen=True)
class Call:
    kind: str  # "chat" or "embed"
    began: float  # wall clock, seconds since the epoch: the logged end minus the latency
    seconds: float  # the latency Ollama logged


def duration_seconds(text: str) -> float:
    """A Go duration as Ollama's log prints it ("2.18s", "812.4ms", "1m3.2s") in seconds."""
    total = 0.0
    for number, unit in re.findall(r"([\d.]+)(ns|µs|us|ms|s|m|h)", text):
        total += float(number) * {"m": 60.0, "h": 3600.0}.get(unit, _UNITS.get(unit, 0.0))
    return total


def read_calls(lines: list[str]) -> list[Call]:
    """The chat and embedding calls of Ollama's log lines, in local time as it logs them."""
    calls = []
    for line in lines:
        match = _GIN.search(line)
        if match:
            ended = datetime.strptime(f"{match[1]} {match[2]}", "%Y/%m/%d %H:%M:%S").timestamp()
            seconds = duration_seconds(match[3])
            calls.append(Call(match[4], ended + 0.5 - seconds, seconds))
    return calls


def read_spans(lines: list[str]) -> list[tuple[float, float, str]]:
    """(start, end, test id) of each test the plugin recorded, by start."""
    starts: dict[str, float] = {}
    spans = []
    for line in lines:
        event = json.loads(line)
        if event["event"] == "start":
            starts[event["id"]] = event["t"]
        elif event["id"] in starts:
            spans.append((starts.pop(event["id"]), event["t"], event["id"]))
    return sorted(spans)


def _tallies() -> defaultdict[str, dict[str, list[float]]]:
    """Per name: {"chat": [calls, seconds], "embed": [calls, seconds]}."""
    return defaultdict(lambda: {"chat": [0, 0.0], "embed": [0, 0.0]})


def attribute(
    calls: list[Call], spans: list[tuple[float, float, str]]
) -> dict[str, dict[str, list[float]]]:
    """For each test id (or "between"): {"chat": [count, seconds], "embed": [...]}."""
    found = _tallies()
    starts = [span[0] for span in spans]
    for call in calls:
        index = bisect.bisect_right(starts, call.began) - 1
        test = "between"
        if index >= 0 and call.began <= spans[index][1] + 0.5:
            test = spans[index][2]
        found[test][call.kind][0] += 1
        found[test][call.kind][1] += call.seconds
    return dict(found)


def by_file(per_test: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, list[float]]]:
    files = _tallies()
    for test, kinds in per_test.items():
        tally = files[test.split("::")[0]]
        for kind, (count, seconds) in kinds.items():
            tally[kind][0] += count
            tally[kind][1] += seconds
    return dict(files)


def table(rows: dict[str, dict[str, list[float]]], label: str, limit: int) -> str:
    ordered = sorted(rows.items(), key=lambda item: -item[1]["chat"][1])[:limit]
    lines = [
        f"| {label} | chat calls | chat s | embedding calls | embedding s |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, kinds in ordered:
        chat, embed = kinds["chat"], kinds["embed"]
        lines.append(
            f"| `{name}` | {chat[0]:.0f} | {chat[1]:.1f} | {embed[0]:.0f} | {embed[1]:.1f} |"
        )
    return "\n".join(lines)


def main(args: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent
    log = Settings.from_env().stack.data_dir / "run" / "ollama.log"
    offset = log.stat().st_size if log.exists() else 0
    timeline = Path(os.environ.get("TMPDIR", "/tmp")) / f"test-timeline-{os.getpid()}.jsonl"
    timeline.unlink(missing_ok=True)
    pytest_args = args or ["-m", "integration"]
    load_before = load_text()
    started = time.monotonic()
    env = {
        **os.environ,
        TIMELINE_ENV: str(timeline),
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(root / "benchmarks"), os.environ.get("PYTHONPATH")])
        ),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "bench_test_model_time", *pytest_args],
        cwd=root,
        env=env,
        check=False,
    )
    wall = time.monotonic() - started
    with log.open(encoding="utf-8", errors="replace") as handle:
        handle.seek(offset)
        calls = read_calls(handle.read().splitlines())
    per_test = attribute(calls, read_spans(timeline.read_text(encoding="utf-8").splitlines()))
    timeline.unlink(missing_ok=True)
    chat = [call for call in calls if call.kind == "chat"]
    embed = [call for call in calls if call.kind == "embed"]
    body = "\n\n".join(
        [
            "## Where the shared Ollama's time goes, by test",
            f"{datetime.now().astimezone():%Y-%m-%d %H:%M %Z}: `uv run python "
            f"benchmarks/bench_test_model_time.py {' '.join(pytest_args)}` on "
            f"{cpu_model()}, load {load_before} → {load_text()}; pytest "
            f"exit code {done.returncode}, {wall:.1f} s. {len(chat)} chat calls "
            f"({sum(c.seconds for c in chat):.0f} s of latencies) and {len(embed)} "
            f"embedding calls ({sum(c.seconds for c in embed):.0f} s). Latencies of calls in "
            "flight together overlap; a call goes to the test running when it began.",
            table(by_file(per_test), "test file", 25),
            table(per_test, "test", 25),
        ]
    )
    print(body)
    write_section(root / "docs" / "testing.md", "test-model-time", body)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
