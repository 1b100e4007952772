"""Two versions of the same docs on the real stack: two registered directories of one
group, each with its own label, synced on their own; a search reads the version asked, and
by default the latest version that completed a sync (plus what belongs to no group).
Three one-chunk pages summarized by the smallest model (no wording is asserted)."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.query.search import Hit, search_request
from service.settings import Settings
from service.sources import new_source
from service.synopsis import Synopsis
from tests.support.documents import write_markdown
from tests.support.invariants import assert_invariants

pytestmark = pytest.mark.integration

PREFIX = "TestVersions"
PAGES = {
    "1.9": "Quill 1.9 sets the colours of a page with `quill --colour NAME`.",
    "1.10": "Quill 1.10 sets the colours of a page with `quill theme NAME`.",
}


@pytest.fixture
def synopsis(cheap_settings: Settings) -> Iterator[Synopsis]:
    synopsis = Synopsis.open(cheap_settings.with_overrides(collection_prefix=PREFIX))
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


def test_an_edited_version_relabels_the_indexed_pages_in_place(
    synopsis: Synopsis, tmp_path: Path
) -> None:
    """`sources edit` on the real stack: a new version label and group are given to the
    chunks and summaries a sync indexed, without a fetch, an embedding or a model call;
    the next sync then finds every page unchanged."""
    folder = tmp_path / "quill"
    folder.mkdir()
    write_markdown(folder / "guide.md", "Quill guide", {"Colours": PAGES["1.9"]})
    synopsis.registered_sources.add(new_source("quill", str(folder), version="1.9"))
    assert synopsis.sync_registered("quill").last_report is not None
    before = {hit.id: hit.indexed_at for hit in _search(synopsis, "*")}

    source = synopsis.edit_registered("quill", version="2.0", group="quill", interval="6h")
    assert (source.version, source.group, source.interval_seconds) == ("2.0", "quill", 21600)
    assert not source.relabel_pending
    stored = synopsis.registered_sources.require("quill")
    assert (stored.version, stored.group, stored.relabel_pending) == ("2.0", "quill", False)
    assert _versions(_search(synopsis, "2.0")) == {"quill": "2.0"}
    assert _search(synopsis, "1.9") == []
    assert _versions(_search(synopsis, "2.0", mode="summaries")) == {"quill": "2.0"}
    assert {hit.id: hit.indexed_at for hit in _search(synopsis, "*")} == before  # in place
    census = assert_invariants(synopsis.store)
    assert sum(census.originals.values()) == len(before)

    report = synopsis.sync_registered("quill").last_report
    assert report is not None
    assert (report.unchanged, report.llm_calls, report.embedded_chunks) == (1, 0, 0)
    assert synopsis.latest_versions() == {"quill": "2.0"}
