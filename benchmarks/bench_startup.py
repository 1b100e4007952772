"""Benchmark: start-up time of `synopsis --help` and `synopsis search`, and what they import.

Run from the repository root, with the local stack running (`uv run synopsis stack
status` exits 0; this script starts and stops nothing) and an index to search:

    uv run python benchmarks/bench_startup.py [--runs 5] [--query range]

Each command runs `--runs` times as a fresh process (after one warm-up run each, not
counted), the commands interleaved, wall time measured around the process:

* `python -c pass`: the interpreter alone, the floor of any Python command;
* `synopsis --help` (the console script of this environment, not `uv run`, which adds
  its own lock check);
* a bare weaviate-client search: a `python -c` process that imports weaviate, connects
  to the local Weaviate, embeds the query with one HTTP call to Ollama's `/api/embed`
  and runs the hybrid query the default (`joint`) mode makes, k = 3 — the floor of
  `synopsis search`;
* `synopsis search QUERY --k 3`.

Then, once each, `python -X importtime` of `import service.cli` (what `--help`
loads) and of `from service.synopsis import Synopsis` (what `search` loads besides):
the ten largest cumulative entries, and the third-party packages on the search path
with the chain of imports that first loads each. The figures go to the "startup"
section of docs/benchmarks.md.

Goals: `synopsis --help` ≤ 0.5 s and `synopsis search` ≤ 2 s (median) on a 2-core machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from report import cpu_model, load_text, write_section

from service.index.queries import ORIGINAL_HIT_PROPERTIES
from service.index.records import CONTENT_VECTOR
from service.query.search import search_request
from service.settings import Settings

REPORT = Path("docs/benchmarks.md")
COMMAND = "uv run python benchmarks/bench_startup.py"
HELP_GOAL = 0.5
SEARCH_GOAL = 2.0
K = 3
OURS = ("service", "loaders", "splitters")

# The floor of `synopsis search`: the same Weaviate and Ollama calls, nothing else.
FLOOR_SEARCH = """
import json, sys, urllib.request
import weaviate
from weaviate.classes.query import HybridFusion, MetadataQuery, TargetVectors
p = json.loads(sys.argv[1])
request = urllib.request.Request(
    p["ollama"] + "/api/embed",
    data=json.dumps({"model": p["model"], "input": p["query"]}).encode(),
    headers={"Content-Type": "application/json"},
)
with urllib.request.urlopen(request, timeout=60) as response:
    vector = json.load(response)["embeddings"][0]
client = weaviate.connect_to_local(host="127.0.0.1", port=p["port"], grpc_port=p["grpc"])
try:
    result = client.collections.use(p["collection"]).query.hybrid(
        p["query"],
        vector=vector,
        alpha=p["alpha"],
        fusion_type=HybridFusion.RELATIVE_SCORE,
        target_vector=TargetVectors.manual_weights(p["weights"]),
        query_properties=p["properties"],
        limit=p["k"],
        return_properties=p["returned"],
        return_metadata=MetadataQuery(score=True),
    )
    assert result.objects, "no hits"
finally:
    client.close()
"""


def bin_path(name: str) -> str:
    """A console script of this environment (next to its python)."""
    return str(Path(sys.executable).with_name(name))


def floor_search_command(settings: Settings, query: str) -> list[str]:
    weight = settings.search.summary_weight
    params = {
        "ollama": settings.resolved_ollama_url,
        "model": settings.models.embedding_model,
        "query": query,
        "port": settings.stack.local_weaviate_port,
        "grpc": settings.stack.local_weaviate_grpc_port,
        "collection": f"{settings.external.collection_prefix}OriginalDocuments",
        "alpha": settings.search.alpha,
        "weights": {CONTENT_VECTOR: 1.0 - weight, settings.search.summary_vector: weight},
        "properties": search_request(settings, "-").summary_use().keyword_properties(),
        "k": K,
        "returned": ORIGINAL_HIT_PROPERTIES,
    }
    return [sys.executable, "-c", FLOOR_SEARCH, json.dumps(params)]


def run_once(argv: list[str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    return seconds


def timings(commands: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    """`runs` timed runs of each command after one warm-up each, interleaved, the order
    rotated between rounds."""
    for argv in commands.values():
        run_once(argv)
    seconds: dict[str, list[float]] = {name: [] for name in commands}
    names = list(commands)
    for round_index in range(runs):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            seconds[name].append(run_once(commands[name]))
            print(f"run {round_index + 1} {name}: {seconds[name][-1]:.3f} s", flush=True)
    return seconds


@dataclass
class Node:
    """One module in `-X importtime` output, with the modules it imported first."""

    name: str
    self_us: int
    cumulative_us: int
    children: list[Node] = field(default_factory=list)


def import_tree(statement: str) -> list[Node]:
    """The top-level imports of `python -X importtime -c statement`, as trees (those of
    the interpreter's own start-up included)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        capture_output=True,
        text=True,
        check=True,
    )
    pending: dict[int, list[Node]] = {}  # finished nodes per depth, waiting for a parent
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "[us]" in line:
            continue
        self_part, cumulative_part, name_part = line[len("import time:") :].split("|")
        depth = (len(name_part) - len(name_part.lstrip(" ")) - 1) // 2
        node = Node(name_part.strip(), int(self_part), int(cumulative_part))
        node.children = pending.pop(depth + 1, [])
        pending.setdefault(depth, []).append(node)
    return pending.get(0, [])


