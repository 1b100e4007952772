"""Registered sources as plain records: where the documentation lives, what the last
sync saw of each of its pages, and what that sync did.

A registered source is one of:

- `directory`: a local directory (its files, as `synopsis ingest DIR` loads them);
- `sitemap`: a site's `sitemap.xml` (its `<url>` entries are the pages);
- `site`: a start URL crawled `crawl_depth` levels deep, at most `max_pages` pages.

It may carry a `version` label and belong to a `group`: the documentation it is one
version of (`service.index.versions`). Two versions of the same docs are two registered
sources of one group, each with its own location and label.

Its `pages` map each indexed document (its `source`: an absolute path or a canonical
URL) to what the last sync knew of it: the validators the server sent (ETag,
Last-Modified), the sitemap's `lastmod`, a content hash, a file's size and mtime.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["SOURCE_KINDS", "PageState", "RegisteredSource", "SourceKind", "SyncReport"]

SourceKind = Literal["directory", "sitemap", "site"]
SOURCE_KINDS: tuple[SourceKind, ...] = ("directory", "sitemap", "site")


@dataclass(frozen=True, kw_only=True)
class PageState:
    """What the last sync knew of one page or file."""

    hash: str = ""  # sitemap pages: sha256 of the bytes; others: of the Markdown
    etag: str = ""
    last_modified: str = ""
    lastmod: str = ""  # the sitemap's
    size: int = -1  # files
    mtime_ns: int = -1  # files

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v not in ("", -1)}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> PageState:
        return cls(**raw)


@dataclass(kw_only=True)
class SyncReport:
    """What one sync did. `completed` is False when anything failed: such a sync removed
    nothing from the index."""

    unchanged: int = 0
    changed: int = 0
    added: int = 0
    removed: int = 0
    requests: int = 0  # HTTP requests sent (sitemap and robots.txt included)
    not_modified: int = 0  # of which answered 304
    llm_calls: int = 0
    embedded_chunks: int = 0  # new chunks embedded and written
    completed: bool = True
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary_line(self) -> str:
        """One line for the CLI."""
        line = (
            f"{self.unchanged} unchanged, {self.changed} changed, {self.added} added, "
            f"{self.removed} removed pages; {self.requests} requests ({self.not_modified} "
            f"answered 304); {self.llm_calls} LLM calls, {self.embedded_chunks} chunks "
            f"embedded; {self.seconds:.1f} s"
        )
        if not self.completed:
            line += f"; INCOMPLETE ({len(self.failed)} failures): nothing was removed"
        return line

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> SyncReport:
        return cls(**raw)


@dataclass(frozen=True, kw_only=True)
class RegisteredSource:
    """A source that a sync keeps the index equal to (`synopsis sources sync`, or a job of
    the job workers every `interval_seconds`: `service.sources.schedule`)."""

    name: str
    kind: SourceKind
    location: str  # the directory's absolute path, the sitemap's or start page's URL
    crawl_depth: int = 0  # site
    max_pages: int = 0  # site; 0: the settings' default
    created_at: dt.datetime
    interval_seconds: int = 0  # synced by the job workers this long after its last sync
    # The version label its chunks carry, and the group of versions it is one of
    # (`service.index.versions`: a search without a version reads each group's latest).
    version: str = ""
    group: str = ""
    synced_at: dt.datetime | None = None  # the end of the last completed sync
    attempted_at: dt.datetime | None = None  # the end of the last sync, completed or not
    last_report: SyncReport | None = None
    pages: dict[str, PageState] = field(default_factory=dict)

    def pages_json(self) -> str:
        return json.dumps({page: state.to_dict() for page, state in sorted(self.pages.items())})

    @staticmethod
    def pages_from_json(text: str) -> dict[str, PageState]:
        return {page: PageState.from_dict(raw) for page, raw in json.loads(text or "{}").items()}
