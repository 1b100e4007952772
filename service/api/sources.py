"""`/sources`: registered sources — documentation the index is kept equal to by syncs
(`service.sources`), as `synopsis sources add | list | sync | remove` does on the CLI.

What is indexed, page by page, is `/documents`. A source is registered with the same
checks as on the CLI (`service.sources.registration`), and more: a URL must pass the
address policy (`SYNOPSIS_FETCH_ALLOW`; checked again at every fetch of a sync), and a
directory must be under one of `SYNOPSIS_API_SOURCE_DIRECTORIES` (none by default). A
sync is a job of the job workers (`service.jobs`): `POST /sources/{name}/sync` answers
`202` with the job, followed at `/jobs/{id}` like an ingest; a source registered with an
`interval` is synced so by the job workers when it is due (`service.jobs.schedule`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, Request, Response, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody, Parameter
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED, HTTP_202_ACCEPTED

from service.api.documents import AddressPolicyDependency
from service.api.jobs import JobQueueDependency, JobView, accepted
from service.api.limits import check_crawl_limits
from service.api.openapi import KEY_REQUIRED, error_responses
from service.api.security import caller_id, require_read, require_write
from service.index.versions import VERSION_PATTERN
from service.sources import RegisteredSource, SyncReport, new_source, next_sync_at
from service.sources.registration import NAME_PATTERN
from service.synopsis import Synopsis

__all__ = [
    "RegisteredSourceController",
    "RegisteredSourceView",
    "RemovedSource",
    "SourceCreate",
    "SourceEdit",
    "SyncReportView",
]

SynopsisDependency = NamedDependency[Synopsis]


class SourceCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A source to register. `kind` `git`: a local repository (`location`), synced at `ref`
    under `subpath`, read from git rather than its working tree; never guessed. `auto`:
    a directory if `location` is a path, a
    sitemap for a URL whose path ends in `.xml`, an llms.txt index (its list items link
    the pages) for one whose path ends in `/llms.txt`, else a site crawled from the URL
    (`crawl_depth` levels of same-site links under its path, at most `max_pages` pages; 0:
    `SYNOPSIS_MAX_PAGES`)."""

    name: Annotated[str, msgspec.Meta(pattern=NAME_PATTERN)]
    location: Annotated[str, msgspec.Meta(min_length=1, max_length=2048)]
    kind: Literal["auto", "directory", "sitemap", "llms-txt", "site", "git"] = "auto"
    crawl_depth: Annotated[int, msgspec.Meta(ge=0)] = 0
    max_pages: Annotated[int, msgspec.Meta(ge=0)] = 0
    ref: Annotated[
        str,
        msgspec.Meta(
            max_length=256,
            description="A git source: the branch, tag or commit to sync (empty: HEAD).",
        ),
    ] = ""
    subpath: Annotated[
        str,
        msgspec.Meta(
            max_length=1024,
            description="A git source: the directory of the repository to sync (empty: all).",
        ),
    ] = ""
    interval: Annotated[
        str,
        msgspec.Meta(
            max_length=32,
            description="Sync it this long after its last sync ended, as a job of the job "
            "workers: 1d, 6h, 1h30m, 15m, 90s or seconds, at least a minute; empty or `off`: "
            "only when asked.",
        ),
    ] = ""
    version: Annotated[
        str,
        msgspec.Meta(
            pattern=f"^$|{VERSION_PATTERN}",
            description="The version of the docs it holds (3.12, v2): every chunk carries "
            "it, and a search with `version` reads only those. Empty: none.",
        ),
    ] = ""
    group: Annotated[
        str,
        msgspec.Meta(
            pattern=f"^$|{NAME_PATTERN}",
            description="The docs it is one version of (needs a `version`): a search "
            "without a `version` reads only the latest synced version of each group "
            "(labels compare part by part, numbers as numbers: 3.9 < 3.10). Empty: none.",
        ),
    ] = ""


