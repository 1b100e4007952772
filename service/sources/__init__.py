"""Registered sources that a sync keeps the index equal to: their records (`records`),
what may be registered (`registration`), their durable registry in Weaviate
(`registry`) and the sync itself (`sync`)."""

from service.sources.records import (
    SOURCE_KINDS,
    PageState,
    RegisteredSource,
    SourceKind,
    SyncReport,
)
from service.sources.registration import check_name, new_source
from service.sources.registry import SourceRegistry
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
    "new_source",
    "sync_source",
]
