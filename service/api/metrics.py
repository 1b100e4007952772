"""Prometheus metrics of the API (prometheus-client), served at `GET /metrics`.

| metric                                          | labels                          | from |
|-------------------------------------------------|---------------------------------|------|
| `synopsis_http_requests_total`                  | method, path (the route's       | A    |
| `synopsis_http_request_duration_seconds`        | template, not the raw path),    | A    |
| `synopsis_http_requests_error_total` (5xx)      | status_code, app_name           | A    |
| `synopsis_http_requests_in_progress`            | method, path, status_code, …    | A    |
| `synopsis_llm_calls_total`                      | purpose: summary, answer        | B    |
| `synopsis_summary_cache_hits_total`             |                                 | B    |
| `synopsis_embedding_calls_total`                |                                 | C    |
| `synopsis_jobs`                                 | state                           | D    |
| `synopsis_source_syncs_total`                   | source, result: completed,      | E    |
|                                                 | incomplete                      |      |
| `synopsis_source_sync_pages_total`              | source, outcome: unchanged,     | E    |
|                                                 | changed, added, removed         |      |
| `synopsis_source_sync_requests_total`           | source                          | E    |
| `synopsis_source_sync_not_modified_total` (304) | source                          | E    |

A: Litestar's `PrometheusMiddleware` (`prometheus_config`), on matched routes (the
router's own 404s and 405s are not counted). B: `record_ingest` (the job runner calls it
with each `IngestReport`) and `record_answer`; a sync's model calls count as summaries
(`record_sync`). C: the `Embedder.calls` counter of the
app's `Synopsis`, added to the Prometheus counter by `sync_embedding_calls` at every
scrape and every few seconds (`metrics_lifespan`). D: read at scrape time from
`app.state.jobs.counts_by_state()` when the app has a job queue (left out otherwise); the
jobs live in Weaviate, so every process reports the same counts. E: `record_sync`, which
the job runner calls with the report of each sync of a registered source it ran (syncs
run by `synopsis sources sync` are in its output, not here); labelled by the source's
name, so as many series as registered sources.

Processes: A, B and C are counted per process. With `synopsis serve --workers N` the
command sets `PROMETHEUS_MULTIPROC_DIR` (prometheus-client's multiprocess mode) before
the workers start, each worker writes its counts to files there, and a scrape — answered
by any one worker — adds up every worker's files (`in_progress` gauges: the live
workers' sum). Without it (one process) the default registry is served.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import weakref
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from litestar import Litestar
from litestar.datastructures import State
from litestar.plugins.prometheus import PrometheusConfig
from prometheus_client import REGISTRY, CollectorRegistry, Counter, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder

from service.api.background import running_beside

__all__ = [
    "EMBEDDING_CALLS",
    "LLM_CALLS",
    "MULTIPROC_ENV",
    "SUMMARY_CACHE_HITS",
    "SUMMARY_MODEL_SECONDS",
    "SUMMARY_TOKENS",
    "SYNCS",
    "SYNC_NOT_MODIFIED",
    "SYNC_PAGES",
    "SYNC_REQUESTS",
    "metrics_lifespan",
    "prometheus_config",
    "record_answer",
    "record_ingest",
    "record_sync",
    "render",
    "reset_multiprocess_dir",
    "sync_embedding_calls",
]

#: prometheus-client's variable for its multiprocess mode: the directory of the counts.
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

# Seconds: an answer from a CPU-bound local model takes tens of seconds.
_BUCKETS: list[str | float] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
]  # fmt: skip
_SYNC_SECONDS = 5.0

_log = logging.getLogger(__name__)

LLM_CALLS = Counter(
    "synopsis_llm_calls", "Chat model calls: summaries of ingested chunks, answers", ["purpose"]
)
SUMMARY_CACHE_HITS = Counter(
    "synopsis_summary_cache_hits", "Chunks whose summary was found stored (no LLM call)"
)
EMBEDDING_CALLS = Counter(
    "synopsis_embedding_calls", "Requests to the embedding model (cached query vectors: none)"
)
for purpose in ("summary", "answer"):  # exported as 0 before the first call
    LLM_CALLS.labels(purpose)
SUMMARY_TOKENS = Counter(
    "synopsis_summary_tokens",
    "Tokens the chat model read (prompt) and wrote (output) for summaries, as Ollama counts",
    ["kind"],
)
SUMMARY_MODEL_SECONDS = Counter(
    "synopsis_summary_model_seconds",
    "Seconds the chat model spent on summaries, as Ollama reports (load, prompt, output)",
    ["part"],
)
for kind in ("prompt", "output"):
    SUMMARY_TOKENS.labels(kind)
for part in ("load", "prompt", "output"):
    SUMMARY_MODEL_SECONDS.labels(part)
SYNCS = Counter(
    "synopsis_source_syncs",
    "Syncs of registered sources run by the job workers, completed or not (an incomplete "
    "sync removed nothing)",
    ["source", "result"],
)
SYNC_PAGES = Counter(
    "synopsis_source_sync_pages",
    "Pages seen by syncs of registered sources: unchanged, changed, added, removed",
    ["source", "outcome"],
)
SYNC_REQUESTS = Counter(
    "synopsis_source_sync_requests", "HTTP requests of syncs of registered sources", ["source"]
)
SYNC_NOT_MODIFIED = Counter(
    "synopsis_source_sync_not_modified",
    "Requests of syncs of registered sources answered 304 Not Modified",
    ["source"],
)
_PAGE_OUTCOMES = ("unchanged", "changed", "added", "removed")


class _Usage(Protocol):
    @property
    def prompt_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def load_seconds(self) -> float: ...
    @property
    def prompt_seconds(self) -> float: ...
    @property
    def output_seconds(self) -> float: ...


class _Report(Protocol):
    @property
    def llm_calls(self) -> int: ...
    @property
    def cached_summaries(self) -> int: ...
    @property
    def model(self) -> _Usage: ...


class _SyncReport(Protocol):
    @property
    def unchanged(self) -> int: ...
    @property
    def changed(self) -> int: ...
    @property
    def added(self) -> int: ...
    @property
    def removed(self) -> int: ...
    @property
    def requests(self) -> int: ...
    @property
    def not_modified(self) -> int: ...
    @property
    def llm_calls(self) -> int: ...
    @property
    def completed(self) -> bool: ...


class _Answer(Protocol):
    @property
    def llm_called(self) -> bool: ...


class _CountsByState(Protocol):
    def counts_by_state(self) -> dict[str, int]: ...


def prometheus_config() -> PrometheusConfig:
    """Litestar's request metrics, labelled by route template (bounded cardinality)."""
    return PrometheusConfig(
        app_name="synopsis", prefix="synopsis_http", group_path=True, buckets=_BUCKETS
    )