class SourceEdit(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """What to change of a registered source; a field left out (or null) stays as it is,
    an empty string removes it. A new `version` or `group` relabels the pages its syncs
    indexed, in place (no embedding, no model call)."""

    interval: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=32,
                description="Sync it this long after its last sync ended (1d, 6h, 1h30m, 15m, 90s "
                "or seconds, at least a minute); empty or `off`: only when asked.",
            ),
        ]
        | None
    ) = None
    version: (
        Annotated[
            str,
            msgspec.Meta(
                pattern=f"^$|{VERSION_PATTERN}",
                description="The version label its chunks carry; empty: none (then no group).",
            ),
        ]
        | None
    ) = None
    group: (
        Annotated[
            str,
            msgspec.Meta(
                pattern=f"^$|{NAME_PATTERN}",
                description="The docs it is one version of (needs a version); empty: none.",
            ),
        ]
        | None
    ) = None


class SyncReportView(msgspec.Struct, kw_only=True):
    """What one sync did; `completed` false: something failed (`failed`), and nothing was
    removed from the index. `summary` is the line the CLI prints."""

    unchanged: int
    changed: int
    added: int
    removed: int
    requests: int
    not_modified: int
    llm_calls: int
    embedded_chunks: int
    completed: bool
    failed: list[str]
    seconds: float
    summary: str

    @classmethod
    def from_report(cls, report: SyncReport) -> SyncReportView:
        """The response form of a sync report."""
        return cls(**report.to_dict(), summary=report.summary_line())


class RegisteredSourceView(msgspec.Struct, kw_only=True):
    """A registered source: where it is, how many pages its last sync saw, when a sync
    last completed (`synced_at`, null before the first) and last ended (`attempted_at`,
    completed or not), the last sync's report, and its schedule: `interval_seconds` (0:
    synced only when asked) and `next_sync_at` (when the job workers queue its next sync;
    null without an interval)."""

    name: str
    kind: str
    location: str
    version: str | None = None  # its version label (null: none)
    group: str | None = None  # the group of versions it is one of (null: none)
    crawl_depth: int
    max_pages: int
    ref: str | None = None  # git: the ref synced (null: HEAD)
    subpath: str | None = None  # git: the directory synced (null: all of it)
    commit: str | None = None  # git: the commit the last completed sync indexed
    interval_seconds: int
    pages: int
    created_at: dt.datetime
    synced_at: dt.datetime | None = None
    attempted_at: dt.datetime | None = None
    next_sync_at: dt.datetime | None = None
    last_report: SyncReportView | None = None

    @classmethod
    def from_source(cls, source: RegisteredSource) -> RegisteredSourceView:
        """The response form of a registered source."""
        report = source.last_report
        return cls(
            name=source.name,
            kind=source.kind,
            location=source.location,
            version=source.version or None,
            group=source.group or None,
            crawl_depth=source.crawl_depth,
            max_pages=source.max_pages,
            ref=source.ref or None,
            subpath=source.subpath or None,
            commit=source.commit or None,
            interval_seconds=source.interval_seconds,
            pages=len(source.pages),
            created_at=source.created_at,
            synced_at=source.synced_at,
            attempted_at=source.attempted_at,
            next_sync_at=next_sync_at(source),
            last_report=None if report is None else SyncReportView.from_report(report),
        )


class RemovedSource(msgspec.Struct, kw_only=True):
    """What `DELETE /sources/{name}` did: the registration is gone, and so are
    `pages_removed` of its pages (none when `documents_kept`)."""

    name: str
    pages_removed: int
    documents_kept: bool


