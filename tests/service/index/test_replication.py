"""Replication settings → collection configs and consistency levels, and where the Store
applies them (a recording stand-in for the client: no Weaviate needed)."""

from __future__ import annotations

import uuid
from typing import Any, cast

import pytest
from weaviate.classes.config import ConsistencyLevel, ReplicationDeletionStrategy

from service.errors import ConfigurationError
from service.index.leases import LEASE_SETTLE_SECONDS
from service.index.records import ChunkPlace, SourceRecord, now
from service.index.replication import Replication, consistent, replication_config
from service.index.slots import Slots
from service.index.store import Store
from service.ingest.locks import SourceLocks
from service.jobs.store import CLAIM_SETTLE_SECONDS, JobStore
from service.settings import Settings


class _Data:
    def __init__(self, log: list[tuple[str, str, str | None]], name: str, level: str | None):
        self._log, self._name, self._level = log, name, level

    def __getattr__(self, method: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self._log.append((f"data.{method}", self._name, self._level))
            return False  # `exists`: the record is new

        return call


class _Query:
    """Answers the readiness query a newly created collection is probed with."""

    def fetch_objects(self, **kwargs: Any) -> None:
        return None


class _Collection:
    """Records which consistency level each data call went out at."""

    def __init__(
        self, log: list[tuple[str, str, str | None]], name: str, level: str | None = None
    ) -> None:
        self._log, self.name, self.level = log, name, level
        self.data = _Data(log, name, level)
        self.query = _Query()

    def with_consistency_level(self, level: ConsistencyLevel) -> _Collection:
        return _Collection(self._log, self.name, level.value)


class _Collections:
    def __init__(self) -> None:
        self.log: list[tuple[str, str, str | None]] = []
        self.created: dict[str, dict[str, Any]] = {}

    def use(self, name: str) -> _Collection:
        return _Collection(self.log, name)

    def exists(self, name: str) -> bool:
        return name in self.created

    def create(self, name: str, **kwargs: Any) -> None:
        self.created[name] = kwargs


class _Client:
    def __init__(self) -> None:
        self.collections = _Collections()


def _store(replication: Replication | None) -> tuple[Store, _Client]:
    client = _Client()
    return Store(cast(Any, client), prefix="T", replication=replication), client


def test_factor_one_is_weaviate_default() -> None:
    replication = Replication()
    assert (replication.enabled, replication.config()) == (False, None)
    collection = _Collection([], "X")
    assert replication.for_reads(cast(Any, collection)) is collection
    assert replication.for_writes(cast(Any, collection)) is collection


def test_factor_three_config() -> None:
    config = Replication(factor=3).config()
    assert config is not None
    assert (config.factor, config.deletionStrategy, config.asyncEnabled) == (
        3,
        ReplicationDeletionStrategy.TIME_BASED_RESOLUTION,
        None,  # deprecated in the client; Weaviate >= 1.38 decides (always on above 1)
    )


@pytest.mark.parametrize(
    ("read", "write", "read_level", "write_level"),
    [("ONE", "QUORUM", "ONE", "QUORUM"), ("QUORUM", "ALL", "QUORUM", "ALL")],
)
def test_levels_from_settings(read: str, write: str, read_level: str, write_level: str) -> None:
    settings = Settings().with_overrides(
        weaviate_nodes=3, replication_factor=3, read_consistency=read, write_consistency=write
    )
    collection = cast(Any, _Collection([], "Jobs"))
    assert consistent(collection, settings).level == read_level
    assert consistent(collection, settings, write=True).level == write_level
    config = replication_config(settings)
    assert config is not None
    assert config.factor == 3


def test_helpers_leave_factor_one_alone() -> None:
    collection = cast(Any, _Collection([], "Jobs"))
    assert consistent(collection, Settings(), write=True) is collection
    assert replication_config(Settings()) is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"factor": 0}, "replication factor 0 is below 1"),
        ({"read_consistency": "one"}, "consistency level 'one' is not one of ONE, QUORUM, ALL"),
        ({"settle_seconds": -0.1}, "settle time -0.1 is below 0"),
    ],
)
def test_invalid_replication(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Replication(**kwargs)
    assert str(caught.value) == message


@pytest.mark.parametrize(("replication", "factor"), [(None, None), (Replication(factor=3), 3)])
def test_store_creates_every_collection_with_the_replication(
    replication: Replication | None, factor: int | None
) -> None:
    store, client = _store(replication)
    store.ensure_schema(embedding_model="m", dimension=4)
    created = client.collections.created
    assert sorted(created) == ["TIngestedSources", "TOriginalDocuments", "TSummarizedDocuments"]
    for kwargs in created.values():
        config = kwargs["replication_config"]
        assert (config.factor if config else None) == factor


@pytest.mark.parametrize(
    ("replication", "read", "write"),
    [
        (None, None, None),
        (Replication(factor=3), "QUORUM", "QUORUM"),
        (Replication(factor=3, read_consistency="ONE", write_consistency="ALL"), "ONE", "ALL"),
    ],
)
def test_store_reads_and_writes_at_their_levels(
    replication: Replication | None, read: str | None, write: str | None
) -> None:
    store, client = _store(replication)
    assert (store.originals.level, store.summaries.level, store.sources.level) == (read,) * 3
    record = SourceRecord(
        source="s",
        title="t",
        content_hash="h",
        status="complete",
        chunks=0,
        pending=0,
        ingested_at=now(),
        settings_key="k",
    )
    store.put_source_record(record)
    store.update_unchanged({uuid.UUID(int=1): ChunkPlace(0)})
    assert client.collections.log == [
        ("data.exists", "TIngestedSources", write),
        ("data.insert", "TIngestedSources", write),
        ("data.update", "TOriginalDocuments", write),
    ]


def test_the_settle_time_is_0_3_s_by_default_and_read_from_the_settings() -> None:
    """A taker reads its lease, slot or claim back 0.3 s after writing it unless
    `SYNOPSIS_LEASE_SETTLE_SECONDS` says otherwise (tests shorten it where one process
    takes every lease, e.g. the fuzz run)."""
    assert Settings().external.lease_settle_seconds == 0.3
    assert Replication().settle_seconds == LEASE_SETTLE_SECONDS == CLAIM_SETTLE_SECONDS == 0.3
    default, _ = _store(Replication.from_settings(Settings()))
    assert (default.leases.settle, Slots(default.leases, kind="jobs", limit=1).settle) == (0.3, 0.3)
    assert SourceLocks(default.leases).settle == 0.3
    short = Replication.from_settings(Settings.from_env({"SYNOPSIS_LEASE_SETTLE_SECONDS": "0.01"}))
    store, _ = _store(short)
    jobs = JobStore(cast(Any, _Client()), prefix="T", replication=short)
    assert (store.leases.settle, jobs.leases.settle, jobs.replication.settle_seconds) == (
        0.01,
        0.01,
        0.01,
    )
    assert Slots(store.leases, kind="jobs", limit=1).settle == 0.01
    assert SourceLocks(store.leases).settle == 0.01
    assert SourceLocks(store.leases, settle=0.0).settle == 0.0


def test_a_negative_settle_time_is_refused_naming_its_variable() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Settings.from_env({"SYNOPSIS_LEASE_SETTLE_SECONDS": "-1"})
    assert str(caught.value) == "SYNOPSIS_LEASE_SETTLE_SECONDS must be at least 0"
