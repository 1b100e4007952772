"""The registry of sources on the real Weaviate: a source registered, read back with its
page states, listed with or without them, saved over, refused twice, and removed."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from service.connections import connect_weaviate
from service.errors import SourceExistsError, SourceNotFoundError
from service.index.records import now
from service.settings import Settings
from service.sources import RegisteredSource
from service.sources.records import PageState
from service.sources.registry import SourceRegistry

pytestmark = pytest.mark.integration

PREFIX = "TestSourceRegistry"


@pytest.fixture
def registry(settings: Settings) -> Iterator[SourceRegistry]:
    client = connect_weaviate(settings)
    sources = SourceRegistry(client, prefix=PREFIX)
    sources.drop()
    try:
        yield sources
    finally:
        sources.drop()
        client.close()


def _source(name: str, **changes: object) -> RegisteredSource:
    source = RegisteredSource(
        name=name,
        kind="sitemap",
        location=f"https://docs.example.org/{name}/sitemap.xml",
        created_at=now(),
        interval_seconds=3600,
        version="2.0",
        group="example",
    )
    return dataclasses.replace(source, **changes)  # type: ignore[arg-type]


def test_a_source_is_registered_read_back_listed_and_removed(registry: SourceRegistry) -> None:
    assert not registry.exists()  # nothing was ever registered under this prefix
    page = PageState(hash="ab12", etag='"v1"', lastmod="2026-12-01")
    source = _source("guide", pages={"https://docs.example.org/guide/a.html": page})
    registry.add(source)
    assert registry.exists()
    found = registry.require("guide")
    assert (found.kind, found.location, found.interval_seconds) == (
        "sitemap",
        source.location,
        3600,
    )
    assert (found.version, found.group, found.synced_at) == ("2.0", "example", None)
    assert found.pages == source.pages
    registry.add(_source("api"))
    assert [s.name for s in registry.list()] == ["api", "guide"]
    with pytest.raises(SourceExistsError):
        registry.add(_source("guide"))
    registry.remove("guide")
    assert registry.get("guide") is None
    with pytest.raises(SourceNotFoundError):
        registry.require("guide")


def test_a_saved_sync_is_what_the_versions_read(registry: SourceRegistry) -> None:
    registry.add(_source("guide"))
    registry.add(_source("old", version="1.0"))
    assert registry.synced_versions() == []  # no sync completed yet
    registry.save(dataclasses.replace(registry.require("guide"), synced_at=now()))
    assert registry.synced_versions() == [("example", "2.0")]
    assert registry.list(pages=False)[0].pages == {}
