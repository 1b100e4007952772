"""Benchmark: what an ingest costs with the local models, and what a re-ingest costs.

Run from the repository root (the local stack must be up, or startable):

    uv run python benchmarks/bench_ingest.py [--sources PAGE ...] [--tutorial-log FILE]

It ingests `--sources` (default: three small pages of the Python tutorial, 19 chunks; a
name without a slash is taken from the tutorial directory) into collections of their own
(`collection_prefix="BenchIngest"`, dropped first and at the end), so the summary cache
of the default collections does not help: every chunk is summarized by the LLM.

Reported, and written to the "ingestion" section of docs/benchmarks.md:

* the first ingest: wall time, the share of each stage (load, split, summarize, embed, context,
  write, and what no stage accounts for), LLM calls, wall time per summarized chunk,
  and the CPU the Ollama server and its runners used while chunks were being summarized
  (utime + stime from /proc of the pid in `<data_dir>/run/ollama.pid` and its children,
  read at the start and end of each source's summarize stage; the ingest writes every
  source's chunks first, then summarizes them source by source) — average cores busy, next
  to the whole machine's busy cores over the same intervals;
* the re-ingest of the unchanged sources: LLM calls (goal 0) and wall time as a share
  of the first ingest's (goal ≤ 5 %);
* the peak RSS of this process (VmHWM) after the first ingest;
* if `--tutorial-log` names the output of `time synopsis ingest <tutorial>/`, its
  summary line, its time per stage and `real`, quoted.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

from report import cpu_model, load_text, write_section

from service.ingest.report import IngestEvent, IngestReport
from service.settings import Settings
from service.synopsis import Synopsis

REPORT = Path("docs/benchmarks.md")
COMMAND = "uv run python benchmarks/bench_ingest.py"
TUTORIAL = Path("/usr/share/doc/python3.11/html/tutorial")
# Three small pages (19 chunks): a first ingest of the whole tutorial (216 chunks) costs
# about an hour of LLM time on two shared cores; pass --sources for more.
DEFAULT_SOURCES = ["interpreter.html", "venv.html", "floatingpoint.html"]
PREFIX = "BenchIngest"
TICKS = os.sysconf("SC_CLK_TCK")


def process_ticks(root: int) -> dict[int, int]:
    """utime + stime (clock ticks) of `root` and all its descendants, by pid."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # the process ended while we looked
        fields = stat[stat.rindex(")") + 2 :].split()
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        ticks[pid] = int(fields[11]) + int(fields[12])
    family = {root}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in family and pid not in family:
                family.add(pid)
                grew = True
    return {pid: ticks[pid] for pid in family if pid in ticks}


def machine_busy_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all cores since boot, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return sum(values) - idle, sum(values)


@dataclasses.dataclass
class Mark:
    at: float
    ollama: dict[int, int]
    busy: int
    total: int


class CpuMeter:
    """CPU of Ollama (server + runners) and of the machine between marks."""

    def __init__(self, ollama_pid: int) -> None:
        self.ollama_pid = ollama_pid
        self.intervals: list[tuple[Mark, Mark]] = []
        self._open: Mark | None = None
        self._lock = threading.Lock()

    def mark(self) -> Mark:
        busy, total = machine_busy_ticks()
        return Mark(time.perf_counter(), process_ticks(self.ollama_pid), busy, total)

    def on_event(self, event: IngestEvent) -> None:
        """The ingest writes every source's chunks first, then summarizes source after
        source; no event opens a summarize stage, so every other event marks a possible
        start, and the last summary of a source closes the interval."""
        if event.stage == "wait":  # the summaries are still being written
            return
        with self._lock:
            if event.stage != "summarize":
                self._open = self.mark()
            elif event.done == event.total and self._open:
                self.intervals.append((self._open, self.mark()))
                self._open = None

    @staticmethod
    def cores(start: Mark, end: Mark) -> tuple[float, float, float]:
        """(seconds, Ollama cores busy, machine cores busy) between two marks."""
        seconds = end.at - start.at
        ollama = sum(t - start.ollama.get(pid, 0) for pid, t in end.ollama.items()) / TICKS
        cpus = os.cpu_count() or 1
        machine = (end.busy - start.busy) / max(end.total - start.total, 1) * cpus
        return seconds, ollama / seconds if seconds else 0.0, machine

    def summarize_cores(self) -> tuple[float, float, float]:
        seconds = sum(end.at - start.at for start, end in self.intervals)
        if not seconds:
            return 0.0, 0.0, 0.0
        ollama = machine = 0.0
        for start, end in self.intervals:
            part, o, m = self.cores(start, end)
            ollama += o * part
            machine += m * part
        return seconds, ollama / seconds, machine / seconds


