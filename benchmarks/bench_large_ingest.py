"""Benchmark: a large site's chunks made searchable, against the embedding model alone.

Run from the repository root, with the local stack up and nothing else using the CPU:

    uv run python benchmarks/bench_large_ingest.py [--pages N] [--prefix P]

Takes the first `--pages` pages (sorted paths) of the Python 3.11 HTML docs, as
bench_memory.py does. First it embeds the texts the ingest will embed (each new chunk with
its header path, `indexed_text`) with the product's embedder alone: no Weaviate, the same
batches. Then it starts `synopsis ingest PAGES` into fresh collections (prefix `--prefix`,
dropped before and after) and polls every second: the chunk count, and the ingest
process's peak RSS (VmHWM). When every chunk is stored and searchable it stops the ingest
(SIGTERM; its summaries would follow, one LLM call each) and writes the "large-ingest"
section of docs/benchmarks.md (or `--section`): seconds until every chunk was
searchable, the embedding alone's seconds, their ratio (the throughput issue's goal: at
most 1.2), and the peak RSS (goal: at most 600 MiB, flat in the number of pages).
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
from service.index.records import indexed_text
from service.settings import Settings
from service.synopsis import Synopsis
from service.wiring import embedder
from splitters import chunk_documents
from splitters.base.metadata import HEADERS

REPORT = Path("docs/benchmarks.md")
DOCS = Path("/usr/share/doc/python3.11/html")


def pages(count: int) -> list[str]:
    found = sorted(str(p) for p in DOCS.rglob("*.html") if "_sources" not in p.parts)
    return found[:count]


def chunk_texts(sources: list[str], max_tokens: int) -> list[str]:
    """What the ingest embeds: each distinct chunk of each source with its header path."""
    texts: list[str] = []
    for document in load(sources):
        seen: set[tuple[tuple[str, ...], str]] = set()
        for chunk in chunk_documents([document], max_tokens=max_tokens):
            headers = tuple(chunk.metadata.get(HEADERS) or [])
            if (headers, chunk.page_content) not in seen:
                seen.add((headers, chunk.page_content))
                texts.append(indexed_text(headers, chunk.page_content))
    return texts


def vm_hwm_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--prefix", default="BenchLargeIngest")
    parser.add_argument("--timeout", type=float, default=7200.0)
    parser.add_argument("--section", default="large-ingest")
    args = parser.parse_args()

    settings = Settings.from_env().with_overrides(collection_prefix=args.prefix)
    sources = pages(args.pages)
    texts = chunk_texts(sources, settings.ingest.max_tokens)
    load_before = load_text()

    alone = embedder(settings)
    alone.embed_documents(texts[:1])  # loads the model; not timed
    started = time.perf_counter()
    alone.embed_documents(texts)
    embed_seconds = time.perf_counter() - started
    alone.close()
    print(f"the embedding model alone: {len(texts)} texts in {embed_seconds:.1f} s", flush=True)

    synopsis = Synopsis.open(settings)
    synopsis.store.drop()
    all_stored: float | None = None
    peak = 0.0
    try:
        with IngestProcess(sources, args.prefix) as ingest:
            started = time.perf_counter()
            while time.perf_counter() - started < args.timeout:
                time.sleep(1.0)
                peak = max(peak, vm_hwm_mib(ingest.pid))
                try:
                    stored = int(str(synopsis.store.stats()["originals"] or 0))
                except StoreError:  # the ingest has not created every collection yet
                    continue
                if stored >= len(texts):
                    all_stored = time.perf_counter() - started
                    peak = max(peak, vm_hwm_mib(ingest.pid))
                    break
                if ingest.ended():
                    break
    finally:
        synopsis.store.drop()
        synopsis.close()
    load_after = load_text()
    if all_stored is None:
        raise SystemExit(f"the chunks were not all stored; the ingest said:\n{ingest.tail()}")
    body = (
        f"## A large site: every chunk searchable, against the embedding model alone\n\n"
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC: `uv run python "
        f"benchmarks/bench_large_ingest.py --pages {args.pages} --section {args.section}` on "
        f"{cpu_model()} "
        f"({os.cpu_count()} cores), load {load_before} → {load_after}. The first "
        f"{len(sources)} pages (sorted paths) of the Python 3.11 HTML docs: "
        f"{len(texts)} chunks.\n\n"
        "| measure | value |\n|---|---:|\n"
        f"| `synopsis ingest`: every chunk stored and searchable | {all_stored:.1f} s |\n"
        f"| the embedding model alone, the same texts and batches | {embed_seconds:.1f} s |\n"
        f"| ratio (goal ≤ 1.2) | {all_stored / embed_seconds:.2f} |\n"
        f"| chunks per second, ingest | {len(texts) / all_stored:.1f} |\n"
        f"| peak RSS of the ingest process (VmHWM) | {peak:.0f} MiB |\n"
    )
    print(body)
    write_section(REPORT, args.section, body)


if __name__ == "__main__":
    main()
