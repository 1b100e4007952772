"""Benchmark: embedding the tutorial's chunks, long texts alone vs every text batched.

Run from the repository root (the local stack must be up, or startable):

    uv run python benchmarks/bench_embed.py [--rounds 2]

It chunks the Python 3.11 tutorial the way the ingest does (216 chunks, header path
prepended) and embeds every chunk with the configured embedding model twice per round,
in alternating order:

* *all batched*: batches of 32; a batch refused because one text is over the model's
  context is halved until that text is alone, which is then shortened;
* *long texts alone* (what `Embedder` does): texts over 1,200 characters are sent one
  at a time, the rest in batches of 32, with the same halving as a fallback.

Both must return the same vectors. The figures go to the "embedding" section of
docs/benchmarks.md; no LLM is called.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import statistics
import time
from pathlib import Path

from report import cpu_model, load_text, write_section

from loaders import load
from service.index.records import indexed_text
from service.models.embed import Embedder, ollama_embeddings
from service.settings import Settings
from splitters import chunk_documents

REPORT = Path("docs/benchmarks.md")
TUTORIAL = Path("/usr/share/doc/python3.11/html/tutorial")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    settings = Settings.from_env()
    texts = [
        indexed_text(chunk.metadata.get("headers") or [], chunk.page_content)
        for chunk in chunk_documents(load([str(TUTORIAL)]), max_tokens=settings.ingest.max_tokens)
    ]
    variants = {
        "all batched": Embedder(
            ollama_embeddings(settings), model=settings.models.embedding_model, solo_chars=math.inf
        ),
        "long texts alone (Embedder's default)": Embedder(
            ollama_embeddings(settings), model=settings.models.embedding_model
        ),
    }
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    vectors: dict[str, list[list[float]]] = {}
    load_before = load_text()
    try:
        for round_index in range(args.rounds):
            names = list(variants)
            order = names if round_index % 2 == 0 else names[::-1]
            for name in order:
                start = time.perf_counter()
                vectors[name] = variants[name].embed_documents(texts)
                seconds[name].append(time.perf_counter() - start)
                print(f"round {round_index + 1} {name}: {seconds[name][-1]:.1f} s", flush=True)
    finally:
        for embedder in variants.values():
            embedder.close()
    first, second = vectors.values()
    if first != second:
        raise SystemExit("the two ways returned different vectors")
    long_texts = sum(len(text) > 1200 for text in texts)
    base, new = (statistics.median(seconds[name]) for name in variants)
    rows = "\n".join(
        f"| {name} | {statistics.median(values):.1f} | {', '.join(f'{v:.1f}' for v in values)} |"
        for name, values in seconds.items()
    )
    section = (
        "## Embedding the chunks\n\n"
        "```sh\nuv run python benchmarks/bench_embed.py\n```\n\n"
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC; machine: {os.cpu_count()} "
        f"logical cores, {cpu_model()}; load average {load_before} before, {load_text()} "
        "after\n"
        f"- {len(texts)} chunk texts of the tutorial (header path + chunk), {long_texts} of "
        f"them over 1,200 characters; {settings.models.embedding_model} via the local Ollama; "
        f"{args.rounds} rounds, the two ways alternating; both returned the same vectors\n\n"
        "| way | median s | per round |\n|---|---:|---|\n"
        f"{rows}\n\n"
        f"Ratio: {new / base:.2f} (long texts alone / all batched). Ollama refuses a whole\n"
        "batch when one text is over the model's context, after computing it; sending the\n"
        "long texts alone keeps those refusals to single texts.\n"
    )
    print(section)
    write_section(REPORT, "embed", section)


if __name__ == "__main__":
    main()
