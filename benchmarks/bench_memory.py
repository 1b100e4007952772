"""Benchmark: peak memory of chunking, searching and ingesting, one fresh process per case.

Run from the repository root:

    uv run python benchmarks/bench_memory.py [--pages 50 150 530] [--prefix P] [--skip-search]

Each case runs in a subprocess of its own (this script with `--case`), which reports its
peak resident set size (VmHWM from /proc/self/status) after the work, and its VmHWM
after the imports and setup, before the work. Cases:

* `chunk N`: the first N pages (sorted paths) of the Python 3.11 HTML docs streamed
  through `loaders.load` and `splitters.chunk_documents`, chunks counted and dropped —
  for N in `--pages`; then the largest of those pages alone, and, for contrast, all N
  pages held in lists (`list(load(...))`, `list(chunk_documents(...))`).
* `search`: 32 threads, 200 `Synopsis.search` calls in the default mode (joint), over
  the index of `--prefix` (default: the default collections).

The ingest's peak RSS is measured by `benchmarks/bench_ingest.py` in its own process and
reported in its section. The figures go to the "memory" section of docs/benchmarks.md.
"""

# Each case imports only what it needs, so that its setup figure is its own.
# ruff: noqa: PLC0415

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from report import load_text, write_section

REPORT = Path("docs/benchmarks.md")
DOCS = Path("/usr/share/doc/python3.11/html")
QUERIES = [
    "how do I loop over a list with its index",
    "default argument values evaluated once mutable list",
    "list comprehension with a condition",
    "iterate over a dictionary's keys and values",
    "what is __name__ == '__main__' for",
    "read a file line by line with open",
    "catch several exceptions in one except clause",
    "write an iterator with __iter__ and __next__",
    "create a virtual environment with venv",
    "floating point representation error 0.1 + 0.2",
]


def status_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def pages() -> list[str]:
    return sorted(str(p) for p in DOCS.rglob("*.html") if "_sources" not in p.parts)


# -- the cases, run in a child process ------------------------------------------------


def case_chunk(selected: list[str], *, held: bool) -> dict[str, object]:
    import logging

    from langchain_core.documents import Document

    from loaders import load
    from splitters import chunk_documents
    from splitters.encoding import cl100k_base

    logging.getLogger("splitters").setLevel(logging.ERROR)
    cl100k_base()
    setup = status_mib("VmHWM")
    start = time.perf_counter()
    chunks = markdown = largest = 0
    largest_source = ""
    if held:
        documents = list(load(selected))
        pieces = list(chunk_documents(documents, max_tokens=500))
        chunks = len(pieces)
        for document in documents:
            size = len(document.page_content.encode())
            markdown += size
            if size > largest:
                largest, largest_source = size, str(document.metadata["source"])
    else:

        def sizes() -> Iterator[Document]:
            nonlocal markdown, largest, largest_source
            for document in load(selected):
                size = len(document.page_content.encode())
                markdown += size
                if size > largest:
                    largest, largest_source = size, str(document.metadata["source"])
                yield document

        for _chunk in chunk_documents(sizes(), max_tokens=500):
            chunks += 1
    return {
        "pages": len(selected),
        "chunks": chunks,
        "markdown_mb": markdown / 1e6,
        "largest_mb": largest / 1e6,
        "largest": largest_source,
        "seconds": time.perf_counter() - start,
        "setup_mib": setup,
        "peak_mib": status_mib("VmHWM"),
    }


def case_search(prefix: str) -> dict[str, object]:
    from service.query.search import SearchRequest
    from service.settings import Settings
    from service.synopsis import Synopsis

    settings = Settings.from_env().with_overrides(collection_prefix=prefix)
    with Synopsis.open(settings) as synopsis:
        synopsis.search(SearchRequest(query=QUERIES[0]))
        setup = status_mib("VmHWM")
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=32) as pool:
            hits = list(
                pool.map(
                    lambda i: len(synopsis.search(SearchRequest(query=QUERIES[i % 10]))),
                    range(200),
                )
            )
        seconds = time.perf_counter() - start
        originals = synopsis.stats().get("originals")
    return {
        "requests": len(hits),
        "originals": originals,
        "seconds": seconds,
        "setup_mib": setup,
        "peak_mib": status_mib("VmHWM"),
    }


