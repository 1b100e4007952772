"""Registered sources that a sync keeps the index equal to: their records (`records`),
what may be registered (`registration`), their durable registry in Weaviate
(`registry`), the sync itself (`sync`; what it reads of each kind: `scan` for a
directory, `web` for a site, a sitemap or an llms.txt, `repository` for a git
repository), a sync, an edit or a removal under the source's hold (`registered`) and
when a scheduled one is due (`schedule`)."""

from service.sources.records import (
    SOURCE_KINDS,
    PageState,
    RegisteredSource,
    SourceKind,
    SyncReport,
)
from service.sources.registration import check_name, edited, new_source
from service.sources.registry import SourceRegistry
from service.sources.schedule import (
    due_slot,
    format_interval,
    next_sync_at,
    parse_interval,
    sync_job_id,
)
from service.sources.sync import SyncIndex, sync_source

__all__ = [
    "SOURCE_KINDS",
    "PageState",
    "RegisteredSource",
    "SourceKind",
    "SourceRegistry",
    "SyncIndex",
    "SyncReport",
    "check_name",
    "due_slot",
    "edited",
    "format_interval",
    "new_source",
    "next_sync_at",
    "parse_interval",
    "sync_job_id",
    "sync_source",
]
