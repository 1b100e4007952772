"""Registered sources that a sync keeps the index equal to: their records (`records`),
their durable registry in Weaviate (`registry`) and the sync itself (`sync`)."""

from service.sources.records import (
    SOURCE_KINDS,
    PageState,
    RegisteredSource,
    SourceKind,
    SyncReport,
)
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
    "sync_source",
]
