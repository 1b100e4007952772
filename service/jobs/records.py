"""Jobs as plain records: what to ingest (or which registered source to sync), how far
it got, how it ended.

A job is created `queued` by the HTTP API, claimed by one worker (`running`), and ends
`done`, `failed` or `cancelled`; a running job whose worker stopped (a restart, a crash:
no heartbeat for the lease) becomes `interrupted`. `failed`, `interrupted` and
`cancelled` jobs can be retried: ingestion is idempotent per source, so a retry
converges on the same index as one clean run.

```
queued ──claim──► running ──► done | failed | cancelled
   │                 └──(worker gone)──► interrupted
   └──cancel──► cancelled          failed | interrupted | cancelled ──retry──► queued
```
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from service.ingest.report import IngestEvent

__all__ = [
    "ACTIVE_STATES",
    "JOB_STATES",
    "RETRYABLE_STATES",
    "Job",
    "JobFile",
    "JobKind",
    "JobProgress",
    "JobSpec",
    "JobState",
    "ProgressTracker",
]

JobState = Literal["queued", "running", "done", "failed", "interrupted", "cancelled"]
JOB_STATES: tuple[JobState, ...] = (
    "queued",
    "running",
    "done",
    "failed",
    "interrupted",
    "cancelled",
)
#: States that hold a place in the queue (and count against a key's job limit).
ACTIVE_STATES: tuple[JobState, ...] = ("queued", "running")
RETRYABLE_STATES: tuple[JobState, ...] = ("failed", "interrupted", "cancelled")


@dataclass(frozen=True, kw_only=True)
class JobFile:
    """A file a job ingests: kept under the data directory until the job is done."""

    path: str  # where the bytes are kept
    source: str  # the source name it is indexed under
    content_type: str
    title: str = ""  # overrides the title the loader finds
    size: int = 0


JobKind = Literal["url", "files", "sync"]


@dataclass(frozen=True, kw_only=True)
class JobSpec:
    """What a job does: ingest one URL (optionally crawled) or stored files, or sync the
    registered source `name` (`service.sources`)."""

    kind: JobKind
    url: str = ""
    crawl_depth: int = 0
    max_pages: int = 0
    files: tuple[JobFile, ...] = ()
    name: str = ""  # sync: the registered source
    version: str = ""  # url, files: the version label of every chunk (empty: none)

    def to_json(self) -> str:
        """The spec as stored with the job."""
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> JobSpec:
        """The spec stored by `to_json`."""
        raw = json.loads(text)
        return cls(
            kind=raw["kind"],
            url=raw.get("url", ""),
            crawl_depth=int(raw.get("crawl_depth", 0)),
            max_pages=int(raw.get("max_pages", 0)),
            files=tuple(JobFile(**item) for item in raw.get("files", ())),
            name=raw.get("name", ""),
            version=raw.get("version", ""),
        )

    def sources(self) -> list[str]:
        """The sources the client asked for (a crawl adds the pages it finds; a sync names
        none before it has read its source)."""
        if self.kind == "sync":
            return []
        return [self.url] if self.kind == "url" else [item.source for item in self.files]


@dataclass(kw_only=True)
class JobProgress:
    """How far a job got, per stage of the ingest pipeline."""

    stage: str = ""  # the last stage seen: split, write, summarize, source, error
    current_source: str = ""
    sources_loaded: int = 0  # documents read and split
    sources_done: int = 0  # documents complete (unchanged, or summaries attached)
    chunks: int = 0
    written: int = 0  # chunks written (phase 1)
    summarized: int = 0  # summaries written by the model in this job
    summaries_total: int = 0  # summaries the model has to write, as known so far
    seconds_per_summary: float | None = None  # mean wall time between two summaries
    last_call_seconds: float | None = None  # the last model call's wall time
    errors: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The progress as stored and shown."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> JobProgress:
        """The progress stored by `to_dict` (unknown keys ignored)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in raw.items() if key in names})


@dataclass(frozen=True, kw_only=True)
class Job:
    """One ingest job as stored."""

    id: str
    state: JobState
    owner: str  # the caller id of the key that created it ("anonymous" without keys)
    spec: JobSpec
    created_at: dt.datetime
    progress: JobProgress = field(default_factory=JobProgress)
    report: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # one line per failed source
    sources: list[str] = field(default_factory=list)  # the sources it wrote
    reason: str = ""  # why it failed, was interrupted or cancelled
    attempt: int = 1
    worker: str = ""  # the worker that claimed the current attempt
    cancel_requested: bool = False
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None
    heartbeat_at: dt.datetime | None = None


class ProgressTracker:
    """Folds the ingest pipeline's events into a `JobProgress` (and the sources seen)."""

    def __init__(self) -> None:
        self.progress = JobProgress()
        self.sources: list[str] = []
        self.errors: list[str] = []
        self._summarized: dict[str, int] = {}
        self._to_summarize: dict[str, int] = {}
        self._first_summary_at: float | None = None

    def observe(self, event: IngestEvent, *, at: float) -> None:
        """Count one event; `at` is a monotonic time in seconds."""
        progress = self.progress
        progress.stage = event.stage
        if event.source:
            progress.current_source = event.source
        if event.stage == "split":
            progress.sources_loaded += 1
            progress.chunks += event.total
            self._seen(event.source)
        elif event.stage == "write":
            progress.written += event.done
        elif event.stage == "summarize":
            previous = self._summarized.get(event.source, 0)
            if event.source not in self._to_summarize:
                self._to_summarize[event.source] = event.total
                progress.summaries_total += event.total
            progress.summarized += max(0, event.done - previous)
            progress.last_call_seconds = round(event.seconds, 2)
            self._summarized[event.source] = max(previous, event.done)
            if self._first_summary_at is None:
                self._first_summary_at = at
            elif progress.summarized > 1:
                span = at - self._first_summary_at
                progress.seconds_per_summary = round(span / (progress.summarized - 1), 2)
        elif event.stage == "source":
            progress.sources_done += 1
            self._seen(event.source)
        elif event.stage == "error":
            progress.errors += 1
            self.errors.append(event.message or event.source)

    def _seen(self, source: str) -> None:
        if source and source not in self.sources:
            self.sources.append(source)