# -- the parent -----------------------------------------------------------------------


def child(*args: str) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-W", "ignore::ResourceWarning", __file__, "--case", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"case {args} failed:\n{result.stderr[-2000:]}")
    figures: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    print(args, figures, flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, nargs="+", default=[50, 150, 530])
    parser.add_argument("--prefix", default="", help="collection prefix of the searched index")
    parser.add_argument("--skip-search", action="store_true")
    parser.add_argument("--skip-held", action="store_true", help="skip the held-in-lists case")
    parser.add_argument("--case", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.case:  # a child: run one case, print its figures as the last line
        kind, *rest = args.case
        if kind == "search":
            figures = case_search(rest[0] if rest else "")
        else:
            selected = rest if kind == "chunk-files" else pages()[: int(rest[0])]
            figures = case_chunk(selected, held=kind == "chunk-held")
        print(json.dumps(figures))
        return

    load_before = load_text()
    started = dt.datetime.now(dt.UTC)
    rows = []
    largest_page = ""
    for count in args.pages:
        figures = child("chunk", str(count))
        largest_page = str(figures["largest"])
        rows.append(("streamed", figures))
    rows.append(("largest page alone", child("chunk-files", largest_page)))
    if not args.skip_held:
        rows.append(("held in lists", child("chunk-held", str(max(args.pages)))))
    chunk_table = (
        "| pages | how | Markdown MB | largest page MB | chunks | s | VmHWM after setup MiB "
        "| peak RSS MiB | peak − setup MiB |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|\n"
        + "\n".join(
            f"| {f['pages']} | {how} | {f['markdown_mb']:.1f} | {f['largest_mb']:.2f} "
            f"| {f['chunks']} | {f['seconds']:.0f} | {f['setup_mib']:.0f} | {f['peak_mib']:.0f} "
            f"| {float(str(f['peak_mib'])) - float(str(f['setup_mib'])):.0f} |"
            for how, f in rows
        )
    )
    search_text = ""
    if not args.skip_search:
        s = child("search", args.prefix)
        search_text = (
            "### Search, 32 callers\n\n"
            "| requests | originals in index | s | VmHWM after setup MiB | peak RSS MiB |\n"
            "|---:|---:|---:|---:|---:|\n"
            f"| {s['requests']} | {s['originals']} | {s['seconds']:.1f} | "
            f"{s['setup_mib']:.0f} | {s['peak_mib']:.0f} |\n\n"
            f"Index: the `{args.prefix or '(default)'}` collections; default mode "
            "(joint), k = 5, "
            "10 distinct queries (so most embeddings come from the cache).\n\n"
        )
    command = (
        "uv run python benchmarks/bench_memory.py"
        + (f" --prefix {args.prefix}" if args.prefix else "")
        + (" --skip-held" if args.skip_held else "")
    )
    section = (
        "## Memory\n\n"
        f"```sh\n{command}\n```\n\n"
        f"- date: {started:%Y-%m-%d %H:%M} UTC; machine: {os.cpu_count()} logical cores, "
        f"load average {load_before} before, {load_text()} after\n"
        "- each row is a fresh process; *peak RSS* is its VmHWM after the work, *after\n"
        "  setup* its VmHWM after imports (and, for search, the connection and one query)\n\n"
        f"### Chunking the Python 3.11 docs (`{DOCS}`)\n\n{chunk_table}\n\n"
        "Streamed, the peak follows the largest single page (the general index), not the\n"
        "number of pages: compare the streamed rows with *largest page alone*."
        + (
            " The *held in lists* row is what holding the corpus would cost instead.\n\n"
            if not args.skip_held
            else "\n\n"
        )
        + f"{search_text}"
        "The ingest's peak RSS is in the ingestion section (measured in that script's own\n"
        "process, which does nothing but the ingest).\n"
    )
    print(section)
    write_section(REPORT, "memory", section)


if __name__ == "__main__":
    main()