class RegisteredSourceController(Controller):
    """Registered sources: list (read key), register, edit, remove, sync (write key)."""

    path = "/sources"
    security = KEY_REQUIRED
    tags = ("sources",)

    @get(
        operation_id="listSources",
        summary="Registered sources with their last sync",
        guards=[require_read],
        responses=error_responses(401, 503),
    )
    async def list_sources(self, synopsis: SynopsisDependency) -> list[RegisteredSourceView]:
        """Every registered source, by name, with its last sync's report."""
        registered = await asyncio.to_thread(synopsis.registered_sources.list)
        return [RegisteredSourceView.from_source(source) for source in registered]

    @post(
        operation_id="registerSource",
        summary="Register a source (nothing is fetched until it is synced)",
        status_code=HTTP_201_CREATED,
        guards=[require_write],
        responses=error_responses(400, 401, 403, 409, 413, 415, 503),
    )
    async def register(
        self,
        data: JSONBody[SourceCreate],
        request: Request[Any, Any, Any],
        synopsis: SynopsisDependency,
        address_policy: AddressPolicyDependency,
    ) -> Response[RegisteredSourceView]:
        """201 with the source and `Location: /sources/{name}`; 409 when the name is taken,
        400 naming the field when the location is not allowed (an address the policy
        refuses, a directory outside `SYNOPSIS_API_SOURCE_DIRECTORIES`, a path that is no
        directory) or a limit is exceeded. Sync it with `POST /sources/{name}/sync`."""
        settings = synopsis.settings
        check_crawl_limits(data.crawl_depth, data.max_pages, settings)
        source = await asyncio.to_thread(
            new_source,
            data.name,
            data.location,
            kind=data.kind,
            crawl_depth=data.crawl_depth,
            max_pages=data.max_pages,
            interval=data.interval,
            version=data.version,
            group=data.group,
            ref=data.ref,
            subpath=data.subpath,
            directories=settings.api_limits.source_directory_paths,
        )
        if source.kind not in ("directory", "git"):
            await asyncio.to_thread(address_policy.check, source.location)  # UnsafeUrlError
        await asyncio.to_thread(synopsis.registered_sources.add, source)
        return Response(
            RegisteredSourceView.from_source(source),
            status_code=HTTP_201_CREATED,
            headers={"Location": f"/sources/{source.name}"},
        )

    @get(
        "/{name:str}",
        operation_id="getSource",
        summary="One registered source with its last sync",
        guards=[require_read],
        responses=error_responses(401, 404, 503),
    )
    async def get_source(
        self, synopsis: SynopsisDependency, name: FromPath[str]
    ) -> RegisteredSourceView:
        """The source; 404 when none is registered under `name`."""
        source = await asyncio.to_thread(synopsis.registered_sources.require, name)
        return RegisteredSourceView.from_source(source)

    @patch(
        "/{name:str}",
        operation_id="editSource",
        summary="Change a registered source's interval, version or group",
        guards=[require_write],
        responses=error_responses(400, 401, 403, 404, 409, 413, 415, 503),
    )
    async def edit(
        self,
        data: JSONBody[SourceEdit],
        request: Request[Any, Any, Any],
        synopsis: SynopsisDependency,
        name: FromPath[str],
    ) -> RegisteredSourceView:
        """As `synopsis sources edit`: the source as it is now; 400 naming the field at
        fault (a group without a version, an interval under a minute), 404 when none is
        registered under `name`, 409 while it syncs."""
        source = await asyncio.to_thread(
            synopsis.edit_registered,
            name,
            interval=data.interval,
            version=data.version,
            group=data.group,
        )
        return RegisteredSourceView.from_source(source)

    @delete(
        "/{name:str}",
        operation_id="removeSource",
        summary="Forget a registered source and remove its pages from the index",
        status_code=HTTP_200_OK,
        guards=[require_write],
        responses=error_responses(400, 401, 403, 404, 409, 503),
    )
    async def remove(
        self,
        synopsis: SynopsisDependency,
        name: FromPath[str],
        keep_documents: Annotated[
            bool,
            Parameter(description="Keep its pages in the index (only forget the registration)."),
        ] = False,
    ) -> RemovedSource:
        """As `synopsis sources remove`: the pages its syncs indexed are removed too unless
        `keep_documents`; 404 when none is registered under `name`, 409 while it syncs."""
        removed = await asyncio.to_thread(
            synopsis.remove_registered, name, keep_documents=keep_documents
        )
        return RemovedSource(name=name, pages_removed=removed, documents_kept=keep_documents)

    @post(
        "/{name:str}/sync",
        operation_id="syncSource",
        summary="Sync a registered source, as a job",
        status_code=HTTP_202_ACCEPTED,
        guards=[require_write],
        responses=error_responses(400, 401, 403, 404, 409, 429, 503),
    )
    async def sync(
        self,
        request: Request[Any, Any, Any],
        synopsis: SynopsisDependency,
        job_queue: JobQueueDependency,
        name: FromPath[str],
    ) -> Response[JobView]:
        """202 with the queued job and `Location: /jobs/{id}`: follow it there (its `report`
        is the sync's, as `GET /sources` shows it afterwards). 404 when none is registered
        under `name`; 409 while a sync job of it is queued or running."""
        await asyncio.to_thread(synopsis.registered_sources.require, name)
        job = await asyncio.to_thread(job_queue.submit_sync, caller_id(request), name)
        return accepted(job)
