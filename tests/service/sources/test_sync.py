"""Sync logic on the real ingest over the in-memory store: a loopback site (sitemap, with
and without ETags, a crawl) and a temporary directory."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest

import service.sources.repository as repository_module
from loaders import LoadOptions
from loaders.git import GitFile
from service.sources import PageState, RegisteredSource, SourceKind, edited, sync_source
from tests.service.sources.memory import MemoryIndex, registered
from tests.service.sources.repo import Repo
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


@pytest.mark.parametrize("kind", ["sitemap", "llms-txt"])
@pytest.mark.parametrize("etags", [True, False])
def test_a_sitemap_syncs_changes_additions_and_removals(kind: SourceKind, etags: bool) -> None:
    with serve(_three_pages(etags)) as site:
        listing = site.sitemap_url if kind == "sitemap" else site.llms_txt_url
        index = MemoryIndex()
        source = _sync(index, registered(kind, listing))
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
        assert index.chunks() == _fresh(kind, listing)
        assert set(source.pages) == {site.url(p) for p in ("/a.html", "/b.html", "/d.html")}


def test_a_sitemap_index_lists_the_pages_of_its_sitemaps() -> None:
    site = _three_pages(etags=True)
    site.sitemaps = 2
    with serve(site):
        index = MemoryIndex()
        source = _sync(index, registered("sitemap", site.sitemap_url))
        assert _counts(source) == (0, 0, 3, 0)
        assert set(source.pages) == {site.url(p) for p in ("/a.html", "/b.html", "/c.html")}
        del site.pages["/c.html"]
        site.failing = {"/sitemap-1.xml"}  # a sitemap that cannot be read: nothing removed
        failed = _sync(index, source)
        assert failed.last_report is not None
        assert not failed.last_report.completed
        assert "sitemap-1.xml" in failed.last_report.failed[0]
        assert index.deleted == []
        site.failing = set()
        source = _sync(index, failed)
        report = source.last_report
        assert report is not None
        assert _counts(source) == (2, 0, 0, 1)
        assert (report.requests, report.not_modified) == (1 + 2 + 2, 2)
        assert index.chunks() == _fresh("sitemap", site.sitemap_url)


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


class _KilledIndex(MemoryIndex):
    """Stops like a killed process once the ingest has written its first document."""

    def ingest_documents(self, documents: Any, **kwargs: Any) -> Any:
        def cut(items: Any) -> Any:
            iterator = iter(items)
            yield next(iterator)
            raise KeyboardInterrupt

        return super().ingest_documents(cut(documents), **kwargs)


@pytest.mark.parametrize("kind", ["sitemap", "site"])
def test_a_sync_killed_mid_way_removes_nothing_and_the_next_one_converges(kind: str) -> None:
    with serve(_three_pages(etags=True)) as site:
        index_page = '<a href="a.html">a</a> <a href="b.html">b</a> <a href="c.html">c</a>'
        site.pages["/index.html"] = page("Home", index_page)
        site.unlisted = {"/index.html"}
        location = site.sitemap_url if kind == "sitemap" else site.url("/index.html")
        fields = {"crawl_depth": 1} if kind == "site" else {}
        index = MemoryIndex()
        stored = _sync(index, registered(kind, location, **fields))  # type: ignore[arg-type]

        site.pages["/a.html"] = page("Alpha", "Alpha changed before the kill.")
        site.pages["/b.html"] = page("Beta", "Beta changed before the kill too.")
        del site.pages["/c.html"]
        site.pages["/index.html"] = page(
            "Home", "Gamma is gone. " + index_page.replace('c.html">c', 'd.html">d')
        )
        site.pages["/d.html"] = page("Delta", "Delta is new.")
        killed = _KilledIndex()
        killed.store = index.store
        before = index.chunks()
        with pytest.raises(KeyboardInterrupt):
            sync_source(killed, stored, options=OPTIONS)
        assert index.chunks() != before  # killed part-way: one page was written
        assert killed.deleted == []  # the page that is gone is still indexed
        assert site.url("/c.html") in {source for source, _ in index.chunks()}

        # Nothing of the killed sync was stored: the next one starts from what was.
        after = _sync(index, stored)
        assert after.last_report is not None
        assert after.last_report.completed
        assert index.deleted == [site.url("/c.html")]
        assert index.chunks() == _fresh(kind, location, **fields)  # type: ignore[arg-type]


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


def _linked_site(*, etags: bool, last_modified: bool = False) -> Site:
    return Site(
        pages={
            "/docs/index.html": page(
                "Home", '<a href="one.html">one</a> <a href="two.html">two</a>'
            ),
            "/docs/one.html": page("One", 'The first page. <a href="deep.html">deeper</a>'),
            "/docs/two.html": page("Two", "The second page."),
            "/docs/deep.html": page("Deep", "Only the first page links here."),
        },
        etags=etags,
        last_modified=last_modified,
    )


@pytest.mark.parametrize(("etags", "last_modified"), [(True, False), (False, True), (False, False)])
def test_a_crawled_site_asks_conditionally_and_follows_the_links_of_unchanged_pages(
    etags: bool, last_modified: bool
) -> None:
    with serve(_linked_site(etags=etags, last_modified=last_modified)) as site:
        index = MemoryIndex()
        start = site.url("/docs/index.html")
        source = _sync(index, registered("site", start, crawl_depth=2))
        assert _counts(source) == (0, 0, 4, 0)
        site.requests.clear()

        source = _sync(index, source)  # nothing changed: one request a page, nothing else
        report = source.last_report
        assert report is not None
        assert _counts(source) == (4, 0, 0, 0)
        assert (report.llm_calls, report.embedded_chunks, report.requests) == (0, 0, 4)
        validated = etags or last_modified
        assert report.not_modified == sum(site.not_modified.values()) == (4 if validated else 0)
        # the page two levels down is reached through the links `one.html` had
        assert site.requests["/docs/deep.html"] == 1
        assert set(source.pages) == {
            site.url(f"/docs/{p}.html") for p in ("index", "one", "two", "deep")
        }

        site.pages["/docs/one.html"] = page("One", "The first page, rewritten, links nowhere.")
        site.pages["/docs/three.html"] = page("Three", "A third page.")
        site.pages["/docs/index.html"] = page(
            "Home", '<a href="one.html">one</a> <a href="three.html">three</a>'
        )
        source = _sync(index, source)
        report = source.last_report
        assert report is not None
        assert _counts(source) == (0, 2, 1, 2)
        assert report.completed
        assert sorted(index.deleted) == [site.url("/docs/deep.html"), site.url("/docs/two.html")]
        assert index.chunks() == _fresh("site", start, crawl_depth=2)


def test_a_crawled_page_that_moved_is_read_whole_at_its_new_address() -> None:
    """A known page now redirects to another whose ETag is the one it had (the same
    bytes): the 304 at the new address says nothing of the new page, so it is read."""
    site = Site(
        pages={
            "/docs/index.html": page("Home", '<a href="old.html">the page</a>'),
            "/docs/old.html": page("Page", "The page that moves."),
        }
    )
    with serve(site):
        index = MemoryIndex()
        start = site.url("/docs/index.html")
        source = _sync(index, registered("site", start, crawl_depth=1))
        site.pages["/docs/new.html"] = site.pages.pop("/docs/old.html")
        site.redirects["/docs/old.html"] = "/docs/new.html"
        source = _sync(index, source)
        assert source.last_report is not None
        assert source.last_report.completed, source.last_report.failed
        assert _counts(source) == (1, 0, 1, 1)
        assert set(source.pages) == {start, site.url("/docs/new.html")}
        assert index.chunks() == _fresh("site", start, crawl_depth=1)


def test_a_site_synced_before_conditional_crawls_is_read_whole_once_and_calls_no_model() -> None:
    """Page states of the earlier form (the hash of the Markdown, no links): every page is
    requested whole once and counts as changed, but its Markdown is the one indexed."""
    with serve(_linked_site(etags=True)) as site:
        index = MemoryIndex()
        start = site.url("/docs/index.html")
        source = _sync(index, registered("site", start, crawl_depth=2))
        earlier = {}
        for page_url in source.pages:
            record = index.store.source_record(page_url)
            assert record is not None
            earlier[page_url] = PageState(hash=record.content_hash)
        site.not_modified.clear()
        source = _sync(index, dataclasses.replace(source, pages=earlier))
        report = source.last_report
        assert report is not None
        assert _counts(source) == (0, 4, 0, 0)
        assert (report.requests, report.not_modified, report.llm_calls) == (4, 0, 0)
        assert report.embedded_chunks == 0
        source = _sync(index, source)  # and from then on, conditionally
        assert source.last_report is not None
        assert source.last_report.not_modified == 4


def test_a_crawled_site_judges_repeated_blocks_as_a_fresh_crawl_would() -> None:
    footer = "<p>This footer is printed on several pages of the site.</p>"
    site = Site(
        pages={
            "/docs/index.html": page(
                "Home", '<a href="one.html">one</a> <a href="two.html">two</a>'
            ),
            "/docs/one.html": page("One", "The first page.").replace("</body>", footer + "</body>"),
            "/docs/two.html": page("Two", "The second page.").replace(
                "</body>", footer + "</body>"
            ),
        }
    )
    with serve(site):
        index = MemoryIndex()
        start = site.url("/docs/index.html")
        source = _sync(index, registered("site", start, crawl_depth=1))
        texts = {r.source: r.content for r in index.store.originals.values()}
        assert "footer" not in texts[site.url("/docs/one.html")]  # on 2 of 3 pages: dropped

        # Three more pages without it: on 2 of 6 pages it is not a repeat any more, so the
        # two unchanged pages (answered 304) are read again and indexed with it.
        more = {f"/docs/p{n}.html": page(f"P{n}", f"Page number {n}.") for n in range(3, 6)}
        site.pages.update(more)
        site.pages["/docs/index.html"] = page(
            "Home",
            " ".join(
                f'<a href="{p.rsplit("/", 1)[1]}">x</a>' for p in ["/one.html", "/two.html", *more]
            ),
        )
        site.not_modified.clear()
        source = _sync(index, source)
        report = source.last_report
        assert report is not None
        assert report.completed
        assert sum(site.not_modified.values()) == 2
        assert report.requests == 6 + 2
        assert index.chunks() == _fresh("site", start, crawl_depth=1)
        texts = {r.source: r.content for r in index.store.originals.values()}
        assert "footer" in texts[site.url("/docs/one.html")]

        source = _sync(index, source)  # and then nothing to do
        assert source.last_report is not None
        assert (source.last_report.llm_calls, source.last_report.requests) == (0, 6)


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


@pytest.mark.parametrize(
    "state",
    [
        PageState(),
        PageState(hash="h", etag='"e"', last_modified="Tue, 01 Dec 2026 10:00:00 GMT"),
        PageState(hash="h", links=(), blocks=None),
        PageState(hash="h", links=("/a.html", "/b.html"), blocks=(1, 2**63), dropped=(2**63,)),
        PageState(hash="h", links=(), blocks=()),
    ],
)
def test_a_page_state_reads_back_as_it_was_written(state: PageState) -> None:
    source = dataclasses.replace(registered("site", "https://h.example/"), pages={"p": state})
    assert RegisteredSource.pages_from_json(source.pages_json()) == {"p": state}


def _labels(index: MemoryIndex) -> set[tuple[str, str]]:
    stored = [*index.store.originals.values(), *index.store.summaries.values()]
    return {(r.version, r.version_group) for r in stored}


def test_a_sync_finishes_the_relabel_an_edit_left_pending(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Alpha\n\nAlpha explains the first thing.\n")
    (tmp_path / "b.md").write_text("# Beta\n\nBeta explains the second thing.\n")
    index = MemoryIndex()
    first = dataclasses.replace(registered("directory", str(tmp_path)), version="1.0")
    source = _sync(index, first)
    chunks = index.chunks()
    # An edit stored the new labels, then stopped before it relabelled a page.
    source = edited(source, version="2.0", group="docs")
    assert source.relabel_pending

    index.fail_relabel = True
    failed = _sync(index, source)
    assert failed.last_report is not None
    assert not failed.last_report.completed
    assert failed.relabel_pending
    assert _labels(index) == {("1.0", "")}

    index.fail_relabel = False
    index.relabelled.clear()
    done = _sync(index, failed)
    report = done.last_report
    assert report is not None
    assert report.completed
    assert (report.unchanged, report.llm_calls, report.embedded_chunks) == (2, 0, 0)
    assert not done.relabel_pending
    assert sorted(index.relabelled) == sorted(done.pages)
    assert _labels(index) == {("2.0", "docs")}
    assert index.chunks() == chunks
    records = {index.store.source_record(page) for page in done.pages}
    assert {(r.version, r.version_group) for r in records if r is not None} == {("2.0", "docs")}

    index.relabelled.clear()
    _sync(index, done)
    assert index.relabelled == []  # nothing pending: no page is looked at


def _git_source(repo: Repo, **fields: str) -> RegisteredSource:
    return dataclasses.replace(registered("git", str(repo.path)), **fields)  # type: ignore[arg-type]


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files a git sync reads (their paths in the repository)."""
    reads: list[str] = []
    real = repository_module.file_documents

    def counted(repository: str, file: GitFile, **kwargs: Any) -> list[Any]:
        reads.append(file.path)
        return real(repository, file, **kwargs)

    monkeypatch.setattr(repository_module, "file_documents", counted)
    return reads


