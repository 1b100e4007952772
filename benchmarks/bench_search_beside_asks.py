"""Search latency while model calls run: `POST /search` p99 alone and beside 8 concurrent
`POST /ask` callers, in one run of one real `synopsis serve`.

Run from the repository root, with the local stack up (`uv run synopsis stack up`):

    uv run python benchmarks/bench_search_beside_asks.py [--seconds 60] [--search-clients 4]
        [--asks 8] [--prefix BenchAsks]

The script starts `synopsis serve` on a free loopback port with collections of its own
(`--prefix`, default `BenchAsks`), one read key per ask caller and one for the searches
(each ask caller its own key, so the per-key limit, `SYNOPSIS_API_LLM_PER_KEY`, refuses
none of them: the point is what the model calls do to everyone else's searches) and
SmolLM2-135M-Instruct as the answer model. It uploads six pages of the Python tutorial
as an ingest job, waits until their chunks are searchable and cancels the job (the
summaries would load the cores; searches and answers use the chunks), then measures
three phases of `--seconds` each, in this order:

1. `alone`: `--search-clients` asyncio clients, each sending one search (k 5, the
   default mode) after another; every query is new (a developer question with a number),
   so each search embeds its query as a real request does;
2. `beside asks`: the same searches while `--asks` callers each send one question after
   another to `POST /ask` (the answer model runs on the API's model executor,
   `SYNOPSIS_API_LLM_WORKERS` calls at once; the others wait for a slot); the asks start
   first and the searches 5 s later;
   the asks in flight at the end are waited for (not cancelled: their threads would run on);
3. `alone again`: as 1, to show how much the machine drifted during the run.

For each phase it prints and writes to the "Search beside asks" section of
docs/reliability.md: searches served, errors (any status but 200, or a transport
error), latency p50/p95/p99/max, and for phase 2 the asks answered (by kind) and
refused, and the ratio of each search figure beside asks to alone (phase 1). At the end
the uploaded documents are deleted. Not measured: the API before model calls had an
executor of their own (that code is gone); the ratio includes the cores the answer
model takes, which no executor can give back.
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
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import report
from tutorial_questions import QUESTIONS

TUTORIAL = Path("/usr/share/doc/python3.11/html/tutorial")
PAGES = ["controlflow", "datastructures", "errors", "inputoutput", "modules", "venv"]
UPLOAD_DIR = "bench-asks"
ANSWER_MODEL = "smollm2-135m-instruct"
DOC = Path("docs/reliability.md")
SEARCH_KEY = "bench-asks-search-key-0123456789"
WRITE_KEY = "bench-asks-write-key-0123456789"
#: Seconds the first model call runs before the searches of phase 2 start.
ASK_HEAD_START = 5.0


def ask_key(n: int) -> str:
    return f"bench-asks-ask-key-{n:02d}-0123456789"


@dataclass
class Phase:
    """What one phase measured."""

    name: str
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    asks: Counter[str] = field(default_factory=Counter)  # answered by kind, or the refusal
    ask_latencies: list[float] = field(default_factory=list)
    model_calls: int = 0  # asks answered that called the answer model


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (`share` of 1) of `values`; 0 when there are none."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = max(1, int(-(-share * len(ordered) // 1)))  # ceil(share * n), at least 1
    return ordered[min(len(ordered), rank) - 1]


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def search_loop(
    http: httpx.AsyncClient, phase: Phase, deadline: float, counter: list[int]
) -> None:
    while time.monotonic() < deadline:
        counter[0] += 1
        query = f"{QUESTIONS[counter[0] % len(QUESTIONS)]} {counter[0]}"
        began = time.perf_counter()
        try:
            response = await http.post(
                "/search", json={"query": query, "k": 5}, headers=_auth(SEARCH_KEY)
            )
        except httpx.HTTPError as exc:
            phase.errors[type(exc).__name__] += 1
            continue
        if response.status_code == 200:
            phase.latencies.append(time.perf_counter() - began)
        else:
            phase.errors[f"HTTP {response.status_code}"] += 1


async def ask_loop(
    http: httpx.AsyncClient, phase: Phase, stop: asyncio.Event, caller: int, begun: asyncio.Event
) -> None:
    index = caller
    while not stop.is_set():
        question = QUESTIONS[index % len(QUESTIONS)]
        index += 1
        began = time.perf_counter()
        begun.set()
        try:
            response = await http.post(
                "/ask", json={"question": question}, headers=_auth(ask_key(caller))
            )
        except httpx.HTTPError as exc:
            phase.asks[f"error {type(exc).__name__}"] += 1
            continue
        if response.status_code == 200:
            try:
                body = response.json()
            except ValueError:
                phase.asks["200 not JSON"] += 1
                continue
            phase.asks[str(body.get("kind"))] += 1
            phase.model_calls += bool(body.get("llm_called"))
            phase.ask_latencies.append(time.perf_counter() - began)
        else:
            phase.asks[f"HTTP {response.status_code}"] += 1
            if response.status_code == 429:
                await asyncio.sleep(1)


async def searches(base_url: str, name: str, clients: int, seconds: float) -> Phase:
    phase = Phase(name=name, seconds=seconds)
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base_url, timeout=120, limits=limits) as http:
        deadline = time.monotonic() + seconds
        counter = [0]
        await asyncio.gather(*(search_loop(http, phase, deadline, counter) for _ in range(clients)))
    return phase


async def searches_beside_asks(base_url: str, clients: int, asks: int, seconds: float) -> Phase:
    phase = Phase(name=f"beside {asks} asks", seconds=seconds)
    stop, begun = asyncio.Event(), asyncio.Event()
    limits = httpx.Limits(max_connections=clients + asks, max_keepalive_connections=clients + asks)
    async with httpx.AsyncClient(base_url=base_url, timeout=600, limits=limits) as http:
        callers = [asyncio.create_task(ask_loop(http, phase, stop, n, begun)) for n in range(asks)]
        await begun.wait()
        await asyncio.sleep(ASK_HEAD_START)
        deadline = time.monotonic() + seconds
        counter = [10_000]  # other numbers than phase 1's: new queries again
        await asyncio.gather(*(search_loop(http, phase, deadline, counter) for _ in range(clients)))
        stop.set()
        drained = time.monotonic()
        await asyncio.gather(*callers)
        print(f"  the asks in flight ended {time.monotonic() - drained:.0f} s after the searches")
    return phase


def index_pages(base_url: str) -> list[str]:
    """Upload the pages as one job, wait until their chunks are searchable, cancel it."""
    sources = [f"{UPLOAD_DIR}/{page}.html" for page in PAGES]
    with httpx.Client(base_url=base_url, timeout=120, headers=_auth(WRITE_KEY)) as http:
        files = [
            ("files", (source, (TUTORIAL / f"{page}.html").read_bytes()))
            for source, page in zip(sources, PAGES, strict=True)
        ]
        response = http.post("/documents", files=files)
        response.raise_for_status()
        job_id = response.json()["id"]
        started = time.monotonic()
        while True:
            job = http.get(f"/jobs/{job_id}").json()
            listed = {item["source"]: item["chunks"] for item in http.get("/documents").json()}
            if job["state"] in ("failed", "cancelled", "interrupted"):
                raise SystemExit(f"the ingest job ended {job['state']}: {job.get('reason')}")
            if job["state"] == "done" or all(listed.get(source, 0) for source in sources):
                break
            if time.monotonic() - started > 900:
                raise SystemExit("the pages were not searchable after 900 s")
            time.sleep(1)
        print(
            f"  {sum(listed.get(s, 0) for s in sources)} chunks searchable after "
            f"{time.monotonic() - started:.0f} s"
        )
        if job["state"] in ("queued", "running"):
            http.delete(f"/jobs/{job_id}")
            for _ in range(300):
                if http.get(f"/jobs/{job_id}").json()["state"] not in ("queued", "running"):
                    break
                time.sleep(1)
            else:
                raise SystemExit("the ingest job did not stop within 300 s of its cancel")
    return sources


def delete_pages(base_url: str, sources: list[str]) -> None:
    with httpx.Client(base_url=base_url, timeout=120, headers=_auth(WRITE_KEY)) as http:
        for source in sources:
            http.delete(f"/documents/{source}")


def warm_up(base_url: str) -> None:
    """One search and one ask, so that no phase pays for loading a model."""
    with httpx.Client(base_url=base_url, timeout=600) as http:
        http.post("/search", json={"query": QUESTIONS[0], "k": 5}, headers=_auth(SEARCH_KEY))
        answer = http.post("/ask", json={"question": QUESTIONS[0]}, headers=_auth(ask_key(0)))
        print(f"  warm-up ask: {answer.status_code} {answer.text[:200]!r}")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def row(phase: Phase) -> str:
    """One phase as a row of the table."""
    errors = sum(phase.errors.values())
    detail = ", ".join(f"{kind}: {count}" for kind, count in sorted(phase.errors.items()))
    asks = ", ".join(f"{kind} {count}" for kind, count in sorted(phase.asks.items()))
    if phase.asks:
        asks += f"; {phase.model_calls} model calls"
    ask_p50 = f"{percentile(phase.ask_latencies, 0.5):.1f}" if phase.ask_latencies else "—"
    return (
        f"| {phase.name} | {len(phase.latencies)} "
        f"| {len(phase.latencies) / phase.seconds:.1f} "
        f"| {errors}{f' ({detail})' if detail else ''} "
        f"| {ms(percentile(phase.latencies, 0.5))} | {ms(percentile(phase.latencies, 0.95))} "
        f"| {ms(percentile(phase.latencies, 0.99))} | {ms(max(phase.latencies, default=0))} "
        f"| {asks or '—'} | {ask_p50} |"
    )


def table(phases: list[Phase]) -> str:
    """The phases' rows, and each search figure beside the asks (the second phase) against
    alone (the first)."""
    rows = [
        "| phase | searches served | req/s | errors | p50 ms | p95 ms | p99 ms | max ms "
        "| asks answered (kind; model calls) | ask p50 s |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *(row(phase) for phase in phases),
    ]
    ratios = []
    for label, share in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99)):
        alone = percentile(phases[0].latencies, share)
        with_asks = percentile(phases[1].latencies, share)
        ratios.append(f"{label} {with_asks / alone:.2f}×" if alone else f"{label} —")
    return "\n".join(rows) + (
        f"\n\nSearch latency beside the asks against alone (phase 1): {', '.join(ratios)}."
    )


def server_env(prefix: str, asks: int) -> dict[str, str]:
    env = os.environ.copy()
    env.update(
        {
            "SYNOPSIS_COLLECTION_PREFIX": prefix,
            "SYNOPSIS_API_READ_KEYS": ",".join([SEARCH_KEY, *(ask_key(n) for n in range(asks))]),
            "SYNOPSIS_API_WRITE_KEYS": WRITE_KEY,
            "SYNOPSIS_CHAT_MODEL": ANSWER_MODEL,
            "SYNOPSIS_ANSWER_MODEL": ANSWER_MODEL,
        }
    )
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each phase")
    parser.add_argument("--search-clients", type=int, default=4)
    parser.add_argument("--asks", type=int, default=8, help="concurrent ask callers")
    parser.add_argument("--prefix", default="BenchAsks", help="the collections' prefix")
    args = parser.parse_args()

    port = free_port()
    synopsis = str(Path(sys.executable).parent / "synopsis")
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-asks-serve-{port}.log"
    env = server_env(args.prefix, args.asks)
    with log.open("wb") as output:
        server = subprocess.Popen(
            [synopsis, "serve", "--port", str(port)],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}"
    settings: dict[str, Any] = {}
    sources: list[str] = []
    phases: list[Phase] = []
    try:
        for _ in range(240):
            try:
                if httpx.get(f"{base_url}/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None:
                raise SystemExit(f"synopsis serve exited ({server.returncode}); see {log}")
            time.sleep(0.5)
        else:
            raise SystemExit(f"the service did not become ready; see {log}")
        settings = {
            name: env.get(f"SYNOPSIS_API_LLM_{name.upper()}", default)
            for name, default in (("workers", "4"), ("per_key", "2"))
        }
        print(f"indexing {len(PAGES)} tutorial pages under the prefix {args.prefix}")
        sources = index_pages(base_url)
        warm_up(base_url)
        print(f"phase 1: {args.search_clients} search clients alone, {args.seconds:.0f} s")
        phases.append(asyncio.run(searches(base_url, "alone", args.search_clients, args.seconds)))
        print(row(phases[-1]), flush=True)
        print(f"phase 2: the same beside {args.asks} ask callers")
        phases.append(
            asyncio.run(
                searches_beside_asks(base_url, args.search_clients, args.asks, args.seconds)
            )
        )
        print(row(phases[-1]), flush=True)
        print("phase 3: alone again")
        phases.append(
            asyncio.run(searches(base_url, "alone again", args.search_clients, args.seconds))
        )
    finally:
        try:
            if sources:
                delete_pages(base_url, sources)
        except httpx.HTTPError as exc:
            print(f"the uploaded pages were not deleted: {exc!r}", file=sys.stderr)
        server.terminate()
        server.wait(timeout=60)
    body = table(phases)
    print(body)
    command = "uv run python benchmarks/bench_search_beside_asks.py " + " ".join(sys.argv[1:])
    report.write_section(
        DOC,
        "search-beside-asks",
        "### Search beside asks\n\n"
        f"Measured {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC with `{command.strip()}` on "
        f"{report.cpu_model()} ({os.cpu_count()} cores; load average at the end "
        f"{report.load_text()}): one `synopsis serve` process (model executor "
        f"`SYNOPSIS_API_LLM_WORKERS`={settings.get('workers')}, "
        f"`SYNOPSIS_API_LLM_PER_KEY`={settings.get('per_key')}, a key per ask caller), "
        f"answers by {ANSWER_MODEL}, {len(PAGES)} tutorial pages indexed (chunks only); "
        f"{args.search_clients} asyncio clients each sending one `POST /search` (k 5, every "
        f"query new) after another for {args.seconds:.0f} s per phase; in phase 2, "
        f"{args.asks} callers each sending one `POST /ask` after another. Errors are any "
        "status but 200 or a transport error; the latencies are of the searches answered 200. "
        "Not measured: the service before model calls "
        "had their own executor; the ratio includes the cores the answer model takes.\n\n"
        + body
        + "\n",
    )


if __name__ == "__main__":
    main()
