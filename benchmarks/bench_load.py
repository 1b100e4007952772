"""Load test: concurrent clients on `POST /search` of a real `synopsis serve`, while an
ingest job runs, at 32 and then 64 clients.

Run from the repository root, on a quiet machine, against an index that holds the
Python tutorial (`uv run synopsis ingest /usr/share/doc/python3.11/html/tutorial/`):

    uv run python benchmarks/bench_load.py [--seconds 60] [--clients 32 64]

The script starts `synopsis serve` on a free loopback port (the configured collections,
no API keys), then for each level: submits one ingest job (a tutorial page uploaded
under a source name of its own, deleted afterwards, so its summaries cost LLM calls
during the level) and runs that many asyncio clients, each sending one search after
another for `--seconds` (a fixed list of developer questions, round-robin). It records
requests served, errors (any status but 200, or a transport error), latency p50/p99
and the service's resident memory before and after, and writes the table to the "Load"
section of docs/reliability.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import report
from tutorial_questions import QUESTIONS

PAGE = Path("/usr/share/doc/python3.11/html/tutorial/datastructures.html")
UPLOAD_SOURCE = "load-test/datastructures.html"
DOC = Path("docs/reliability.md")


@dataclass
class Level:
    """What one load level measured."""

    clients: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    rss_before_mb: float = 0.0
    rss_after_mb: float = 0.0
    job_state: str = ""
    job_summarized: int = 0

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (uvicorn workers), in MB."""
    total = 0
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(child) for child in children.read_text().split()]
    for one in pids:
        for line in Path(f"/proc/{one}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def client_loop(http: httpx.AsyncClient, level: Level, deadline: float, start: int) -> None:
    index = start
    while time.monotonic() < deadline:
        query = QUESTIONS[index % len(QUESTIONS)]
        index += 1
        began = time.perf_counter()
        try:
            response = await http.post("/search", json={"query": query, "k": 5})
        except httpx.HTTPError as exc:
            level.error(type(exc).__name__)
            continue
        if response.status_code == 200:
            level.latencies.append(time.perf_counter() - began)
        else:
            level.error(f"HTTP {response.status_code}")


async def run_level(base_url: str, pid: int, clients: int, seconds: float) -> Level:
    level = Level(clients=clients, seconds=seconds)
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base_url, timeout=60, limits=limits) as http:
        job = await http.post("/documents", files=[("files", (UPLOAD_SOURCE, PAGE.read_bytes()))])
        job.raise_for_status()
        job_id = job.json()["id"]
        level.rss_before_mb = rss_mb(pid)
        deadline = time.monotonic() + seconds
        await asyncio.gather(
            *(client_loop(http, level, deadline, start) for start in range(clients))
        )
        level.rss_after_mb = rss_mb(pid)
        state = (await http.get(f"/jobs/{job_id}")).json()
        level.job_state = state["state"]
        level.job_summarized = state["progress"]["summarized"]
        if state["state"] in ("queued", "running"):
            await http.delete(f"/jobs/{job_id}")
        for _ in range(120):
            if (await http.get(f"/jobs/{job_id}")).json()["state"] not in ("queued", "running"):
                break
            await asyncio.sleep(1)
        await http.delete(f"/documents/{UPLOAD_SOURCE}")
    return level


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def table(levels: list[Level]) -> str:
    rows = [
        "| clients | requests served | req/s | errors | p50 ms | p99 ms | RSS before → after MB "
        "| ingest job during the level |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for level in levels:
        errors = sum(level.errors.values())
        detail = ", ".join(f"{kind}: {count}" for kind, count in sorted(level.errors.items()))
        rows.append(
            f"| {level.clients} | {len(level.latencies)} "
            f"| {len(level.latencies) / level.seconds:.1f} "
            f"| {errors}{f' ({detail})' if detail else ''} "
            f"| {percentile(level.latencies, 0.5) * 1000:.0f} "
            f"| {percentile(level.latencies, 0.99) * 1000:.0f} "
            f"| {level.rss_before_mb:.0f} → {level.rss_after_mb:.0f} "
            f"| {level.job_state}, {level.job_summarized} summaries written |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, nargs="+", default=[32, 64])
    args = parser.parse_args()

    port = free_port()
    synopsis = str(Path(sys.executable).parent / "synopsis")
    server = subprocess.Popen(
        [synopsis, "serve", "--port", str(port)],
        env=os.environ.copy(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                if httpx.get(f"{base_url}/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        else:
            raise SystemExit("the service did not become ready")
        levels = [
            asyncio.run(run_level(base_url, server.pid, clients, args.seconds))
            for clients in args.clients
        ]
    finally:
        server.terminate()
        server.wait(timeout=60)
    body = table(levels)
    print(body)
    command = "uv run python benchmarks/bench_load.py " + " ".join(sys.argv[1:])
    report.write_section(
        DOC,
        "load",
        "## Load\n\n"
        f"Measured {dt.date.today()} with `{command.strip()}` on {report.cpu_model()} "
        f"({os.cpu_count()} cores; load average at the end {report.load_text()}): one "
        "`synopsis serve` process, asyncio clients on loopback each sending one `POST "
        f"/search` (k 5) after another for {args.seconds:.0f} s, while one ingest job "
        "summarizes an uploaded tutorial page on the same cores. Errors are any status "
        "but 200 or a transport error.\n\n" + body + "\n",
    )


if __name__ == "__main__":
    main()