def test_a_git_source_reads_only_the_files_that_differ_between_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Repo(tmp_path / "repo")
    first = repo.commit(
        {
            "docs/a.md": "# Alpha\n\nAlpha explains the first thing.\n",
            "docs/b.md": "# Beta\n\nBeta explains the second thing.\n",
            "docs/c.md": "# Gamma\n\nGamma explains the third thing.\n",
            "src/code.md": "# Code\n\nNot under the sub-path.\n",
        }
    )
    reads = _reads(monkeypatch)
    index = MemoryIndex()
    source = _sync(index, _git_source(repo, subpath="docs"))
    assert _counts(source) == (0, 0, 3, 0)
    assert (source.commit, sorted(reads)) == (first, ["docs/a.md", "docs/b.md", "docs/c.md"])
    prefix = f"{repo.path}@HEAD/"
    assert set(source.pages) == {prefix + f"docs/{n}.md" for n in "abc"}

    reads.clear()
    repo.write({"docs/a.md": "# Alpha\n\nChanged in the working tree only.\n"})
    source = _sync(index, source)  # the same commit: nothing listed, nothing read
    assert _counts(source) == (3, 0, 0, 0)
    assert reads == []

    second = repo.commit(
        {
            "docs/b.md": "# Beta\n\nBeta now explains another thing.\n",
            "docs/c.md": None,
            "docs/d.md": "# Delta\n\nDelta is new.\n",
            "src/code.md": "# Code\n\nChanged, but not under the sub-path.\n",
        }
    )
    source = _sync(index, source)
    report = source.last_report
    assert report is not None
    assert report.completed, report.failed
    # a.md's working-tree change was committed with them: it differs too
    assert _counts(source) == (0, 2, 1, 1)
    assert sorted(reads) == ["docs/a.md", "docs/b.md", "docs/d.md"]
    assert index.deleted == [prefix + "docs/c.md"]
    assert source.commit == second
    assert index.chunks() == _fresh_git(repo, subpath="docs")


