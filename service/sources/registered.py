"""What is done to a registered source as a whole: sync it, edit it, remove it.

Each runs under the source's sync hold (`sync_hold`, a lease as an ingest holds a source,
`service.ingest.locks`), so that no two processes sync one registered source at once and
an edit or a removal never runs beside a sync: while one of them holds it, the others are
refused with `SourceBusyError`. `SourceNotFoundError` when no source is registered under
the name. What they work on is a `RegisteredIndex` (the facade, `service.synopsis`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from loaders import LoadOptions
from service.ingest.load_options import load_options
from service.ingest.locks import holding
from service.ingest.report import IngestEvent
from service.settings import Settings
from service.sources.records import RegisteredSource
from service.sources.registration import edited
from service.sources.registry import SourceRegistry
from service.sources.sync import SyncIndex, sync_source

if TYPE_CHECKING:
    from service.index.store import Store

__all__ = [
    "RegisteredIndex",
    "edit_registered",
    "remove_registered",
    "sync_hold",
    "sync_registered",
]


class RegisteredIndex(SyncIndex, Protocol):
    """What these operations work on (a `Synopsis`): the index a sync writes to, its
    store (whose leases hold a source), the registry and the settings."""

    settings: Settings
    store: Store

    @property
    def registered_sources(self) -> SourceRegistry: ...


def sync_hold(name: str) -> str:
    """What a sync of the registered source `name` holds (`SourceLocks`), so that one runs
    at a time and a removal waits for none."""
    return f"registered source\n{name}"


def sync_registered(
    index: RegisteredIndex,
    name: str,
    *,
    options: LoadOptions | None = None,
    on_event: Callable[[IngestEvent], None] | None = None,
) -> RegisteredSource:
    """Sync the source registered as `name` (`service.sources.sync`; default options: the
    settings') and store what it saw; returns it with its report."""
    registry = index.registered_sources
    registry.require(name)
    hold = sync_hold(name)
    busy = f"{name} is being synced by another process"
    with holding(index.store.leases, hold, seconds=_seconds(index), busy=busy) as locks:
        source = registry.require(name)  # as the last sync left it
        options = options or load_options(index.settings)
        synced = sync_source(index, source, options=options, on_event=on_event)
        locks.confirm(hold)  # still ours: no other sync stored its states meanwhile
        registry.save(synced)
    return synced


def edit_registered(
    index: RegisteredIndex,
    name: str,
    *,
    interval: str | None = None,
    version: str | None = None,
    group: str | None = None,
) -> RegisteredSource:
    """Change the sync interval, version label or group of the source registered as
    `name` (`service.sources.registration.edited`) and return it. A new version or group
    relabels the pages its syncs indexed, in place; the registration is stored first,
    marked `relabel_pending`, so a relabel stopped part-way is finished by its next sync."""
    registry = index.registered_sources
    edited(registry.require(name), interval=interval, version=version, group=group)
    hold = sync_hold(name)
    busy = f"{name} is being synced; edit it once that is done"
    with holding(index.store.leases, hold, seconds=_seconds(index), busy=busy) as locks:
        source = edited(registry.require(name), interval=interval, version=version, group=group)
        registry.save(source)
        if source.relabel_pending:
            for page in sorted(source.pages):
                index.relabel_source(page, version=source.version, group=source.group)
            locks.confirm(hold)
            source = dataclasses.replace(source, relabel_pending=False)
            registry.save(source)
    return source


def remove_registered(index: RegisteredIndex, name: str, *, keep_documents: bool = False) -> int:
    """Forget the source registered as `name` and, unless `keep_documents`, remove the
    pages its syncs indexed; returns how many pages were removed from the index."""
    registry = index.registered_sources
    registry.require(name)
    busy = f"{name} is being synced; remove it once that is done"
    with holding(index.store.leases, sync_hold(name), seconds=_seconds(index), busy=busy):
        source = registry.require(name)
        removed = 0
        if not keep_documents:
            for page in sorted(source.pages):
                originals, _ = index.delete_source(page)
                removed += originals > 0
        registry.remove(name)
    return removed


def _seconds(index: RegisteredIndex) -> float:
    """How long a hold's lease lasts unless renewed (an ingest's)."""
    return index.settings.ingest.lock_seconds
