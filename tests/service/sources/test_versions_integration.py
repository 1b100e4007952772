"""Two versions of the same docs on the real stack: two registered directories of one
group, each with its own label, synced on their own; a search reads the version asked, and
by default the latest version that completed a sync (plus what belongs to no group).
Three one-chunk pages summarized by the smallest model (no wording is asserted)."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.query.search import Hit, search_request
from service.settings import Settings
from service.sources import new_source
from service.synopsis import Synopsis
from tests.service.conftest import assert_invariants, write_markdown

pytestmark = pytest.mark.integration

PREFIX = "TestVersions"
PAGES = {
    "1.9": "Quill 1.9 sets the colours of a page with `quill --colour NAME`.",
    "1.10": "Quill 1.10 sets the colours of a page with `quill theme NAME`.",
}


@pytest.fixture
def synopsis(cheap_settings: Settings) -> Iterator[Synopsis]:
    synopsis = Synopsis.open(dataclasses.replace(cheap_settings, collection_prefix=PREFIX))
    synopsis.store.drop()
    synopsis.registered_sources.drop()
    try:
        yield synopsis
    finally:
        synopsis.store.drop()
        synopsis.registered_sources.drop()
        synopsis.close()


def _search(synopsis: Synopsis, version: str | None = None, **options: object) -> list[Hit]:
    request = search_request(
        synopsis.settings,
        "how do I set the colours of a page in quill",
        k=10,
        max_vector_distance=0.0,
        version=version,
        **options,
    )
    return synopsis.search(request)


def _versions(hits: list[Hit]) -> dict[str, str | None]:
    return {Path(hit.source).parent.name: hit.version for hit in hits}


def test_two_versions_are_searched_apart_and_the_default_is_the_latest(
    synopsis: Synopsis, tmp_path: Path
) -> None:
    started = dt.datetime.now(dt.UTC)
    for version, text in PAGES.items():
        folder = tmp_path / f"v{version}"
        folder.mkdir()
        write_markdown(folder / "guide.md", "Quill guide", {"Colours": text})
        synopsis.registered_sources.add(
            new_source(f"quill-{version}", str(folder), version=version, group="quill")
        )
    notes = tmp_path / "notes"
    notes.mkdir()
    write_markdown(notes / "team.md", "Team notes", {"Colours": "Our quill pages are blue."})
    synopsis.registered_sources.add(new_source("notes", str(notes)))

    # Only 1.9 has completed a sync: it is the latest of its group, 1.10 hides nothing yet.
    for name in ("quill-1.9", "notes"):
        report = synopsis.sync_registered(name).last_report
        assert report is not None
        assert report.completed, report.failed
    assert synopsis.latest_versions() == {"quill": "1.9"}
    assert _versions(_search(synopsis)) == {"v1.9": "1.9", "notes": None}

    report = synopsis.sync_registered("quill-1.10").last_report
    assert report is not None
    assert report.completed, report.failed
    assert synopsis.latest_versions() == {"quill": "1.10"}  # 1.10 > 1.9: numbers compare

    default = _search(synopsis)
    assert _versions(default) == {"v1.10": "1.10", "notes": None}
    assert _versions(_search(synopsis, "1.9")) == {"v1.9": "1.9"}
    assert _versions(_search(synopsis, "1.10")) == {"v1.10": "1.10"}
    assert _versions(_search(synopsis, "*")) == {"v1.9": "1.9", "v1.10": "1.10", "notes": None}
    # The summaries' own leg is filtered alike (they carry their chunk's labels).
    assert _versions(_search(synopsis, "1.9", mode="summaries")) == {"v1.9": "1.9"}
    assert _versions(_search(synopsis, mode="summaries")) == {"v1.10": "1.10", "notes": None}
    # The async path (the HTTP API's and the MCP tools') reads the same latest versions.
    request = search_request(synopsis.settings, "quill colours", k=10, max_vector_distance=0.0)
    assert _versions(asyncio.run(synopsis.asearch(request))) == _versions(default)

    ended = dt.datetime.now(dt.UTC)
    for hit in _search(synopsis, "*"):
        assert hit.indexed_at is not None
        assert started <= hit.indexed_at <= ended
        assert hit.to_dict()["version"] == hit.version
    # Both versions' chunks and summaries stand side by side, whole.
    census = assert_invariants(synopsis.store)
    assert sorted(Path(source).parent.name for source in census.originals) == [
        "notes",
        "v1.10",
        "v1.9",
    ]
