"""Benchmark: Synopsis's splitters against langchain-text-splitters on the Python 3.11 docs.

Run from the repository root:

    uv run python benchmarks/bench_splitters.py [HTML_DIR] [--max-tokens N] [--runs N]

Loads every HTML page of HTML_DIR (default: Debian's python3.11-doc) once with
`loaders.load` (timed separately), then splits the same Markdown with:

* ours: `splitters.chunk_documents(max_tokens=N)`;
* LangChain: `MarkdownHeaderTextSplitter` (H1–H6), then
  `RecursiveCharacterTextSplitter` at the same size in cl100k_base tokens. That is what
  `RecursiveCharacterTextSplitter.from_tiktoken_encoder(encoding_name="cl100k_base")`
  builds, except that `from_tiktoken_encoder` would download the rank file; we pass
  the same kind of length function built on our offline `cl100k_base()`.

For each: best and median wall time over the runs, chunks, chunks over the limit,
chunks with unbalanced fences, and fenced code blocks not found byte-exact (fences
included) in one chunk of their page. The figures are printed and written to
docs/splitting.md.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from langchain_core.documents import Document
from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter
from report import cpu_model

from loaders import load
from splitters import MarkdownHeaderSplitter, chunk_documents
from splitters.base.markdown_syntax import fences_balanced, iter_code_blocks
from splitters.encoding import cl100k_base, count_tokens

DEFAULT_DOCS = Path("/usr/share/doc/python3.11/html")
REPORT = Path("docs/splitting.md")


@dataclass(frozen=True)
class Result:
    name: str
    best: float
    median: float
    chunks: int
    over_limit: int
    unbalanced: int
    not_intact: int


def split_ours(documents: list[Document], max_tokens: int) -> list[Document]:
    return list(chunk_documents(documents, max_tokens=max_tokens))


def split_langchain(documents: list[Document], max_tokens: int) -> list[Document]:
    headers = MarkdownHeaderTextSplitter(
        headers_to_split_on=[("#" * level, f"Header {level}") for level in range(1, 7)]
    )
    recursive = RecursiveCharacterTextSplitter(
        chunk_size=max_tokens, chunk_overlap=0, length_function=count_tokens
    )
    chunks: list[Document] = []
    for document in documents:
        sections = headers.split_text(document.page_content)
        for section in sections:
            section.metadata = {**document.metadata, **section.metadata}
        chunks.extend(recursive.split_documents(sections))
    return chunks


def source_code_blocks(documents: list[Document]) -> dict[str, list[str]]:
    """Closed fenced blocks of each page, in the sections both splitters keep."""
    splitter = MarkdownHeaderSplitter()
    blocks: dict[str, list[str]] = {}
    for document in documents:
        found: list[str] = []
        for section in splitter.split_sections(document.page_content):
            found.extend(
                section.content[b.start : b.end]
                for b in iter_code_blocks(section.content)
                if b.closed
            )
        blocks[document.metadata["source"]] = found
    return blocks


def measure(
    name: str,
    split: Callable[[list[Document], int], list[Document]],
    documents: list[Document],
    blocks: dict[str, list[str]],
    *,
    max_tokens: int,
    runs: int,
) -> Result:
    times: list[float] = []
    chunks: list[Document] = []
    for _ in range(runs):
        start = time.perf_counter()
        chunks = split(documents, max_tokens)
        times.append(time.perf_counter() - start)
    by_source: dict[str, list[str]] = defaultdict(list)
    for chunk in chunks:
        by_source[chunk.metadata["source"]].append(chunk.page_content)
    not_intact = sum(
        not any(block in text for text in by_source[source])
        for source, found in blocks.items()
        for block in found
    )
    return Result(
        name=name,
        best=min(times),
        median=statistics.median(times),
        chunks=len(chunks),
        over_limit=sum(count_tokens(c.page_content) > max_tokens for c in chunks),
        unbalanced=sum(not fences_balanced(c.page_content) for c in chunks),
        not_intact=not_intact,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html_dir", nargs="?", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--max-tokens", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    # Over-long lines are counted in the table; one warning each would drown it.
    logging.getLogger("splitters").setLevel(logging.ERROR)

    pages = sorted(str(p) for p in args.html_dir.rglob("*.html") if "_sources" not in p.parts)
    start = time.perf_counter()
    documents = list(load(pages))
    load_seconds = time.perf_counter() - start
    cl100k_base()  # build the encoding outside the timed runs
    markdown_bytes = sum(len(d.page_content.encode()) for d in documents)
    blocks = source_code_blocks(documents)
    total_blocks = sum(len(found) for found in blocks.values())

    results = [
        measure(
            "Synopsis chunk_documents",
            split_ours,
            documents,
            blocks,
            max_tokens=args.max_tokens,
            runs=args.runs,
        ),
        measure(
            "LangChain MarkdownHeader + RecursiveCharacter (tiktoken)",
            split_langchain,
            documents,
            blocks,
            max_tokens=args.max_tokens,
            runs=args.runs,
        ),
    ]

    header = (
        "| splitter | best s | median s | chunks | over limit | unbalanced fences "
        "| code blocks not intact |\n|---|---:|---:|---:|---:|---:|---:|"
    )
    rows = [
        f"| {r.name} | {r.best:.2f} | {r.median:.2f} | {r.chunks} | {r.over_limit} "
        f"| {r.unbalanced} | {r.not_intact} of {total_blocks} |"
        for r in results
    ]
    table = "\n".join([header, *rows])
    facts = (
        f"- corpus: {len(documents)} pages from `{args.html_dir}`, "
        f"{markdown_bytes / 1e6:.1f} MB of Markdown, {total_blocks} fenced code blocks "
        f"in kept sections; loading took {load_seconds:.1f} s (not included above)\n"
        f"- limit: {args.max_tokens} cl100k_base tokens, no overlap; {args.runs} runs each\n"
        f"- machine: {os.cpu_count()} logical cores, {cpu_model()}; "
        f"Python {platform.python_version()}, tiktoken {metadata.version('tiktoken')}, "
        f"langchain-text-splitters {metadata.version('langchain-text-splitters')}"
    )
    print(table)
    print(facts)
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text(
        "# Splitting benchmark\n\n"
        "Synopsis's splitters against LangChain's on the Python 3.11 documentation,\n"
        "in the same process, on the same Markdown. Reproduce with:\n\n"
        "```sh\nuv run python benchmarks/bench_splitters.py\n```\n\n"
        f"{table}\n\n{facts}\n\n"
        "How to read it:\n\n"
        "- *over limit*: chunks with more tokens than the limit. Ours are all single lines\n"
        "  that cannot be cut without cutting a line (mostly rows of the general index);\n"
        "  LangChain cuts such lines mid-line.\n"
        "- *code blocks not intact*: fenced blocks of the source not found byte-exact,\n"
        "  fences included, in one chunk of their page. For Synopsis these are only\n"
        "  blocks larger than the limit, cut at line boundaries into pieces that each\n"
        "  carry the original fence and info string (the corpus test checks the pieces\n"
        "  rebuild the block); for LangChain they are blocks cut or re-indented.\n"
        "- The general index pages put hundreds of links on one line; both splitters\n"
        "  spend a good part of their time there.\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    sys.exit(main())