def test_a_git_source_syncs_its_ref_and_a_missing_ref_removes_nothing(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({"a.md": "# A\n\nOn main.\n"})
    repo.git("branch", "stable")
    repo.commit({"a.md": "# A\n\nOn main, later.\n", "b.md": "# B\n\nOnly on main.\n"})
    index = MemoryIndex()
    source = _sync(index, _git_source(repo, ref="stable"))
    assert set(source.pages) == {f"{repo.path}@stable/a.md"}
    texts = {r.content for r in index.store.originals.values()}
    assert any("On main." in text for text in texts)

    repo.git("branch", "-D", "stable")
    after = _sync(index, source)
    assert after.last_report is not None
    assert not after.last_report.completed
    assert "names no commit" in after.last_report.failed[0]
    assert index.deleted == []
    assert (after.pages, after.commit) == (source.pages, source.commit)


def test_a_git_source_judges_repeated_blocks_as_a_fresh_sync_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    footer = "<p>This footer is printed on several pages of the site.</p>"

    def html(title: str, text: str, *, with_footer: bool) -> str:
        return page(title, text).replace("</body>", (footer if with_footer else "") + "</body>")

    repo = Repo(tmp_path / "repo")
    repo.commit(
        {
            "a.html": html("A", "The first page.", with_footer=True),
            "b.html": html("B", "The second page.", with_footer=True),
            "c.html": html("C", "The third page.", with_footer=False),
        }
    )
    index = MemoryIndex()
    source = _sync(index, _git_source(repo))
    assert all("footer" not in r.content for r in index.store.originals.values())
    reads = _reads(monkeypatch)
    repo.commit({f"p{n}.html": html(f"P{n}", f"Page {n}.", with_footer=False) for n in range(3)})
    source = _sync(index, source)
    assert source.last_report is not None
    assert source.last_report.completed
    # 2 of 6 pages now: not a repeat, so a.html and b.html are read again to keep it
    assert sorted(reads) == ["a.html", "b.html", "p0.html", "p1.html", "p2.html"]
    assert index.chunks() == _fresh_git(repo)


def _fresh_git(repo: Repo, **fields: str) -> set[tuple[str, object]]:
    index = MemoryIndex()
    _sync(index, _git_source(repo, **fields))
    return index.chunks()
