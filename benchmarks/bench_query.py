"""Benchmark: Synopsis's query path against the raw Weaviate floor, and reference resolution.

Run from the repository root, against an index that holds the Python tutorial
(`uv run synopsis ingest /usr/share/doc/python3.11/html/tutorial/`, summaries attached):

    uv run python benchmarks/bench_query.py [--requests 200] [--rounds 2] [--callers 1 8 32]

(`--prefix P` queries the collections of another index, built by `synopsis ingest`
with `SYNOPSIS_COLLECTION_PREFIX=P`.)

Two sections of docs/benchmarks.md are (re)written:

* **query path** — a fixed list of 30 developer questions, asked round-robin by 1, 8
  and 32 threads, `--requests` requests per level and variant, variants interleaved
  within each round so that the machine's load hits them alike. Each Synopsis mode is
  compared with the raw weaviate-client call it makes, plus the query embedding
  (LangChain `OllamaEmbeddings.embed_query`, the same client Synopsis wraps, no cache):

  - *floor joint*: one hybrid query over OriginalDocuments with the vector part on the
    summary vector `joint` reads (`Settings.search.summary_vector`, by default `context`)
    — alone at weight 1 (the default), else
    `TargetVectors.manual_weights({"content": 1 - w, vector: w})` — and BM25 over
    content, headers, identifiers and the attached summary at
    `Settings.search.summary_keyword_weight` (`summary^0.5`; limit k): what
    `Store.search_originals` sends for the default mode, `joint`;
  - *floor originals*: the same over the `content` vector only, without the summary
    property (the `originals` mode);
  - *floor summaries*: a hybrid query on SummarizedDocuments with `return_references`
    to the originals (limit k);
  - each floor also with the vector computed beforehand (*vector given*: the floor a
    cached embedding can reach);
  - *Synopsis joint (default)*, *originals*, *summaries*, *fused*:
    `Synopsis.search(search_request(settings, query, k=5, mode=...))`, in process.

  The main figure is *Synopsis joint (default), cold* over *floor joint, cold*.
  Synopsis caches query embeddings (an LRU in `service.models.embed.Embedder`). *cold*
  runs use an Embedder whose cache holds nothing, so every request embeds its query;
  *warm* runs use the normal Embedder after each of the 30 queries was asked once.

* **reference resolution** — the summary leg's way of getting the originals (the
  `originalDocument` cross-reference, resolved by Weaviate in the hybrid query) against
  a hybrid query that returns `original_id` followed by a second query,
  `fetch_objects(filters=Filter.by_id().contains_any(ids))`. Vectors are computed
  beforehand, so only Weaviate is timed.

Latencies are per request, measured in the calling thread; throughput is requests
over the wall time of the level.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from report import cpu_model, load_text, write_section
from weaviate.classes.query import (
    Filter,
    HybridFusion,
    MetadataQuery,
    QueryReference,
    TargetVectors,
)

from service.index.queries import ORIGINAL_HIT_PROPERTIES
from service.index.records import CONTENT_VECTOR
from service.models.embed import Embedder, ollama_embeddings
from service.query.search import SearchRequest, search_request
from service.settings import Settings
from service.synopsis import Synopsis

REPORT = Path("docs/benchmarks.md")
K = 5
ORIGINAL_PROPERTIES = ORIGINAL_HIT_PROPERTIES  # what a hit shows of an original

# The variants whose ratio is the headline figure.
JOINT_FLOOR_COLD = "floor joint, cold (embed + hybrid, summary vector)"
JOINT_COLD = "Synopsis joint (default), cold"
UNSHARED_COLD = "Synopsis joint (default), cold, one embedding call per search"

# Asked the way a developer types into a search box; written for this benchmark.
QUERIES = [
    "how do I loop over a list with its index",
    "what does the else clause on a for loop do",
    "default argument values evaluated once mutable list",
    "keyword-only arguments in function definitions",
    "lambda expressions",
    "how to unpack a list into function arguments",
    "list comprehension with a condition",
    "use a list as a queue efficiently",
    "difference between a tuple and a list",
    "set operations union intersection",
    "iterate over a dictionary's keys and values",
    "how does import find modules sys.path",
    "what is __name__ == '__main__' for",
    "packages and __init__.py files",
    "format a float with two decimals f-string",
    "read a file line by line with open",
    "json.dump and json.load to save data",
    "catch several exceptions in one except clause",
    "raise an exception from another exception",
    "finally clause cleanup actions",
    "class variables shared between instances",
    "private name mangling double underscore",
    "write an iterator with __iter__ and __next__",
    "generators and yield",
    "create a virtual environment with venv",
    "install packages with pip",
    "floating point representation error 0.1 + 0.2",
    "interactive interpreter line editing history",
    "integer division and the remainder operator",
    "slicing strings with negative indices",
]


@dataclass
class Series:
    """Latencies of one variant at one level, pooled over rounds."""

    latencies: list[float] = field(default_factory=list)
    requests: int = 0
    wall: float = 0.0

    def add(self, latencies: Sequence[float], wall: float) -> None:
        self.latencies.extend(latencies)
        self.requests += len(latencies)
        self.wall += wall

    def pct(self, p: int) -> float:
        """The p-th percentile in milliseconds."""
        cuts = statistics.quantiles(self.latencies, n=100, method="inclusive")
        return cuts[p - 1] * 1000

    @property
    def throughput(self) -> float:
        return self.requests / self.wall if self.wall else 0.0


def run_level(
    call: Callable[[str], object], queries: Sequence[str], *, callers: int, requests: int
) -> tuple[list[float], float]:
    """`requests` calls spread over `callers` threads; per-call latencies and wall time."""
    jobs = [queries[index % len(queries)] for index in range(requests)]

    def timed(query: str) -> float:
        start = time.perf_counter()
        call(query)
        return time.perf_counter() - start

    with ThreadPoolExecutor(max_workers=callers) as pool:
        start = time.perf_counter()
        latencies = list(pool.map(timed, jobs))
        wall = time.perf_counter() - start
    return latencies, wall


class Floor:
    """The raw weaviate-client query that one Synopsis mode makes: a hybrid query over the
    chunks with both named vectors and the summary's text (`joint` mode, the default),
    over the chunks' `content` vector alone (`originals` mode), or over the summaries
    resolving their originals (`summaries` mode)."""

    def __init__(self, synopsis: Synopsis, settings: Settings, *, over: str) -> None:
        self.over = over
        store = synopsis.store
        self.collection = store.summaries if over == "summaries" else store.originals
        self.embeddings = ollama_embeddings(settings)
        self.vectors: dict[str, list[float]] = {}
        self.alpha = settings.search.alpha
        self.summary_vector = settings.search.summary_vector
        self.summary_weight = settings.search.summary_weight
        self.keyword_properties = search_request(settings, "-").summary_use().keyword_properties()

    def hybrid(self, query: str, vector: list[float], limit: int = K) -> Any:
        if self.over == "joint":
            shape: dict[str, Any] = {
                "target_vector": (
                    self.summary_vector
                    if self.summary_weight >= 1.0
                    else TargetVectors.manual_weights(
                        {
                            CONTENT_VECTOR: 1.0 - self.summary_weight,
                            self.summary_vector: self.summary_weight,
                        }
                    )
                ),
                "query_properties": self.keyword_properties,
                "return_properties": ORIGINAL_PROPERTIES,
            }
        elif self.over == "originals":
            shape = {
                "target_vector": CONTENT_VECTOR,
                "query_properties": ["content", "headers", "identifiers"],
                "return_properties": ORIGINAL_PROPERTIES,
            }
        else:
            shape = {
                "query_properties": ["summary", "headers", "identifiers"],
                "return_properties": ["summary"],
                "return_references": QueryReference(
                    link_on="originalDocument", return_properties=ORIGINAL_PROPERTIES
                ),
            }
        return self.collection.query.hybrid(
            query,
            vector=vector,
            alpha=self.alpha,
            fusion_type=HybridFusion.RELATIVE_SCORE,
            limit=limit,
            return_metadata=MetadataQuery(score=True),
            **shape,
        )

    def cold(self, query: str) -> Any:
        return self.hybrid(query, self.embeddings.embed_query(query))

    def given(self, query: str) -> Any:
        return self.hybrid(query, self.vectors[query])


def bench_query_path(
    settings: Settings,
    *,
    callers: Sequence[int],
    requests: int,
    rounds: int,
    command: str,
) -> str:
    warm = Synopsis.open(settings)
    cold = Synopsis(
        settings,
        client=warm.client,
        embedder=Embedder(
            ollama_embeddings(settings),
            model=settings.models.embedding_model,
            query_cache_size=0,
            query_batch_size=settings.models.query_embedding_batch_size,
        ),
        summarizer=warm.summarizer,
    )
    # The same cold search with one embedding call per search (as before calls were shared),
    # measured in the same run: the machine's load hits both alike.
    unshared = Synopsis(
        settings,
        client=warm.client,
        embedder=Embedder(
            ollama_embeddings(settings),
            model=settings.models.embedding_model,
            query_cache_size=0,
            query_batch_size=1,
        ),
        summarizer=warm.summarizer,
    )
    try:
        stats = warm.stats()
        pending = warm.pending_summaries()
        if pending:
            print(f"warning: {pending} chunks have no summary attached yet", flush=True)
        floor = Floor(warm, settings, over="summaries")
        floor.vectors = {query: floor.embeddings.embed_query(query) for query in QUERIES}
        chunk_floor = Floor(warm, settings, over="originals")
        chunk_floor.vectors = floor.vectors
        joint_floor = Floor(warm, settings, over="joint")
        joint_floor.vectors = floor.vectors
        for query in QUERIES:  # warm the LRU and check every query finds something
            for mode in ("joint", "summaries"):
                if not warm.search(request(settings, query, mode)):
                    raise SystemExit(f"no {mode} hits for {query!r}: is the tutorial ingested?")

        def synopsis_call(instance: Synopsis, mode: str) -> Callable[[str], object]:
            return lambda query: instance.search(request(settings, query, mode))

        variants: dict[str, Callable[[str], object]] = {
            JOINT_FLOOR_COLD: joint_floor.cold,
            JOINT_COLD: synopsis_call(cold, "joint"),
            **(
                {UNSHARED_COLD: synopsis_call(unshared, "joint")}
                if settings.models.query_embedding_batch_size > 1
                else {}
            ),
            "floor originals, cold (embed + hybrid)": chunk_floor.cold,
            "Synopsis originals, cold": synopsis_call(cold, "originals"),
            "floor summaries, cold (embed + hybrid + refs)": floor.cold,
            "Synopsis summaries, cold": synopsis_call(cold, "summaries"),
            "Synopsis fused, cold": synopsis_call(cold, "fused"),
            "floor joint, vector given": joint_floor.given,
            "Synopsis joint (default), warm": synopsis_call(warm, "joint"),
            "floor originals, vector given": chunk_floor.given,
            "Synopsis originals, warm": synopsis_call(warm, "originals"),
            "floor summaries, vector given": floor.given,
            "Synopsis summaries, warm": synopsis_call(warm, "summaries"),
            "Synopsis fused, warm": synopsis_call(warm, "fused"),
        }
        series = {(name, c): Series() for name in variants for c in callers}
        ratios: dict[int, list[float]] = {c: [] for c in callers}
        load_before = load_text()
        started = time.perf_counter()
        for round_index in range(rounds):
            names = list(variants)
            shift = round_index % len(names)
            names = names[shift:] + names[:shift]  # rotate the order between rounds
            for level in callers:
                p50: dict[str, float] = {}
                for name in names:
                    run_level(variants[name], QUERIES[:4], callers=level, requests=level)
                    latencies, wall = run_level(
                        variants[name], QUERIES, callers=level, requests=requests
                    )
                    series[(name, level)].add(latencies, wall)
                    p50[name] = statistics.median(latencies)
                    print(
                        f"round {round_index + 1} callers {level:2} {name:50} "
                        f"p50 {p50[name] * 1000:7.1f} ms  {requests / wall:6.1f} req/s",
                        flush=True,
                    )
                ratios[level].append(p50[JOINT_COLD] / p50[JOINT_FLOOR_COLD])
        elapsed = time.perf_counter() - started
        load_after = load_text()
        overhead = synopsis_overhead(warm, settings)
        batcher = cold.embedder.query_batcher
        batching = (
            f"; the cold Synopsis sent {batcher.texts} query texts in {batcher.calls} calls"
            if batcher is not None and batcher.calls
            else ""
        )
        weaviate_version = str(warm.client.get_meta().get("version", "?"))
    finally:
        unshared.searcher.close()
        unshared.embedder.close()
        unshared.answerer.close()
        cold.searcher.close()
        cold.embedder.close()
        cold.answerer.close()
        warm.close()

    rows = []
    for level in callers:
        for name in variants:
            s = series[(name, level)]
            rows.append(
                f"| {level} | {name} | {s.pct(50):.1f} | {s.pct(95):.1f} | {s.pct(99):.1f} "
                f"| {s.throughput:.1f} |"
            )
    table = (
        "| callers | variant | p50 ms | p95 ms | p99 ms | req/s |\n"
        "|---:|---|---:|---:|---:|---:|\n" + "\n".join(rows)
    )

    def ratio(level: int, name: str, base: str) -> float:
        return series[(name, level)].pct(50) / series[(base, level)].pct(50)

    joint_cold, joint_given = JOINT_FLOOR_COLD, "floor joint, vector given"
    chunks_cold, chunks_given = (
        "floor originals, cold (embed + hybrid)",
        "floor originals, vector given",
    )
    summaries_cold, summaries_given = (
        "floor summaries, cold (embed + hybrid + refs)",
        "floor summaries, vector given",
    )
    ratio_rows = [
        f"| {level} | {ratio(level, JOINT_COLD, joint_cold):.2f} "
        f"({', '.join(f'{r:.2f}' for r in ratios[level])}) "
        f"| {ratio(level, 'Synopsis joint (default), warm', joint_given):.2f} "
        f"| {ratio(level, 'Synopsis originals, cold', chunks_cold):.2f} "
        f"| {ratio(level, 'Synopsis originals, warm', chunks_given):.2f} "
        f"| {ratio(level, 'Synopsis summaries, cold', summaries_cold):.2f} "
        f"| {ratio(level, 'Synopsis summaries, warm', summaries_given):.2f} "
        f"| {ratio(level, 'Synopsis fused, cold', summaries_cold):.2f} |"
        for level in callers
    ]
    ratio_table = (
        "| callers | joint (default) cold / its floor cold (per round) "
        "| joint warm / its floor, vector given "
        "| originals cold / its floor cold | originals warm / its floor, vector given "
        "| summaries cold / its floor cold | summaries warm / its floor, vector given "
        "| fused cold / summaries floor cold |\n|---:|---|---:|---:|---:|---:|---:|---:|\n"
        + "\n".join(ratio_rows)
    )

    def req_s(level: int, name: str) -> float:
        return series[(name, level)].throughput

    warm_name = "Synopsis joint (default), warm"

    def unshared_cells(level: int) -> str:
        if UNSHARED_COLD not in variants:
            return ""
        return (
            f" {req_s(level, UNSHARED_COLD):.1f} "
            f"| {req_s(level, UNSHARED_COLD) / req_s(level, joint_given):.2f} |"
        )

    unshared_head = (
        " joint cold, one call per search req/s | that / vector given |"
        if UNSHARED_COLD in variants
        else ""
    )
    throughput_table = (
        "| callers | joint cold req/s | joint warm req/s | cold / warm "
        f"| floor joint, vector given req/s | cold / vector given |{unshared_head}\n"
        "|---:|---:|---:|---:|---:|---:|"
        + ("---:|---:|" if unshared_head else "")
        + "\n"
        + "\n".join(
            f"| {level} | {req_s(level, JOINT_COLD):.1f} | {req_s(level, warm_name):.1f} "
            f"| {req_s(level, JOINT_COLD) / req_s(level, warm_name):.2f} "
            f"| {req_s(level, joint_given):.1f} "
            f"| {req_s(level, JOINT_COLD) / req_s(level, joint_given):.2f} |"
            + unshared_cells(level)
            for level in callers
        )
    )
    overhead_table = "| call (1 caller, 100 each) | p50 ms |\n|---|---:|\n" + "\n".join(
        f"| {name} | {value:.2f} |" for name, value in overhead.items()
    )
    facts = (
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC; {elapsed:.0f} s of measuring\n"
        f"- machine: {os.cpu_count()} logical cores, {cpu_model()}; load average "
        f"(1/5/15 min) {load_before} before, {load_after} after; the cores are shared with "
        "other test runs, so compare rows of this run with each other, not with other runs\n"
        f"- corpus: {stats.get('originals')} originals, {stats.get('summaries')} summaries "
        f"in the `{settings.external.collection_prefix or '(default)'}` collections "
        f"({pending} chunks "
        f"without an attached summary); k = {K}; joint mode: {settings.search.summary_vector} "
        f"vector weight {settings.search.summary_weight}, summary keyword weight "
        f"{settings.search.summary_keyword_weight}\n"
        f"- {len(QUERIES)} queries round-robin, {requests} requests per level and variant "
        f"and round, {rounds} rounds (figures pooled over rounds), variants interleaved\n"
        f"- query embeddings of concurrent Synopsis searches shared: at most "
        f"{settings.models.query_embedding_batch_size} per call "
        "(SYNOPSIS_QUERY_EMBEDDING_BATCH_SIZE; "
        f"1: one call per search){batching}\n"
        f"- Weaviate {weaviate_version} (local stack), weaviate-client "
        f"{metadata.version('weaviate-client')}, embeddings {settings.models.embedding_model} "
        f"via Ollama {settings.stack.ollama_version}; Python {platform.python_version()}"
    )
    sharing = settings.models.query_embedding_batch_size
    title = "Query path: Synopsis against the raw Weaviate floor" + (
        "" if sharing > 1 else ", one embedding call per search"
    )
    return (
        f"## {title}\n\n"
        f"```sh\n{command}\n```\n\n{facts}\n\n{table}\n\n"
        "Ratios of p50 latencies (goal: Synopsis p50 ≤ 1.15 × the floor's p50 for the same "
        "mode; the main figure is the default mode, *joint*, cold):\n\n"
        f"{ratio_table}\n\n"
        "Throughput of the default search with its query embedded (*cold*) against the same "
        "requests with the query's vector cached (*warm*) or given to the raw query (goal of "
        "the throughput issue: cold ≥ 0.8 × the vector given, at 32 callers):\n\n"
        f"{throughput_table}\n\n"
        "Where Synopsis's time goes besides the hybrid query, per search:\n\n"
        f"{overhead_table}\n\n"
        "How to read it:\n\n"
        "- *cold*: every request computes its query embedding (Synopsis with an Embedder\n"
        "  whose LRU holds nothing). The floor sends one embedding call per request; Synopsis\n"
        "  sends a lone query at once and the queries that arrive while a call runs together\n"
        "  in the next call (`service.models.batch`).\n"
        "- *warm*: Synopsis caches query embeddings (an LRU of 1,024 texts in\n"
        "  `service.models.embed.Embedder`, safe because a text always has the same vector for\n"
        "  one model); a repeated query skips the model call. Its fair floor is the hybrid\n"
        "  query with the vector given.\n"
        "- The default mode, *joint*, is one hybrid query over the chunks, scored by both\n"
        "  named vectors (`content` and `summary`, weighted) and by BM25 over the chunk and\n"
        "  its attached summary, plus one `fetch_objects` on SummarizedDocuments that\n"
        "  attaches each hit's stored summary; its floor is that hybrid query alone.\n"
        "  *originals* is the same over the `content` vector, without the summary's text.\n"
        "- Synopsis's summary leg asks Weaviate for 3 × k summaries (it de-duplicates by\n"
        "  original and may apply the distance gate); vectors come back only when the gate\n"
        "  or `explain` needs distances. Whether the collections exist and match the\n"
        "  embedding model is checked once and remembered.\n"
        "- *fused* runs the originals' leg too (in a pool of 4 threads shared by all\n"
        "  callers of one Synopsis), so it is not a like-for-like comparison with the floor.\n"
    )


def synopsis_overhead(synopsis: Synopsis, settings: Settings) -> dict[str, float]:
    """Median time of the Weaviate calls behind one search, each alone (vector given)."""
    store = synopsis.store
    vector = synopsis.embedder.embed_query(QUERIES[0])
    hits = synopsis.search(request(settings, QUERIES[0], "joint"))
    ids = [hit.id for hit in hits]
    summary_floor = Floor(synopsis, settings, over="summaries")
    chunk_floor = Floor(synopsis, settings, over="originals")
    joint_floor = Floor(synopsis, settings, over="joint")

    calls: dict[str, Callable[[], object]] = {
        "store.exists() (cached after the first call)": store.exists,
        "store.check_embedding() (cached)": lambda: store.check_embedding(
            embedding_model=synopsis.embedder.model
        ),
        "embedding, LRU hit": lambda: synopsis.embedder.embed_query(QUERIES[0]),
        f"joint mode: hybrid over the chunks, summary vector, limit {K}": functools.partial(
            joint_floor.hybrid, QUERIES[0], vector
        ),
        f"originals mode: hybrid over the chunks, content vector, limit {K}": functools.partial(
            chunk_floor.hybrid, QUERIES[0], vector
        ),
        f"joint/originals mode: summaries of the {K} hits (store.summaries_of)": (
            functools.partial(store.summaries_of, ids)
        ),
        f"summaries mode: hybrid + refs, limit {3 * K}": functools.partial(
            summary_floor.hybrid, QUERIES[0], vector, 3 * K
        ),
    }
    # The embedding model alone, on texts it has not seen (the query cache is not in the
    # way): one text per call, and 32 per call (what a shared call carries at 32 callers).
    raw = ollama_embeddings(settings)
    fresh = iter(range(1_000_000))

    def new_texts(count: int) -> list[str]:
        return [f"{QUERIES[i % len(QUERIES)]} {next(fresh)}" for i in range(count)]

    calls["embedding call, 1 new text"] = lambda: raw.embed_documents(new_texts(1))
    calls["embedding call, 32 new texts"] = lambda: raw.embed_documents(new_texts(32))
    medians: dict[str, float] = {}
    for name, call in calls.items():
        times = []
        for _ in range(100):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        medians[name] = statistics.median(times) * 1000
    return medians


def bench_references(settings: Settings, *, reps: int, limits: Sequence[int], command: str) -> str:
    synopsis = Synopsis.open(settings)
    try:
        summaries = synopsis.store.summaries
        originals = synopsis.store.originals
        vectors = {query: synopsis.embedder.embed_query(query) for query in QUERIES}

        def hybrid(query: str, limit: int, references: bool) -> Any:
            return summaries.query.hybrid(
                query,
                vector=vectors[query],
                alpha=0.5,
                fusion_type=HybridFusion.RELATIVE_SCORE,
                query_properties=["summary", "headers", "identifiers"],
                limit=limit,
                return_properties=["summary", "original_id"],
                return_metadata=MetadataQuery(score=True),
                return_references=(
                    QueryReference(
                        link_on="originalDocument", return_properties=ORIGINAL_PROPERTIES
                    )
                    if references
                    else None
                ),
            )

        def cross_reference(query: str, limit: int) -> list[str]:
            result = hybrid(query, limit, True)
            return [
                str(obj.references["originalDocument"].objects[0].uuid)
                for obj in result.objects
                if obj.references and obj.references["originalDocument"].objects
            ]

        def by_id(query: str, limit: int) -> list[str]:
            result = hybrid(query, limit, False)
            ids = [str(obj.properties["original_id"]) for obj in result.objects]
            fetched = originals.query.fetch_objects(
                filters=Filter.by_id().contains_any(ids),
                limit=len(ids),
                return_properties=ORIGINAL_PROPERTIES,
            )
            found = {str(obj.uuid): obj for obj in fetched.objects}
            return [object_id for object_id in ids if object_id in found]

        def hybrid_only(query: str, limit: int) -> list[str]:
            result = hybrid(query, limit, False)
            return [str(obj.properties["original_id"]) for obj in result.objects]

        methods: dict[str, Callable[[str, int], list[str]]] = {
            "hybrid only (no originals)": hybrid_only,
            "cross-reference (return_references)": cross_reference,
            "by id (hybrid, then fetch_objects)": by_id,
        }
        for query in QUERIES:  # both ways must return the same originals, in order
            for limit in limits:
                if cross_reference(query, limit) != by_id(query, limit):
                    raise SystemExit(f"cross-reference and by-id disagree for {query!r}")
        times: dict[tuple[str, int, int], list[float]] = {}
        walls: dict[tuple[str, int, int], float] = {}
        load_before = load_text()
        for callers in (1, 8):
            for limit in limits:
                for name in methods:
                    key = (name, limit, callers)
                    times[key], walls[key] = [], 0.0
                # interleave methods in small blocks so drift in load hits all alike
                for block in range(0, reps, 20):
                    for name, method in methods.items():
                        latencies, wall = run_level(
                            functools.partial(_call_with_limit, method, limit),
                            QUERIES[block % len(QUERIES) :] + QUERIES,
                            callers=callers,
                            requests=min(20, reps - block),
                        )
                        times[(name, limit, callers)].extend(latencies)
                        walls[(name, limit, callers)] += wall
                for name in methods:
                    median = statistics.median(times[(name, limit, callers)]) * 1000
                    print(f"callers {callers} limit {limit:2} {name:38} p50 {median:6.2f} ms")
        load_after = load_text()
    finally:
        synopsis.close()

    def pct(values: list[float], p: int) -> float:
        return statistics.quantiles(values, n=100, method="inclusive")[p - 1] * 1000

    rows = []
    for callers in (1, 8):
        for limit in limits:
            base = statistics.median(times[("hybrid only (no originals)", limit, callers)])
            for name in methods:
                values = times[(name, limit, callers)]
                extra = (statistics.median(values) - base) * 1000
                rows.append(
                    f"| {callers} | {limit} | {name} | {pct(values, 50):.2f} | "
                    f"{pct(values, 95):.2f} | {extra:+.2f} | "
                    f"{len(values) / walls[(name, limit, callers)]:.0f} |"
                )
    table = (
        "| callers | limit | method | p50 ms | p95 ms | p50 minus hybrid only | req/s |\n"
        "|---:|---:|---|---:|---:|---:|---:|\n" + "\n".join(rows)
    )
    facts = (
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC; machine: {os.cpu_count()} "
        f"logical cores, load average {load_before} before, {load_after} after\n"
        f"- corpus: the `{settings.external.collection_prefix or '(default)'}` collections\n"
        f"- {reps} requests per method, limit and caller count, methods interleaved in blocks "
        f"of 20; query vectors computed beforehand (only Weaviate is timed); both methods "
        "were checked to return the same originals in the same order for every query"
    )
    return (
        "## Reference resolution: cross-reference against fetching originals by id\n\n"
        f"```sh\n{command}\n```\n\n"
        "(the same command as the query path; `--skip-query` runs this part alone)\n\n"
        f"{facts}\n\n{table}\n\n"
        "*limit* is the number of summaries the hybrid query returns. The summary leg asks\n"
        f"for 3 × k, so k = 5 and k = 20 correspond to limits {3 * 5} and {3 * 20}; limits 5\n"
        "and 20 are what a caller asking for exactly k objects would fetch. Synopsis's\n"
        "summary leg fetches its originals by id (measured faster on the tutorial index);\n"
        "the `originalDocument` cross-reference stays in the schema.\n"
    )


def _call_with_limit(method: Callable[[str, int], list[str]], limit: int, query: str) -> object:
    return method(query, limit)


def request(settings: Settings, query: str, mode: str) -> SearchRequest:
    """The request `synopsis search QUERY --k 5 --mode MODE` makes (the settings' defaults)."""
    return search_request(settings, query, k=K, mode=mode)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200, help="requests per level")
    parser.add_argument("--rounds", type=int, default=2, help="rounds over all variants")
    parser.add_argument("--callers", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--ref-requests", type=int, default=200)
    parser.add_argument("--skip-query", action="store_true", help="only reference resolution")
    parser.add_argument("--skip-refs", action="store_true", help="only the query path")
    parser.add_argument("--prefix", default="", help="collection prefix of the index to query")
    parser.add_argument(
        "--section",
        default="query",
        help="the docs/benchmarks.md section to write (another keeps the default's figures)",
    )
    args = parser.parse_args()
    settings = Settings.from_env().with_overrides(collection_prefix=args.prefix)
    names = Settings.env_names()
    variables = [names["query_embedding_batch_size"], names["query_embedding_timeout"]]
    command = (
        "".join(f"{name}={os.environ[name]} " for name in variables if name in os.environ)
        + "uv run python benchmarks/bench_query.py"
        + (f" --prefix {args.prefix}" if args.prefix else "")
        + (f" --requests {args.requests}" if args.requests != 200 else "")
        + (f" --rounds {args.rounds}" if args.rounds != 2 else "")
        + (f" --callers {' '.join(map(str, args.callers))}" if args.callers != [1, 8, 32] else "")
        + (" --skip-refs" if args.skip_refs else "")
        + (f" --section {args.section}" if args.section != "query" else "")
    )
    if not args.skip_query:
        section = bench_query_path(
            settings,
            callers=args.callers,
            requests=args.requests,
            rounds=args.rounds,
            command=command,
        )
        print(section)
        write_section(REPORT, args.section, section)
    if not args.skip_refs:
        section = bench_references(
            settings, reps=args.ref_requests, limits=(5, 15, 20, 60), command=command
        )
        print(section)
        write_section(REPORT, "references", section)


if __name__ == "__main__":
    main()
