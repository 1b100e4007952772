"""Sync logic on the real ingest over the in-memory store: a loopback site (sitemap, with
and without ETags, a crawl) and a temporary directory."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from loaders import LoadOptions
from service.sources import RegisteredSource, SourceKind, sync_source
from tests.service.sources.memory import MemoryIndex, registered
from tests.service.sources.site import Site, page, serve

OPTIONS = LoadOptions(respect_robots=False, concurrency=2)


def _sync(index: MemoryIndex, source: RegisteredSource) -> RegisteredSource:
    synced = sync_source(index, source, options=OPTIONS)
    assert synced.last_report is not None
    return synced


def _counts(source: RegisteredSource) -> tuple[int, int, int, int]:
    report = source.last_report
    assert report is not None
    return report.unchanged, report.changed, report.added, report.removed


def _fresh(kind: SourceKind, location: str, **fields: int) -> set[tuple[str, object]]:
    """The chunks a first sync of the current state writes."""
    index = MemoryIndex()
    _sync(index, registered(kind, location, **fields))
    return index.chunks()


def _three_pages(etags: bool) -> Site:
    return Site(
        pages={
            "/a.html": page("Alpha", "Alpha explains the first thing."),
            "/b.html": page("Beta", "Beta explains the second thing."),
            "/c.html": page("Gamma", "Gamma explains the third thing."),
        },
        etags=etags,
    )


@pytest.mark.parametrize("etags", [True, False])
def test_a_sitemap_syncs_changes_additions_and_removals(etags: bool) -> None:
    with serve(_three_pages(etags)) as site:
        index = MemoryIndex()
        source = _sync(index, registered("sitemap", site.sitemap_url))
        assert _counts(source) == (0, 0, 3, 0)
        assert len(index.chunks()) == 3

        source = _sync(index, source)  # nothing changed
        report = source.last_report
        assert report is not None
        assert _counts(source) == (3, 0, 0, 0)
        assert (report.llm_calls, report.embedded_chunks, report.requests) == (0, 0, 4)
        assert report.not_modified == (3 if etags else 0)
        assert sum(site.not_modified.values()) == (3 if etags else 0)

        site.pages["/b.html"] = page("Beta", "Beta now explains something else.")
        del site.pages["/c.html"]
        site.pages["/d.html"] = page("Delta", "Delta explains the fourth thing.")
        source = _sync(index, source)
        report = source.last_report
        assert report is not None
        assert _counts(source) == (1, 1, 1, 1)
        assert report.completed
        assert report.llm_calls == 2
        assert index.deleted == [site.url("/c.html")]
        assert index.chunks() == _fresh("sitemap", site.sitemap_url)
        assert set(source.pages) == {site.url(p) for p in ("/a.html", "/b.html", "/d.html")}


def test_a_sitemap_lastmod_that_did_not_change_costs_no_request() -> None:
    site = _three_pages(etags=False)
    site.lastmod = dict.fromkeys(site.pages, "2026-01-01")
    with serve(site):
        index = MemoryIndex()
        source = _sync(index, registered("sitemap", site.sitemap_url))
        site.requests.clear()
        source = _sync(index, source)
        assert _counts(source) == (3, 0, 0, 0)
        assert dict(site.requests) == {"/sitemap.xml": 1}

        site.pages["/a.html"] = page("Alpha", "Alpha changed.")
        site.lastmod["/a.html"] = "2026-02-01"
        source = _sync(index, source)
        assert _counts(source) == (2, 1, 0, 0)
        assert dict(site.requests) == {"/sitemap.xml": 2, "/a.html": 1}


def test_a_page_that_fails_removes_nothing_and_the_next_sync_converges() -> None:
    with serve(_three_pages(etags=True)) as site:
        index = MemoryIndex()
        source = _sync(index, registered("sitemap", site.sitemap_url))
        del site.pages["/c.html"]
        site.pages["/a.html"] = page("Alpha", "Alpha changed while Beta fails.")
        site.failing = {"/b.html"}
        source = _sync(index, source)
        report = source.last_report
        assert report is not None
        assert not report.completed
        assert index.deleted == []
        assert len(report.failed) == 1
        assert "HTTP 500" in report.failed[0]
        assert site.url("/c.html") in source.pages  # still known, so removed later

        site.failing = set()
        source = _sync(index, source)
        assert source.last_report is not None
        assert source.last_report.completed
        assert index.deleted == [site.url("/c.html")]
        assert index.chunks() == _fresh("sitemap", site.sitemap_url)


def test_a_failed_ingest_removes_nothing_and_its_pages_are_read_again() -> None:
    with serve(_three_pages(etags=True)) as site:
        index = MemoryIndex()
        source = _sync(index, registered("sitemap", site.sitemap_url))
        site.pages["/a.html"] = page("Alpha", "Alpha changed.")
        del site.pages["/c.html"]
        index.fail_ingest = True
        source = _sync(index, source)
        assert source.last_report is not None
        assert not source.last_report.completed
        assert index.deleted == []
        index.fail_ingest = False
        site.not_modified.clear()
        source = _sync(index, source)
        assert source.last_report is not None
        assert source.last_report.completed
        assert site.not_modified["/a.html"] == 0  # its ETag was forgotten: fetched whole
        assert index.chunks() == _fresh("sitemap", site.sitemap_url)


def test_an_unreachable_sitemap_removes_nothing() -> None:
    with serve(_three_pages(etags=True)) as site:
        index = MemoryIndex()
        source = _sync(index, registered("sitemap", site.sitemap_url))
        missing = dataclasses.replace(source, location=site.url("/gone.xml"))
        after = _sync(index, missing)
        assert after.last_report is not None
        assert not after.last_report.completed
        assert index.deleted == []
        assert after.pages == source.pages
        assert after.synced_at == source.synced_at


def test_a_crawled_site_removes_a_page_that_is_no_longer_linked() -> None:
    site = Site(
        pages={
            "/docs/index.html": page(
                "Home", '<a href="one.html">one</a> <a href="two.html">two</a>'
            ),
            "/docs/one.html": page("One", "The first page."),
            "/docs/two.html": page("Two", "The second page."),
        }
    )
    with serve(site):
        index = MemoryIndex()
        start = site.url("/docs/index.html")
        source = _sync(index, registered("site", start, crawl_depth=1))
        assert _counts(source) == (0, 0, 3, 0)
        source = _sync(index, source)
        assert _counts(source) == (3, 0, 0, 0)
        assert source.last_report is not None
        assert source.last_report.llm_calls == 0
        site.pages["/docs/index.html"] = page("Home", 'Only <a href="one.html">one</a> now.')
        source = _sync(index, source)
        assert _counts(source) == (1, 1, 0, 1)
        assert index.deleted == [site.url("/docs/two.html")]
        assert index.chunks() == _fresh("site", start, crawl_depth=1)


def test_a_directory_syncs_without_reading_unchanged_files(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Alpha\n\nAlpha explains the first thing.\n")
    (tmp_path / "b.md").write_text("# Beta\n\nBeta explains the second thing.\n")
    index = MemoryIndex()
    source = _sync(index, registered("directory", str(tmp_path)))
    assert _counts(source) == (0, 0, 2, 0)
    source = _sync(index, source)
    assert _counts(source) == (2, 0, 0, 0)
    assert source.last_report is not None
    assert source.last_report.llm_calls == 0

    (tmp_path / "b.md").write_text("# Beta\n\nBeta now explains another thing.\n")
    os.utime(tmp_path / "b.md", ns=(1, 1))  # a new mtime whatever the clock's resolution
    (tmp_path / "a.md").unlink()
    (tmp_path / "c.md").write_text("# Gamma\n\nGamma is new.\n")
    source = _sync(index, source)
    assert _counts(source) == (0, 1, 1, 1)
    assert index.deleted == [str(tmp_path / "a.md")]
    assert index.chunks() == _fresh("directory", str(tmp_path))


def test_a_directory_that_is_gone_removes_nothing(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Alpha\n\nAlpha.\n")
    index = MemoryIndex()
    source = _sync(index, registered("directory", str(tmp_path / "docs")))
    (tmp_path / "docs" / "a.md").unlink()
    (tmp_path / "docs").rmdir()
    after = _sync(index, source)
    assert after.last_report is not None
    assert not after.last_report.completed
    assert index.deleted == []
    assert after.pages == source.pages


def test_a_sync_labels_every_chunk_and_summary_with_its_version(tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text("# Guide\n\nInstall it with pip.\n", encoding="utf-8")
    index = MemoryIndex()
    source = dataclasses.replace(
        registered("directory", str(tmp_path)), version="2.1", group="guide"
    )
    _sync(index, source)
    stored = [*index.store.originals.values(), *index.store.summaries.values()]
    assert len(stored) == 2
    assert {(r.version, r.version_group) for r in stored} == {("2.1", "guide")}
