"""Registered sources as plain records: where the documentation lives, what the last
sync saw of each of its pages, and what that sync did.

A registered source is one of:

- `directory`: a local directory (its files, as `synopsis ingest DIR` loads them);
- `sitemap`: a site's `sitemap.xml` (its `<url>` entries are the pages);
- `llms-txt`: an `llms.txt` index (the links of its lists are the pages);
- `site`: a start URL crawled `crawl_depth` levels deep, at most `max_pages` pages.
- `git`: a local git repository, the files of `ref`'s commit under `subpath` (read from
  git, not from the working tree).

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

SourceKind = Literal["directory", "sitemap", "llms-txt", "site", "git"]
SOURCE_KINDS: tuple[SourceKind, ...] = ("directory", "sitemap", "llms-txt", "site", "git")


@dataclass(frozen=True, kw_only=True)
class PageState:
    """What the last sync knew of one page or file."""

    hash: str = ""  # web pages: sha256 of the bytes; files: of the Markdown; git: blob id
    etag: str = ""
    last_modified: str = ""
    lastmod: str = ""  # the sitemap's
    size: int = -1  # files
    mtime_ns: int = -1  # files
    # Crawled pages: the in-scope links the page had (None: not recorded, so the page is
    # requested whole), and for an HTML page the fingerprints of its text blocks and of
    # those dropped from it as repeated across the site (`loaders.boilerplate`).
    links: tuple[str, ...] | None = None
    blocks: tuple[int, ...] | None = None
    dropped: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            k: list(v) if isinstance(v, tuple) else v
            for k, v in dataclasses.asdict(self).items()
            if v not in ("", -1, None) and not (k == "dropped" and not v)
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> PageState:
        fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
        return cls(**fields)


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
    location: str  # a directory's or repository's absolute path; a sitemap's, llms.txt's or
    # start page's URL
    crawl_depth: int = 0  # site
    max_pages: int = 0  # site; 0: the settings' default
    ref: str = ""  # git: the branch, tag or commit synced (empty: HEAD)
    subpath: str = ""  # git: the directory of the repository synced (empty: all of it)
    commit: str = ""  # git: the commit the last completed sync indexed
    created_at: dt.datetime
    interval_seconds: int = 0  # synced by the job workers this long after its last sync
    # The version label its chunks carry, and the group of versions it is one of
    # (`service.index.versions`: a search without a version reads each group's latest).
    version: str = ""
    group: str = ""
    # Its version or group was edited and its indexed pages may still carry the old ones:
    # the edit relabels them, and a sync finishes what an edit stopped part-way left.
    relabel_pending: bool = False
    synced_at: dt.datetime | None = None  # the end of the last completed sync
    attempted_at: dt.datetime | None = None  # the end of the last sync, completed or not
    last_report: SyncReport | None = None
    pages: dict[str, PageState] = field(default_factory=dict)

    def pages_json(self) -> str:
        return json.dumps({page: state.to_dict() for page, state in sorted(self.pages.items())})

    @staticmethod
    def pages_from_json(text: str) -> dict[str, PageState]:
        return {page: PageState.from_dict(raw) for page, raw in json.loads(text or "{}").items()}