def walk(nodes: list[Node], chain: tuple[str, ...] = ()) -> list[tuple[Node, tuple[str, ...]]]:
    """Every node with the chain of modules that imported it (outermost first)."""
    found: list[tuple[Node, tuple[str, ...]]] = []
    for node in nodes:
        found.append((node, chain))
        found.extend(walk(node.children, (*chain, node.name)))
    return found


def top_level(name: str) -> str:
    return name.split(".", 1)[0]


def is_third_party(name: str) -> bool:
    root = top_level(name)
    return root not in OURS and root not in sys.stdlib_module_names


def import_tables(statement: str) -> tuple[str, str, float]:
    """The top-10 cumulative table, the third-party packages with their chains, and the
    total import time in seconds."""
    startup = {node.name for node in import_tree("pass")}
    roots = [node for node in import_tree(statement) if node.name not in startup]
    nodes = walk(roots)
    total = sum(node.cumulative_us for node in roots) / 1e6
    top = sorted(nodes, key=lambda item: -item[0].cumulative_us)[:10]
    top_rows = "\n".join(
        f"| `{node.name}` | {node.cumulative_us / 1000:.0f} | {node.self_us / 1000:.1f} |"
        for node, _ in top
    )
    top_table = "| module | cumulative ms | self ms |\n|---|---:|---:|\n" + top_rows
    # A third-party package's entry point: the first of its modules under a module of
    # another package (each module is listed once: under whoever imported it first).
    entries = [
        (node, chain)
        for node, chain in nodes
        if is_third_party(node.name)
        and (not chain or top_level(chain[-1]) != top_level(node.name))
        and not any(is_third_party(outer) for outer in chain)
    ]
    by_package: dict[str, list[tuple[Node, tuple[str, ...]]]] = {}
    for node, chain in entries:
        by_package.setdefault(top_level(node.name), []).append((node, chain))
    packages = sorted(
        by_package.items(), key=lambda item: -sum(node.cumulative_us for node, _ in item[1])
    )[:10]
    package_rows = []
    for package, found in packages:
        milliseconds = sum(node.cumulative_us for node, _ in found) / 1000
        node, chain = max(found, key=lambda item: item[0].cumulative_us)
        path = " → ".join(f"`{name}`" for name in (*chain, node.name))
        pulled = ", ".join(
            f"`{name}` {us / 1000:.0f}" for name, us in pulled_in([n for n, _ in found])[:4]
        )
        package_rows.append(f"| `{package}` | {milliseconds:.0f} | {path} | {pulled} |")
    package_table = (
        "| third-party package | cumulative ms | first imported through (largest entry) "
        "| other packages it loads first, ms |\n|---|---:|---|---|\n" + "\n".join(package_rows)
    )
    return top_table, package_table, total


def pulled_in(entries: list[Node]) -> list[tuple[str, int]]:
    """The other third-party packages first imported under these entries, largest first."""
    package = top_level(entries[0].name)
    totals: dict[str, int] = {}
    for entry in entries:
        for node, chain in walk(entry.children, (entry.name,)):
            root = top_level(node.name)
            direct = all(  # loaded by the package itself, not by another one it loads
                top_level(outer) == package or not is_third_party(outer) for outer in chain
            )
            if is_third_party(node.name) and root != package and direct:
                totals[root] = totals.get(root, 0) + node.cumulative_us
    return sorted(totals.items(), key=lambda item: -item[1])


