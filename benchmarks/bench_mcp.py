"""Benchmark: MCP `search_docs` against `POST /search`, and what the token budget holds.

Run from the repository root, under the exclusive CPU lock, against an index that holds
the Python tutorial with its summaries
(`uv run synopsis ingest /usr/share/doc/python3.11/html/tutorial/`):

    uv run python benchmarks/bench_mcp.py [--prefix P] [--rounds 3] [--budget 5000]

It starts one `synopsis serve` (a free loopback port, no keys) over that index
(`--prefix`: the collections of an index built with `SYNOPSIS_COLLECTION_PREFIX=P`) and
measures, in one run, with the answerable questions of `eval/tutorial.jsonl`:

* **latency** — each question as `POST /search` with `expand: section` and `max_tokens`
  = the budget (one kept-alive httpx client), and as the MCP tool `search_docs` with the
  same query and budget (the SDK's Streamable HTTP client, one initialized session):
  the same search and the same sections, so the difference is MCP's. A warm-up round
  asks every question once each way first, so that both find the query's embedding in
  the server's cache; then `--rounds` rounds, the two alternating which goes first.
  Per request, client side: p50 and p90 of each, and the ratio of the p50s.
* **coverage** — the share of questions whose expected section (eval/README.md: the
  source ends with `source_suffix`, a header starts with `section`) is among the
  passages of the `search_docs` result at the budget, against Recall@5 (and @1) of
  `POST /search` with the server's defaults (k 5, mode joint, chunks), the search as it
  was before sections and budgets.

The `mcp` section of docs/benchmarks.md is (re)written.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from report import cpu_model, load_text, write_section

from service.evaluation.questions import Query, load_queries
from service.query.reading import split_location
from service.query.search import Hit
from splitters.encoding import count_tokens

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "eval" / "tutorial.jsonl"
SYNOPSIS = str(Path(sys.executable).with_name("synopsis"))
TIMEOUT = 120.0


@dataclass
class Timings:
    rest: list[float]
    mcp: list[float]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve(prefix: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SYNOPSIS_COLLECTION_PREFIX": prefix}
    for name in ("SYNOPSIS_API_READ_KEYS", "SYNOPSIS_API_WRITE_KEYS", "SYNOPSIS_API_KEYS_FILE"):
        env.pop(name, None)
    with log.open("ab") as out:
        return subprocess.Popen(
            [SYNOPSIS, "serve", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _wait_healthy(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"serve exited {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise SystemExit(f"serve did not answer /health:\n{log.read_text()[-3000:]}")


def _hit(source: str, headers: list[str]) -> Hit:
    """A hit with what `Query.is_relevant` reads: its source and header path."""
    return Hit(
        id="", source=source, title="", headers=headers, chunk_index=0, content="",
        summary=None, score=0.0, leg="",
    )  # fmt: skip


#: A passage's opening tag and the first two lines of its block (`service.query.context`).
_BLOCK = re.compile(r'^<passage id="\d+"[^\n]*>\n## ([^\n]*)\nSource: ([^\n]*)$', re.MULTILINE)


def _passages(text: str) -> list[Hit]:
    """The passages of a `search_docs` result: each fenced block's header path and source."""
    found = []
    for path, location in _BLOCK.findall(text):
        source, _ = split_location(location)
        found.append(_hit(source, path.split(" > ")))
    return found


