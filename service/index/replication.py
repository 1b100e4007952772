"""Replication of Synopsis's collections, and the consistency of their reads and writes.

With `Settings.external.replication_factor` 1 (the default) nothing changes: collections are
created without a replication config and requests carry no consistency level, exactly
as on a single Weaviate node. With a factor above 1:

- every collection is created with `Configure.replication(factor=…)` and
  `TimeBasedResolution` for deletions (the newest of a write and a delete wins when the
  copies disagree: a chunk id can come back after its chunk was deleted, since ids are
  derived from content);
- reads go out at `read_consistency`, writes at `write_consistency` (ONE, QUORUM, ALL).

Async replication (Weaviate's background repair of copies that missed writes while their
node was down) is not a setting here: Weaviate >= 1.38 runs it for every collection with a
factor above 1 and the client's `async_enabled` is deprecated and ignored.

Any store of Synopsis's data uses the same two calls, e.g.:

    client.collections.create(name, ..., replication_config=replication_config(settings))
    jobs = consistent(client.collections.use(name), settings, write=True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import weaviate
from weaviate.classes.config import Configure, ConsistencyLevel, ReplicationDeletionStrategy
from weaviate.collections import Collection
from weaviate.collections.classes.config import ReplicationConfigCreate

from service.errors import ConfigurationError
from service.settings import CONSISTENCY_LEVELS, Settings

__all__ = [
    "SETTLE_SECONDS",
    "ReplicatedCollections",
    "Replication",
    "consistent",
    "replication_config",
]

#: How long after writing a lease, a slot or a claim its taker reads it back by default
#: (`Settings.external.lease_settle_seconds`; `service.index.leases`).
SETTLE_SECONDS = 0.3


@dataclass(frozen=True, kw_only=True)
class Replication:
    """How many copies a collection keeps, how many of them a read or a write waits for,
    and how long after writing a lease, a slot or a claim its taker reads it back."""

    factor: int = 1
    read_consistency: str = "QUORUM"
    write_consistency: str = "QUORUM"
    settle_seconds: float = SETTLE_SECONDS

    def __post_init__(self) -> None:
        if self.factor < 1:
            raise ConfigurationError(f"replication factor {self.factor} is below 1")
        if self.settle_seconds < 0:
            raise ConfigurationError(f"settle time {self.settle_seconds} is below 0")
        for level in (self.read_consistency, self.write_consistency):
            if level not in CONSISTENCY_LEVELS:
                raise ConfigurationError(
                    f"consistency level {level!r} is not one of {', '.join(CONSISTENCY_LEVELS)}"
                )

    @classmethod
    def from_settings(cls, settings: Settings) -> Replication:
        return cls(
            factor=settings.external.replication_factor,
            read_consistency=settings.external.read_consistency,
            write_consistency=settings.external.write_consistency,
            settle_seconds=settings.external.lease_settle_seconds,
        )

    @property
    def enabled(self) -> bool:
        """True when objects have more than one copy (and consistency levels apply)."""
        return self.factor > 1

    def config(self) -> ReplicationConfigCreate | None:
        """The `replication_config` of a new collection (None: Weaviate's single copy)."""
        if not self.enabled:
            return None
        return Configure.replication(
            factor=self.factor,
            deletion_strategy=ReplicationDeletionStrategy.TIME_BASED_RESOLUTION,
        )

    def for_reads(self, collection: Collection[Any, Any]) -> Collection[Any, Any]:
        """`collection`, its queries at the read consistency level (unchanged at factor 1)."""
        return self._at(collection, self.read_consistency)

    def for_writes(self, collection: Collection[Any, Any]) -> Collection[Any, Any]:
        """`collection`, its writes at the write consistency level (unchanged at factor 1)."""
        return self._at(collection, self.write_consistency)

    def _at(self, collection: Collection[Any, Any], level: str) -> Collection[Any, Any]:
        if not self.enabled:
            return collection
        return collection.with_consistency_level(ConsistencyLevel(level))


class ReplicatedCollections:
    """What every store of Synopsis's data holds: one Weaviate client, the prefix of its
    collections' names, and the replication under which it reads (`_readable`) and
    writes (`_writable`) them."""

    def __init__(
        self,
        client: weaviate.WeaviateClient,
        *,
        prefix: str = "",
        replication: Replication | None = None,
    ) -> None:
        self.client = client
        self.prefix = prefix
        # Copies per object and consistency levels; the default: one copy, no levels.
        self.replication = replication or Replication()

    def _readable(self, name: str) -> Collection[Any, Any]:
        return self.replication.for_reads(self.client.collections.use(name))

    def _writable(self, name: str) -> Collection[Any, Any]:
        return self.replication.for_writes(self.client.collections.use(name))


def replication_config(settings: Settings) -> ReplicationConfigCreate | None:
    """The `replication_config` for a collection created under these settings."""
    return Replication.from_settings(settings).config()


def consistent(
    collection: Collection[Any, Any], settings: Settings, *, write: bool = False
) -> Collection[Any, Any]:
    """`collection` at the settings' read (or, with `write`, write) consistency level."""
    replication = Replication.from_settings(settings)
    return replication.for_writes(collection) if write else replication.for_reads(collection)