def vm_hwm_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def vm_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def git_state() -> str:
    """The commit measured, and the service files that differed from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "service", "loaders", "splitters"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    changed = [line[3:] for line in dirty if line.strip()]
    return f"{head}" + (f" plus uncommitted changes to {', '.join(changed)}" if changed else "")


def stage_table(report: IngestReport) -> str:
    wall = report.wall_seconds or 1.0
    rows = [
        f"| {stage} | {seconds:.1f} | {seconds / wall:.1%} |"
        for stage, seconds in report.seconds.items()
    ]
    other = wall - sum(report.seconds.values())
    rows.append(f"| (no stage: schema check, source records) | {other:.1f} | {other / wall:.1%} |")
    rows.append(f"| **wall** | **{report.wall_seconds:.1f}** | 100 % |")
    return "| stage | s | share |\n|---|---:|---:|\n" + "\n".join(rows)


def tutorial_figures(log: Path | None) -> str:
    """The end of a `time synopsis ingest <tutorial>/` log, quoted, with stage shares."""
    if log is None or not log.is_file():
        return ""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    summary = next((ln for ln in reversed(lines) if re.match(r"^\d+ sources \(", ln)), None)
    stages = next((ln for ln in reversed(lines) if ln.startswith("time per stage:")), None)
    real = next((ln for ln in reversed(lines) if re.match(r"^real\s", ln)), None)
    if summary is None or stages is None:
        return ""
    unchanged = sum(ln.endswith(": unchanged") for ln in lines)
    seconds = {
        name: float(value)
        for name, value in re.findall(r"(\w+) ([\d.]+) s", stages.split(":", 1)[1])
    }
    wall_match = re.search(r"; ([\d.]+) s", summary)
    calls_match = re.search(r"(\d+) LLM calls", summary)
    wall = float(wall_match.group(1)) if wall_match else sum(seconds.values())
    calls = int(calls_match.group(1)) if calls_match else 0
    shares = ", ".join(f"{name} {value / wall:.1%}" for name, value in seconds.items())
    non_llm = (wall - seconds.get("summarize", 0.0)) / wall if wall else 0.0
    per_chunk = seconds.get("summarize", 0.0) / calls if calls else 0.0
    quoted = "\n".join(line for line in (summary, stages, real) if line)
    written = dt.datetime.fromtimestamp(log.stat().st_mtime, dt.UTC)
    return (
        "### The whole tutorial (`time synopsis ingest …/tutorial/`, default collections)\n\n"
        f"Quoted from the end of that run's log (`{log}`, {written:%Y-%m-%d %H:%M} UTC):\n\n"
        f"```\n{quoted}\n```\n\n"
        f"- share of wall time: {shares}; everything except summarize: {non_llm:.1%}\n"
        f"- wall time per LLM call: {per_chunk:.1f} s"
        + (
            f"\n- {unchanged} of its pages were reported unchanged (already in the index "
            "when that run started), so this is not a cold ingest of every page"
            if unchanged
            else ""
        )
        + "\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sources",
        nargs="+",
        default=DEFAULT_SOURCES,
        help="pages to ingest (a bare name is looked up in the tutorial directory)",
    )
    parser.add_argument(
        "--tutorial-log",
        type=Path,
        default=None,
        help="the log of a `time synopsis ingest <tutorial>/` run, to quote its figures",
    )
    parser.add_argument("--keep", action="store_true", help="keep the BenchIngest collections")
    args = parser.parse_args()
    sources = [str(TUTORIAL / s) if "/" not in s else s for s in args.sources]
    settings = Settings.from_env().with_overrides(collection_prefix=PREFIX)
    pid_file = settings.stack.data_dir / "run" / "ollama.pid"
    ollama_pid = int(pid_file.read_text().strip())

    synopsis = Synopsis.open(settings)
    try:
        if synopsis.store.exists():
            synopsis.store.drop()
        meter = CpuMeter(ollama_pid)
        rss_before = vm_rss_mib()
        load_before = load_text()

        def on_event(event: IngestEvent) -> None:
            meter.on_event(event)
            if event.stage == "split":
                print(f"{event.source}: {event.total} chunks", flush=True)
            elif event.stage == "summarize" and (event.done == event.total or event.done % 5 == 0):
                print(f"  summarized {event.done}/{event.total}", flush=True)

        start_mark = meter.mark()
        first = synopsis.ingest(sources, on_event=on_event)
        end_mark = meter.mark()
        peak_mib = vm_hwm_mib()
        stats = synopsis.stats()
        second = synopsis.ingest(sources)
        load_after = load_text()
    finally:
        if not args.keep and synopsis.store.exists():
            synopsis.store.drop()
        synopsis.close()

    print(first.summary_line())
    print(second.summary_line())
    sum_seconds, ollama_cores, machine_cores = meter.summarize_cores()
    _, ollama_all, machine_all = CpuMeter.cores(start_mark, end_mark)
    non_llm = (first.wall_seconds - first.seconds["summarize"]) / first.wall_seconds
    per_chunk = first.seconds["summarize"] / first.llm_calls if first.llm_calls else 0.0
    reingest_share = second.wall_seconds / first.wall_seconds
    cpus = os.cpu_count() or 1
    verdict_llm = "met" if non_llm <= 0.10 else "not met"
    usage = first.model
    summarize_s = first.seconds["summarize"]
    inside = usage.busy_seconds / summarize_s if summarize_s else 0.0
    verdict_inside = "met" if inside >= 0.90 else "not met"

    def per_call(total: float) -> float:
        return total / usage.calls if usage.calls else 0.0

    verdict_re = "met" if second.llm_calls == 0 and reingest_share <= 0.05 else "not met"
    results = (
        "| figure | value |\n|---|---:|\n"
        f"| chunks (new) | {first.new_chunks} |\n"
        f"| LLM calls | {first.llm_calls} |\n"
        f"| summaries by kind | {stats.get('summaries_by_kind')} |\n"
        f"| wall time | {first.wall_seconds:.1f} s |\n"
        f"| wall time per summarized chunk (summarize s / LLM calls, "
        f"{settings.summaries.concurrency} at a time) | {per_chunk:.2f} s |\n"
        f"| everything except summarize (goal ≤ 10 %) | {non_llm:.1%} ({verdict_llm}) |\n"
        f"| Ollama CPU while summarizing ({sum_seconds:.0f} s) | {ollama_cores:.2f} of "
        f"{cpus} cores |\n"
        f"| whole machine busy while summarizing | {machine_cores:.2f} of {cpus} cores |\n"
        f"| Ollama CPU over the whole ingest | {ollama_all:.2f} cores "
        f"(machine {machine_all:.2f}) |\n"
        f"| Ollama's own work on the summaries (its durations): calls reporting them | "
        f"{usage.calls} |\n"
        f"| summarize stage inside model calls (wall time with a call computing / "
        f"stage; goal ≥ 90 %) | {usage.busy_seconds:.1f} s of {summarize_s:.1f} s = "
        f"{inside:.1%} ({verdict_inside}) |\n"
        f"| model seconds per call: loading, reading the prompt, writing | "
        f"{per_call(usage.load_seconds):.2f} / {per_call(usage.prompt_seconds):.2f} / "
        f"{per_call(usage.output_seconds):.2f} |\n"
        f"| tokens per call: prompt / output | {per_call(usage.prompt_tokens):.0f} / "
        f"{per_call(usage.output_tokens):.0f} |\n"
        f"| peak RSS of this process (VmHWM) | {peak_mib:.0f} MiB "
        f"(RSS {rss_before:.0f} MiB before the ingest) |\n"
        f"| re-ingest unchanged: LLM calls (goal 0) | {second.llm_calls} |\n"
        f"| re-ingest unchanged: wall time (goal ≤ 5 % of first) | {second.wall_seconds:.2f} s "
        f"= {reingest_share:.1%} ({verdict_re}) |"
    )
    facts = (
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC; code: {git_state()}\n"
        f"- machine: {cpus} logical cores, {cpu_model()}; load average (1/5/15 min) "
        f"{load_before} before, {load_after} after. Ollama and Weaviate run on the same "
        "two cores as this process, and other engineers' test runs may use the same Ollama\n"
        f"- sources: {', '.join(Path(s).name for s in sources)} (from `{TUTORIAL}`), into "
        f"collections prefixed `{PREFIX}` that start empty and are dropped afterwards\n"
        f"- models: chat {settings.models.chat_model}, "
        f"embeddings {settings.models.embedding_model}, "
        f"Ollama {settings.stack.ollama_version} (local stack); "
        f"max_tokens {settings.ingest.max_tokens}, "
        f"summary concurrency {settings.summaries.concurrency}"
    )
    section = (
        "## Ingestion cost\n\n"
        f"```sh\n{' '.join([COMMAND, *map(shlex.quote, sys.argv[1:])])}\n```\n\n{facts}\n\n"
        f"### First ingest\n\n{stage_table(first)}\n\n{results}\n\n"
        f"### Re-ingest of the unchanged sources\n\n{stage_table(second)}\n\n"
        f"{tutorial_figures(args.tutorial_log)}\n"
        "How to read it:\n\n"
        "- *summarize* is the LLM stage (it includes the summary-cache lookup, a few ms).\n"
        "  Its time per chunk is wall time at the configured concurrency, not the latency\n"
        "  of one call.\n"
        "- *Ollama CPU* sums utime + stime of the Ollama server and its runner processes\n"
        "  between the start and the end of each source's summarize stage; 2.0 would mean\n"
        "  both cores busy with inference the whole time. The machine figure shows how\n"
        "  much of the rest went to other processes.\n"
        "- *Inside model calls* is from Ollama's own durations, returned with each reply\n"
        "  (`prompt_eval_duration`, `eval_duration`): the wall time during which at least\n"
        "  one summary call was being computed, over the summarize stage's wall time. The\n"
        "  rest is waiting around the calls: the guard, embeddings, writes, queueing.\n"
        "- A re-ingest reads each source, hashes it, and finds its source record complete\n"
        "  with the same hash and settings: no split, no model call, no write.\n"
    )
    print(section)
    write_section(REPORT, "ingest", section)


if __name__ == "__main__":
    main()