async def _measure(
    base: str, questions: list[Query], budget: int, rounds: int
) -> tuple[Timings, dict[str, Any]]:
    timings = Timings(rest=[], mcp=[])
    coverage: dict[str, Any] = {"rank": [], "inside": [], "tokens": [], "passages": []}
    body = {"expand": "section", "max_tokens": budget}
    async with (
        httpx.AsyncClient(base_url=base, timeout=TIMEOUT) as rest,
        httpx2.AsyncClient(timeout=TIMEOUT) as http,
        streamable_http_client(f"{base}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()

        async def rest_call(query: str) -> float:
            started = time.perf_counter()
            response = await rest.post("/search", json={"query": query, **body})
            response.raise_for_status()
            return time.perf_counter() - started

        async def mcp_call(query: str) -> tuple[float, str]:
            started = time.perf_counter()
            result = await session.call_tool("search_docs", {"query": query, "max_tokens": budget})
            elapsed = time.perf_counter() - started
            text = str(result.content[0].text)  # type: ignore[union-attr]
            if result.is_error:
                raise SystemExit(f"search_docs failed: {text}")
            return elapsed, text

        # Warm-up, and coverage: every question once each way.
        for question in questions:
            await rest_call(question.text)
            _, text = await mcp_call(question.text)
            tokens = count_tokens(text)
            if tokens > budget:
                raise SystemExit(f"search_docs gave {tokens} tokens > {budget}: {question.text}")
            passages = _passages(text)
            coverage["inside"].append(any(question.is_relevant(hit) for hit in passages))
            coverage["tokens"].append(tokens)
            coverage["passages"].append(len(passages))
            plain = (await rest.post("/search", json={"query": question.text})).json()
            hits = [_hit(h["source"], h["headers"]) for h in plain]
            rank = next((i for i, hit in enumerate(hits, 1) if question.is_relevant(hit)), None)
            coverage["rank"].append(rank)

        for round_ in range(rounds):
            for i, question in enumerate(questions):
                if (round_ + i) % 2:
                    timings.rest.append(await rest_call(question.text))
                    timings.mcp.append((await mcp_call(question.text))[0])
                else:
                    timings.mcp.append((await mcp_call(question.text))[0])
                    timings.rest.append(await rest_call(question.text))
    return timings, coverage


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--prefix", default=os.environ.get("SYNOPSIS_COLLECTION_PREFIX", ""))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=5000)
    args = parser.parse_args()

    questions = [q for q in load_queries(QUESTIONS) if q.in_scope]
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = Path(f"/tmp/bench-mcp-serve-{port}.log")
    process = _serve(args.prefix, port, log)
    started = dt.datetime.now(dt.UTC)
    try:
        _wait_healthy(base, process, log)
        timings, coverage = anyio.run(_measure, base, questions, args.budget, args.rounds)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)

    ranks = coverage["rank"]
    n = len(questions)
    recall = {k: sum(1 for r in ranks if r is not None and r <= k) / n for k in (1, 5)}
    inside = sum(coverage["inside"]) / n
    rest50, mcp50 = statistics.median(timings.rest), statistics.median(timings.mcp)
    ms = 1000.0
    lines = [
        "## MCP: `search_docs` against `POST /search`",
        "",
        f"Measured {started:%Y-%m-%d %H:%M} UTC with `benchmarks/bench_mcp.py "
        f"--rounds {args.rounds} --budget {args.budget}`"
        + (f" `--prefix {args.prefix}`" if args.prefix else "")
        + f", one `synopsis serve` over the Python tutorial index; {n} answerable questions "
        f"of `eval/tutorial.jsonl`.",
        "",
        f"**Latency** (same query, same budget of {args.budget:,} tokens, same sections; "
        f"embeddings cached by a warm-up round; {len(timings.rest)} requests each, the two "
        "alternating which goes first; client side, sequential):",
        "",
        "| | p50 ms | p90 ms | mean ms |",
        "|---|---:|---:|---:|",
        f"| `POST /search` (`expand: section`, `max_tokens`) | {rest50 * ms:.1f} | "
        f"{_pct(timings.rest, 0.9) * ms:.1f} | {statistics.fmean(timings.rest) * ms:.1f} |",
        f"| MCP `search_docs` (Streamable HTTP, one session) | {mcp50 * ms:.1f} | "
        f"{_pct(timings.mcp, 0.9) * ms:.1f} | {statistics.fmean(timings.mcp) * ms:.1f} |",
        "",
        f"p50 ratio MCP / REST: **{mcp50 / rest50:.2f}** (goal ≤ 1.2).",
        "",
        "**Coverage** (the expected section among the passages given):",
        "",
        "| | share of questions |",
        "|---|---:|",
        f"| `search_docs` at {args.budget:,} tokens: expected section inside the result | "
        f"**{inside:.3f}** |",
        f"| `POST /search` defaults (k 5, chunks): Recall@5 | {recall[5]:.3f} |",
        f"| `POST /search` defaults: Recall@1 | {recall[1]:.3f} |",
        "",
        f"The `search_docs` results held {statistics.fmean(coverage['passages']):.1f} "
        f"passages on average (min {min(coverage['passages'])}, max "
        f"{max(coverage['passages'])}) and {statistics.fmean(coverage['tokens']):,.0f} tokens "
        f"(max {max(coverage['tokens']):,}; every one within the budget). Goal: the first "
        "share at least Recall@5.",
        "",
        f"Machine: {os.cpu_count()} logical cores, {cpu_model()}; load {load_text()} at the "
        f"end; Python {platform.python_version()}, mcp {metadata.version('mcp')}, litestar "
        f"{metadata.version('litestar')}.",
    ]
    text = "\n".join(lines)
    print(text)
    write_section(ROOT / "docs" / "benchmarks.md", "mcp", text)


if __name__ == "__main__":
    main()
