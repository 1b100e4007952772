"""Benchmark: how many summary calls Ollama should compute at once on this machine.

Run from the repository root, with nothing else using the CPU (the local stack's binary
and models must be there: `synopsis stack up` once):

    uv run python benchmarks/bench_summary_parallel.py [--models M ...] [--chunks N]
        [--configs P:C ...] [--rounds R]

For each model and each configuration `P:C` it starts a private Ollama server of the
local stack's build on its own port, with `OLLAMA_NUM_PARALLEL=P` (how many requests one
loaded model computes together) and the stack's models directory, loads the model with
one call, and summarizes the same `--chunks` chunks of the Python tutorial with the
product's `Summarizer` at concurrency `C` (`SYNOPSIS_SUMMARY_CONCURRENCY`: calls in
flight), guard on, as an ingest does. It records the wall time of the summaries, their
output tokens and Ollama's own durations. Rounds interleave the configurations so that
a noisy minute hurts each of them alike. Writes the "summary-parallel" section of
docs/benchmarks.md (or `--section`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import socket
import statistics
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from report import cpu_model, load_text, write_section

from loaders import load
from loaders.documents import TITLE
from service.ingest.summarize import SummaryRequest
from service.settings import Settings
from service.stack.binaries import ollama_binary
from service.wiring import summarizer
from splitters import chunk_documents
from splitters.base.metadata import HEADERS

REPORT = Path("docs/benchmarks.md")
TUTORIAL = Path("/usr/share/doc/python3.11/html/tutorial")
PAGES = ["interpreter.html", "venv.html", "floatingpoint.html"]


@dataclass
class Runs:
    """Measurements of one (model, parallel, concurrency) over the rounds."""

    seconds: list[float] = field(default_factory=list)
    output_tokens: list[int] = field(default_factory=list)
    busy_seconds: list[float] = field(default_factory=list)
    extractive: list[int] = field(default_factory=list)


def requests(count: int, max_tokens: int) -> list[SummaryRequest]:
    """The first `count` chunks of the three pages, as the ingest asks for them."""
    out: list[SummaryRequest] = []
    for document in load([str(TUTORIAL / page) for page in PAGES]):
        for chunk in chunk_documents([document], max_tokens=max_tokens):
            headers = list(chunk.metadata.get(HEADERS) or [])
            out.append(
                SummaryRequest(
                    headers=headers,
                    content=chunk.page_content,
                    label=" › ".join(headers),
                    title=str(document.metadata.get(TITLE) or ""),
                )
            )
    return out[:count]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(binary: Path, models: Path, port: int, parallel: int) -> subprocess.Popen[bytes]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(models.parent),
        "OLLAMA_HOST": f"127.0.0.1:{port}",
        "OLLAMA_MODELS": str(models),
        "OLLAMA_NUM_PARALLEL": str(parallel),
        "OLLAMA_MAX_LOADED_MODELS": "1",
        "OLLAMA_KEEP_ALIVE": "30m",
        "OLLAMA_NOPRUNE": "1",
    }
    server = subprocess.Popen(
        [str(binary), "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/version", timeout=2):
                return server
        except OSError:
            time.sleep(0.3)
    server.terminate()
    raise SystemExit(f"the private Ollama on port {port} did not answer within 60 s")


def run_one(settings: Settings, batch: list[SummaryRequest]) -> tuple[float, int, float, int]:
    """Summarize `batch` once (after one call that loads the model)."""
    writer = summarizer(settings)
    try:
        writer.summarize_many(batch[:1])  # loads the model; not timed
        writer.usage = type(writer.usage)()
        started = time.perf_counter()
        results = writer.summarize_many(batch)
        seconds = time.perf_counter() - started
        extractive = sum(1 for result in results if result.kind != "llm")
        return seconds, writer.usage.output_tokens, writer.usage.busy_seconds, extractive
    finally:
        writer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["smollm2-135m-instruct"])
    parser.add_argument("--chunks", type=int, default=12)
    parser.add_argument("--configs", nargs="+", default=["1:2", "1:1", "2:2", "4:4"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--section", default="summary-parallel")
    args = parser.parse_args()

    base = Settings.from_env()
    binary = ollama_binary(base, print)
    models = base.stack.data_dir / "ollama" / "models"
    configs = [tuple(int(part) for part in text.split(":")) for text in args.configs]
    batch = requests(args.chunks, base.ingest.max_tokens)
    load_before = load_text()
    runs: dict[tuple[str, int, int], Runs] = {}
    for round_index in range(args.rounds):
        order = configs if round_index % 2 == 0 else list(reversed(configs))
        for parallel in dict.fromkeys(p for p, _ in order):
            port = free_port()
            server = start_server(binary, models, port, parallel)
            try:
                for model in args.models:
                    for p, concurrency in order:
                        if p != parallel:
                            continue
                        settings = base.with_overrides(
                            ollama_url=f"http://127.0.0.1:{port}",
                            chat_model=model,
                            summary_concurrency=concurrency,
                        )
                        seconds, tokens, busy, extractive = run_one(settings, batch)
                        entry = runs.setdefault((model, parallel, concurrency), Runs())
                        entry.seconds.append(seconds)
                        entry.output_tokens.append(tokens)
                        entry.busy_seconds.append(busy)
                        entry.extractive.append(extractive)
                        print(
                            f"round {round_index + 1} {model} parallel {parallel} "
                            f"concurrency {concurrency}: {seconds:.1f} s, {tokens} output "
                            f"tokens, {extractive} extractive",
                            flush=True,
                        )
            finally:
                server.terminate()
                server.wait(timeout=30)
    load_after = load_text()

    lines = [
        "## Summary calls in parallel (`OLLAMA_NUM_PARALLEL`, summary concurrency): "
        f"{', '.join(args.models)}\n",
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC: `uv run python "
        f"benchmarks/bench_summary_parallel.py --models {' '.join(args.models)} --chunks "
        f"{args.chunks} --configs {' '.join(args.configs)} --rounds {args.rounds} --section "
        f"{args.section}` on "
        f"{cpu_model()} ({os.cpu_count()} cores), load {load_before} → {load_after}. "
        f"{len(batch)} chunks of {', '.join(PAGES)}; guard on; each configuration on a "
        "fresh private Ollama server of the stack's build, the model loaded first.\n",
        "| model | NUM_PARALLEL | concurrency | median s for the chunks | s per summary | "
        "× of the first | output tokens (median) | model busy (median s) | extractive |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for model in args.models:
        reference = statistics.median(runs[(model, *configs[0])].seconds)
        for parallel, concurrency in configs:
            entry = runs[(model, parallel, concurrency)]
            median = statistics.median(entry.seconds)
            lines.append(
                f"| {model} | {parallel} | {concurrency} | {median:.1f} | "
                f"{median / len(batch):.2f} | {reference / median:.2f} | "
                f"{statistics.median(entry.output_tokens):.0f} | "
                f"{statistics.median(entry.busy_seconds):.1f} | "
                f"{'/'.join(str(n) for n in entry.extractive)} |"
            )
    lines.append(
        "\n*× of the first* is how many times faster than the first configuration (higher "
        "is better; `1:2` is what the local stack ran before this benchmark). "
        "The output differs between configurations where a batched computation rounds "
        "differently; the token counts show whether it wrote about as much.\n"
    )
    body = "\n".join(lines)
    print(body)
    write_section(REPORT, args.section, body)


if __name__ == "__main__":
    main()
