"""Benchmark: how soon an ingest's chunks are searchable, before its summaries are written.

Run from the repository root, with the local stack up and nothing else using the CPU:

    uv run python benchmarks/bench_first_search.py [--sources DIR ...] [--prefix P]

It starts `synopsis ingest SOURCES` into fresh collections (prefix `--prefix`, dropped
before and after), polls the chunk count and a search every second, and records when
the first hit came back, when every chunk of the sources was stored (the loader and
splitter tell how many to expect) and how many summaries were written by then. Then it
stops the ingest (SIGTERM; the next ingest would finish it) and writes the
"time to first search" section of docs/benchmarks.md. Goal: every chunk of the Python
tutorial searchable within 60 s of the start.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import time
from pathlib import Path

from ingest_process import IngestProcess
from report import cpu_model, load_text, write_section

from loaders import load
from service.errors import StoreError
from service.query.search import SearchRequest
from service.settings import Settings
from service.synopsis import Synopsis
from splitters import chunk_documents

REPORT = Path("docs/benchmarks.md")
TUTORIAL = "/usr/share/doc/python3.11/html/tutorial/"


def expected_chunks(sources: list[str], max_tokens: int) -> int:
    """How many distinct chunks the ingest will store (the splitter's count per source)."""
    total = 0
    for document in load(sources):
        chunks = chunk_documents([document], max_tokens=max_tokens)
        total += len({(tuple(c.metadata.get("headers") or []), c.page_content) for c in chunks})
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", nargs="+", default=[TUTORIAL])
    parser.add_argument("--prefix", default="BenchFirstSearch")
    parser.add_argument("--query", default="print numbers from 1 to 30")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()

    settings = Settings.from_env().with_overrides(collection_prefix=args.prefix)
    expected = expected_chunks(args.sources, settings.ingest.max_tokens)
    synopsis = Synopsis.open(settings)
    synopsis.store.drop()
    load_before = load_text()
    first_hit = all_stored = None
    summaries_then = 0
    try:
        with IngestProcess(args.sources, args.prefix) as ingest:
            started = time.perf_counter()
            while time.perf_counter() - started < args.timeout:
                time.sleep(1.0)
                elapsed = time.perf_counter() - started
                try:
                    if first_hit is None and synopsis.search(SearchRequest(query=args.query, k=1)):
                        first_hit = elapsed
                    stats = synopsis.store.stats()
                except StoreError:  # the ingest has not created every collection yet
                    continue
                if int(str(stats["originals"] or 0)) >= expected:
                    all_stored = elapsed
                    summaries_then = int(str(stats["summaries"] or 0))
                    break
                if ingest.ended():
                    break
    finally:
        synopsis.store.drop()
        synopsis.close()
    load_after = load_text()
    if all_stored is None:
        raise SystemExit(
            f"the chunks were not all stored within {args.timeout:.0f} s; the ingest said:\n"
            f"{ingest.tail()}"
        )
    body = (
        "## Time to first search\n\n"
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC: "
        f"`uv run python benchmarks/bench_first_search.py --sources {' '.join(args.sources)}`"
        f" on {cpu_model()} ({os.cpu_count()} cores), load before / after "
        f"{load_before} → {load_after}.\n\n"
        "| measure | seconds after `synopsis ingest` started |\n|---|---:|\n"
        f"| first hit for {args.query!r} | {first_hit:.1f} |\n"
        f"| all {expected} chunks stored and searchable | {all_stored:.1f} |\n\n"
        f"Summaries written by then: {summaries_then} of {expected} (they follow, one LLM "
        "call each; the chunks are searched by their own text meanwhile). Goal: all "
        "chunks of the tutorial within 60 s.\n"
    )
    print(body)
    write_section(REPORT, "first-search", body)


if __name__ == "__main__":
    main()