def record_ingest(report: _Report) -> None:
    """Count an ingest's LLM calls, summary cache hits and what the model reported of
    its summary calls: tokens and seconds (`IngestReport`)."""
    LLM_CALLS.labels("summary").inc(report.llm_calls)
    SUMMARY_CACHE_HITS.inc(report.cached_summaries)
    usage = report.model
    SUMMARY_TOKENS.labels("prompt").inc(usage.prompt_tokens)
    SUMMARY_TOKENS.labels("output").inc(usage.output_tokens)
    SUMMARY_MODEL_SECONDS.labels("load").inc(usage.load_seconds)
    SUMMARY_MODEL_SECONDS.labels("prompt").inc(usage.prompt_seconds)
    SUMMARY_MODEL_SECONDS.labels("output").inc(usage.output_seconds)


def record_sync(source: str, report: _SyncReport) -> None:
    """Count one sync of the registered source `source` (a `SyncReport`): its pages by
    outcome, its requests and 304s, its model calls (as summaries)."""
    SYNCS.labels(source, "completed" if report.completed else "incomplete").inc()
    for outcome in _PAGE_OUTCOMES:
        SYNC_PAGES.labels(source, outcome).inc(getattr(report, outcome))
    SYNC_REQUESTS.labels(source).inc(report.requests)
    SYNC_NOT_MODIFIED.labels(source).inc(report.not_modified)
    LLM_CALLS.labels("summary").inc(report.llm_calls)