def stack_running() -> bool:
    result = subprocess.run(
        [bin_path("synopsis"), "stack", "status"], capture_output=True, text=True, check=False
    )
    print(result.stdout, end="")
    return result.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per command")
    parser.add_argument("--query", default="range", help="what `synopsis search` looks for")
    args = parser.parse_args()
    settings = Settings.from_env()
    if not settings.uses_local_weaviate:
        raise SystemExit("the search floor needs the local Weaviate: SYNOPSIS_WEAVIATE_URL is set")
    if not stack_running():
        raise SystemExit("the local stack is not running: this benchmark starts nothing")

    floor = "python -c pass"
    help_name = "synopsis --help"
    search_floor = f"bare weaviate-client search (embed + joint hybrid, k = {K})"
    search_name = f"synopsis search {args.query!r} --k {K}"
    commands = {
        floor: [sys.executable, "-c", "pass"],
        help_name: [bin_path("synopsis"), "--help"],
        search_floor: floor_search_command(settings, args.query),
        search_name: [bin_path("synopsis"), "search", args.query, "--k", str(K)],
    }
    load_before = load_text()
    started = dt.datetime.now(dt.UTC)
    seconds = timings(commands, args.runs)
    cli_top, cli_packages, cli_total = import_tables("import service.cli")
    search_top, search_packages, search_total = import_tables(
        "from service.synopsis import Synopsis"
    )
    load_after = load_text()

    medians = {name: statistics.median(values) for name, values in seconds.items()}
    rows = "\n".join(
        f"| `{name}` | {min(values):.3f} | {medians[name]:.3f} | {max(values):.3f} "
        f"| {medians[name] / medians[floor]:.1f} |"
        for name, values in seconds.items()
    )
    table = (
        "| command | min s | median s | max s | median / `python -c pass` |\n"
        "|---|---:|---:|---:|---:|\n" + rows
    )

    def verdict(name: str, goal: float) -> str:
        return f"{medians[name]:.2f} s ({'met' if medians[name] <= goal else 'not met'})"

    goals = (
        f"- `synopsis --help` ≤ {HELP_GOAL} s: {verdict(help_name, HELP_GOAL)}\n"
        f"- `synopsis search` ≤ {SEARCH_GOAL:.0f} s: {verdict(search_name, SEARCH_GOAL)}; "
        f"its floor, the bare weaviate-client search, {medians[search_floor]:.2f} s "
        f"({medians[search_name] / medians[search_floor]:.1f}×)"
    )
    facts = (
        f"- date: {started:%Y-%m-%d %H:%M} UTC; machine: {os.cpu_count()} logical cores, "
        f"{cpu_model()}; load average (1/5/15 min) {load_before} before, {load_after} after\n"
        f"- {args.runs} timed runs per command (after one warm-up run each), interleaved; "
        "wall time of the whole process; the console script of `.venv` (no `uv run`)\n"
        f"- local stack already running (Weaviate {settings.stack.weaviate_version}, Ollama "
        f"{settings.stack.ollama_version}); index: the "
        f"`{settings.external.collection_prefix or '(default)'}` collections; embeddings "
        f"{settings.models.embedding_model}; Python {platform.python_version()}"
    )
    section = (
        "## Start-up: `synopsis --help` and `synopsis search`\n\n"
        f"```sh\n{COMMAND}\n```\n\n{facts}\n\n{table}\n\n"
        f"Goals (median, on a 2-core machine):\n\n{goals}\n\n"
        f"### What `synopsis --help` imports (`import service.cli`, {cli_total:.2f} s)\n\n"
        f"{cli_top}\n\n{cli_packages}\n\n"
        "### What `synopsis search` imports besides (`from service.synopsis import "
        f"Synopsis`, {search_total:.2f} s)\n\n"
        f"{search_top}\n\n{search_packages}\n\n"
        "How to read it:\n\n"
        "- The import tables come from one `python -X importtime` run each, so their\n"
        "  milliseconds are noisier than the timed runs; *cumulative* includes the modules\n"
        "  a module imported first. A module imported by two others is counted under the\n"
        "  first only, so the chain shown is the one that pays for it.\n"
        "- The search floor pays for the interpreter, `import weaviate`, the connection\n"
        "  (with its readiness checks) and the two calls; `synopsis search` adds its own\n"
        "  imports, the stack check (`Synopsis.open` asks both servers whether they are\n"
        "  up), the collections' embedding check and the hits' summaries.\n"
    )
    print(section)
    write_section(REPORT, "startup", section)


if __name__ == "__main__":
    main()