def record_answer(answer: _Answer) -> None:
    """Count the LLM call of an answer (none when it was "I don't know" without one)."""
    if answer.llm_called:
        LLM_CALLS.labels("answer").inc()


class _CallsSeen:
    """The `calls` of each embedder already added to `EMBEDDING_CALLS`."""

    def __init__(self) -> None:
        self._seen: weakref.WeakKeyDictionary[object, int] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def sync(self, embedder: object) -> None:
        calls = getattr(embedder, "calls", None)
        if not isinstance(calls, int):
            return
        with self._lock:
            new = calls - self._seen.get(embedder, 0)
            self._seen[embedder] = calls
        if new > 0:
            EMBEDDING_CALLS.inc(new)


_seen = _CallsSeen()


def sync_embedding_calls(synopsis: object) -> None:
    """Add the embedding calls `synopsis` made since the last sync to `EMBEDDING_CALLS`."""
    embedder = getattr(synopsis, "embedder", None)
    if embedder is not None:
        _seen.sync(embedder)


class _JobsCollector:
    """`synopsis_jobs{state}`, read from the app's job queue at scrape time."""

    def __init__(self, jobs: _CountsByState) -> None:
        self._jobs = jobs

    def describe(self) -> list[Metric]:
        return []  # nothing to read at registration

    def collect(self) -> Iterator[Metric]:
        try:
            counts = self._jobs.counts_by_state()
        except Exception as exc:  # Weaviate down: the scrape still serves the rest
            _log.warning("metrics: jobs by state unavailable: %s: %s", type(exc).__name__, exc)
            return
        family = GaugeMetricFamily("synopsis_jobs", "Ingest jobs by state", labels=["state"])
        for state, count in sorted(counts.items()):
            family.add_metric([state], count)
        yield family


class _Forward:
    """A registry's metrics, as one collector of another registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterable[Metric]:
        return self._registry.collect()


def render(state: State, accept: str = "") -> tuple[bytes, str]:
    """The scrape body and its content type (Prometheus text, or OpenMetrics if accepted).

    Blocking (the job counts read Weaviate): call it in a worker thread.
    """
    synopsis = getattr(state, "synopsis", None)
    if synopsis is not None:
        sync_embedding_calls(synopsis)
    registry = CollectorRegistry()
    # prometheus-client's own switch; `synopsis serve --workers N` sets it.
    directory = os.environ.get(MULTIPROC_ENV)
    if directory:
        multiprocess.MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
    else:
        registry.register(_Forward(REGISTRY))
    jobs = getattr(state, "jobs", None)
    if jobs is not None and callable(getattr(jobs, "counts_by_state", None)):
        registry.register(_JobsCollector(jobs))
    encoder, content_type = choose_encoder(accept)
    return encoder(registry), content_type


@contextlib.asynccontextmanager
async def metrics_lifespan(app: Litestar) -> AsyncIterator[None]:
    """Sync `EMBEDDING_CALLS` every few seconds, so a worker's background embedding work
    shows up even when another worker answers the scrapes."""

    async def loop() -> None:
        while True:
            await asyncio.sleep(_SYNC_SECONDS)
            synopsis: Any = getattr(app.state, "synopsis", None)
            if synopsis is not None:
                sync_embedding_calls(synopsis)

    async with running_beside(loop()):
        yield


def reset_multiprocess_dir(directory: Path) -> Path:
    """Create `directory` for multiprocess metrics, removing a previous run's count files
    (prometheus-client requires a clean directory at start). Returns it."""
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink()
    return directory
