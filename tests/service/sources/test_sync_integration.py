"""Registered sources on the real stack: the registry in Weaviate, a sitemap served on
loopback with ETags synced through change, addition and removal, the CLI on a temporary
directory, and `/sources` with its sync as a job of the job workers. Pages are one chunk
each and summarized by the smallest model (no wording is asserted), so the whole module
costs a handful of model calls."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient
from prometheus_client import REGISTRY
from weaviate.classes.config import Configure, DataType, Property

from loaders import LoadOptions
from service.api import create_app
from service.errors import SourceBusyError
from service.index.schema import keyword_property, stored_text
from service.ingest.load_options import load_options
from service.ingest.locks import SourceLocks
from service.jobs import SCHEDULE_OWNER, JobRunner, JobStore, SyncScheduler
from service.settings import Settings
from service.sources import (
    RegisteredSource,
    SourceKind,
    SourceRegistry,
    new_source,
    sync_source,
)
from service.synopsis import Synopsis
from tests.service.serving import IN_PROCESS_URL
from tests.service.sources.memory import MemoryIndex, registered
from tests.service.sources.repo import Repo
from tests.service.sources.site import Site, page, serve
from tests.support.cli import cli
from tests.support.invariants import assert_invariants

pytestmark = pytest.mark.integration

PREFIX = "TestSync"
OPTIONS = LoadOptions(respect_robots=False)


@pytest.fixture
def synced_settings(cheap_settings: Settings) -> Settings:
    return cheap_settings.with_overrides(collection_prefix=PREFIX)


@pytest.fixture
def synopsis(synced_settings: Settings) -> Iterator[Synopsis]:
    synopsis = Synopsis.open(synced_settings)
    jobs = JobStore(synopsis.client, prefix=PREFIX)
    synopsis.store.drop()
    synopsis.registered_sources.drop()
    jobs.drop()
    try:
        yield synopsis
    finally:
        synopsis.store.drop()
        synopsis.registered_sources.drop()
        jobs.drop()
        synopsis.close()


def _chunk_ids(synopsis: Synopsis) -> set[tuple[str, object]]:
    return {
        (str(obj.properties["source"]), obj.uuid)
        for obj in synopsis.store.originals.iterator(return_properties=["source"])
    }


def _fresh(
    location: str, max_tokens: int, kind: SourceKind = "sitemap", **fields: int
) -> set[tuple[str, object]]:
    """The chunk ids a first sync of the current state writes (ids do not depend on the
    models: the in-memory index's are the same)."""
    index = MemoryIndex(max_tokens=max_tokens)
    sync_source(index, registered(kind, location, **fields), options=OPTIONS)
    return index.chunks()


def test_a_sitemap_syncs_on_the_real_stack(synopsis: Synopsis) -> None:
    site = Site(
        pages={
            "/a.html": page("Alpha", "Alpha explains how the first widget is installed."),
            "/b.html": page("Beta", "Beta explains how the second widget is configured."),
        }
    )
    registry = synopsis.registered_sources
    created = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    with serve(site):
        registry.add(
            RegisteredSource(
                name="site", kind="sitemap", location=site.sitemap_url, created_at=created
            )
        )
        source = synopsis.sync_registered("site", options=OPTIONS)
        first = source.last_report
        assert first is not None
        assert (first.added, first.completed) == (2, True)
        assert first.llm_calls == 2

        # The page states come back from Weaviate: every page is asked with its ETag.
        again = synopsis.sync_registered("site", options=OPTIONS).last_report
        assert again is not None
        assert (again.unchanged, again.llm_calls, again.embedded_chunks) == (2, 0, 0)
        assert (again.not_modified, sum(site.not_modified.values())) == (2, 2)

        site.pages["/b.html"] = page("Beta", "Beta now explains how the widget is removed.")
        del site.pages["/a.html"]
        site.pages["/c.html"] = page("Gamma", "Gamma explains how the third widget runs.")
        third = synopsis.sync_registered("site", options=OPTIONS).last_report
        assert third is not None
        assert (third.unchanged, third.changed, third.added, third.removed) == (0, 1, 1, 1)
        assert third.completed
        stored = registry.require("site")
        assert set(stored.pages) == {site.url("/b.html"), site.url("/c.html")}
        assert stored.last_report == third
        assert _chunk_ids(synopsis) == _fresh(site.sitemap_url, synopsis.settings.ingest.max_tokens)
        assert synopsis.source(site.url("/a.html")) is None
        assert_invariants(synopsis.store)
    # Another process syncing it: this one refuses rather than run beside it.
    with SourceLocks(synopsis.store.leases, seconds=30.0) as other:
        assert other.acquire("registered source\nsite", wait=0.0)
        with pytest.raises(SourceBusyError):
            synopsis.sync_registered("site", options=OPTIONS)
        with pytest.raises(SourceBusyError):  # nor removed while it syncs
            synopsis.remove_registered("site")
    assert [s.name for s in registry.list()] == ["site"]
    registry.remove("site")
    assert registry.get("site") is None


@pytest.mark.parametrize("etags", [True, False], ids=["etags", "no-etags"])
def test_a_crawled_site_resyncs_with_one_request_a_page_on_the_real_stack(
    synopsis: Synopsis, etags: bool
) -> None:
    """A crawled site synced again unchanged: one request a page (each a 304 when the
    server sends ETags, else a 200 whose bytes hash as before), no model call and no
    embedding; then a changed page and a page no longer linked."""
    site = Site(
        pages={
            "/docs/index.html": page(
                "Widgets", 'Read <a href="a.html">install</a> and <a href="b.html">tune</a>.'
            ),
            "/docs/a.html": page("Alpha", "Alpha explains how the first widget is installed."),
            "/docs/b.html": page("Beta", "Beta explains how the second widget is configured."),
        },
        etags=etags,
    )
    with serve(site):
        start = site.url("/docs/index.html")
        synopsis.registered_sources.add(
            RegisteredSource(
                name="crawl",
                kind="site",
                location=start,
                crawl_depth=1,
                created_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
            )
        )
        first = synopsis.sync_registered("crawl", options=OPTIONS).last_report
        assert first is not None
        assert (first.added, first.completed, first.requests) == (3, True, 3)
        site.requests.clear()

        again = synopsis.sync_registered("crawl", options=OPTIONS).last_report
        assert again is not None
        assert (again.unchanged, again.llm_calls, again.embedded_chunks) == (3, 0, 0)
        assert again.requests == sum(site.requests.values()) == 3
        assert again.not_modified == sum(site.not_modified.values()) == (3 if etags else 0)

        site.pages["/docs/index.html"] = page("Widgets", 'Only <a href="a.html">install</a>.')
        third = synopsis.sync_registered("crawl", options=OPTIONS).last_report
        assert third is not None
        assert (third.unchanged, third.changed, third.added, third.removed) == (1, 1, 0, 1)
        assert third.completed
        assert synopsis.source(site.url("/docs/b.html")) is None
        assert _chunk_ids(synopsis) == _fresh(
            start, synopsis.settings.ingest.max_tokens, "site", crawl_depth=1
        )
        assert_invariants(synopsis.store)


def test_the_cli_syncs_an_llms_txt_index(synopsis: Synopsis, synced_settings: Settings) -> None:
    """An llms.txt registered by its URL (kind found from it), synced twice through the
    CLI: its list's links are the pages; the second sync asks each with its ETag."""
    site = Site(
        pages={
            "/a.html": page("Alpha", "Alpha explains how the first widget is installed."),
            "/b.html": page("Beta", "Beta explains how the second widget is configured."),
        }
    )
    with serve(site):
        code, out, err = cli(synced_settings, "sources", "add", "llms", site.llms_txt_url)
        assert code == 0, err
        assert f"llms-txt {site.llms_txt_url}" in out
        code, out, err = cli(synced_settings, "sources", "sync", "llms")
        assert code == 0, err
        assert "0 unchanged, 0 changed, 2 added, 0 removed pages; 4 requests" in out
        code, out, err = cli(synced_settings, "sources", "sync", "llms")
        assert code == 0, err
        assert (
            "2 unchanged, 0 changed, 0 added, 0 removed pages; 4 requests (2 answered 304)" in out
        )
        assert "0 LLM calls, 0 chunks embedded" in out
    assert {s for s, _ in _chunk_ids(synopsis)} == {site.url("/a.html"), site.url("/b.html")}


def test_a_git_repository_syncs_commit_to_commit_on_the_real_stack(
    synopsis: Synopsis, synced_settings: Settings, tmp_path: Path
) -> None:
    """A temporary repository with commits: a sync at the same commit reads nothing and
    calls no model; at a new commit it reads the files that differ, removes the one that
    is gone, and the index holds the chunk ids of a first sync of that commit."""
    repo = Repo(tmp_path / "repo")
    repo.commit(
        {
            "docs/a.md": "# Alpha\n\nAlpha explains how the first widget is installed.\n",
            "docs/b.md": "# Beta\n\nBeta explains how the second widget is configured.\n",
        }
    )
    synopsis.registered_sources.add(
        new_source("repo", str(repo.path), kind="git", subpath="docs", version="1.0")
    )
    first = synopsis.sync_registered("repo").last_report
    assert first is not None
    assert (first.added, first.completed) == (2, True)

    again = synopsis.sync_registered("repo").last_report
    assert again is not None
    assert (again.unchanged, again.llm_calls, again.embedded_chunks) == (2, 0, 0)

    commit = repo.commit(
        {
            "docs/a.md": None,
            "docs/b.md": "# Beta\n\nBeta now explains how the widget is removed.\n",
            "docs/c.md": "# Gamma\n\nGamma explains how the third widget runs.\n",
        }
    )
    third = synopsis.sync_registered("repo")
    report = third.last_report
    assert report is not None
    assert (report.unchanged, report.changed, report.added, report.removed) == (0, 1, 1, 1)
    assert report.completed
    assert third.commit == commit
    assert synopsis.registered_sources.require("repo").commit == commit
    fresh = MemoryIndex(max_tokens=synopsis.settings.ingest.max_tokens)
    sync_source(fresh, dataclasses.replace(third, pages={}, commit=""), options=OPTIONS)
    assert _chunk_ids(synopsis) == fresh.chunks()
    assert {r.version for r in synopsis.sources()} == {"1.0"}
    assert_invariants(synopsis.store)
    code, out, err = cli(synced_settings, "sources", "list")
    assert code == 0, err
    assert f"{repo.path}@HEAD/docs ({commit[:12]})  version 1.0" in out


def test_the_cli_registers_syncs_lists_and_removes_a_directory(
    synopsis: Synopsis, synced_settings: Settings, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nAlpha explains how the widget is installed.\n")
    code, out, err = cli(synced_settings, "sources", "add", "local", str(docs))
    assert code == 0, err
    assert "directory" in out
    code, _, err = cli(synced_settings, "sources", "add", "local", str(docs))
    assert code == 1
    assert "registered already" in err

    code, out, err = cli(synced_settings, "sources", "sync", "local")
    assert code == 0, err
    assert "0 unchanged, 0 changed, 1 added, 0 removed" in out
    code, out, err = cli(synced_settings, "sources", "edit", "local", "--version", "2.0")
    assert code == 0, err
    assert out == "edited local: version 2.0, synced when asked; 1 pages\n"
    assert {r.version for r in synopsis.sources()} == {"2.0"}  # relabelled at once
    code, _, err = cli(synced_settings, "sources", "edit", "local", "--group", "g", "--version", "")
    assert code == 1
    assert "needs a version" in err
    code, _, err = cli(synced_settings, "sources", "edit", "local")
    assert code == 2
    assert "give --interval, --version or --group" in err
    (docs / "a.md").unlink()
    code, out, err = cli(synced_settings, "sources", "sync")
    assert code == 0, err
    assert "1 removed" in out
    assert synopsis.source(str(docs / "a.md")) is None

    code, out, _ = cli(synced_settings, "sources", "list", "--json")
    [row] = json.loads(out)["sources"]
    assert (row["name"], row["kind"], row["pages"]) == ("local", "directory", 0)
    assert row["last_report"]["removed"] == 1
    code, out, err = cli(synced_settings, "sources", "remove", "local")
    assert code == 0, err
    code, _, err = cli(synced_settings, "sources", "sync", "local")
    assert code == 1
    assert "no source is registered as 'local'" in err


def _job_end(client: TestClient[Any], job_id: str, *, timeout: float = 600) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        job = client.get(f"/jobs/{job_id}").json()
        if job["state"] not in ("queued", "running"):
            return job
        assert time.monotonic() < deadline, f"job still {job['state']}: {job}"
        time.sleep(0.2)


def test_the_api_registers_a_source_and_syncs_it_as_a_job(
    synopsis: Synopsis, synced_settings: Settings
) -> None:
    """POST /sources, then POST /sources/{name}/sync: a job of the job workers, followed at
    /jobs/{id}, whose report is the sync's; GET /sources shows it; DELETE removes the
    registration and the pages."""
    settings = synced_settings.with_overrides(
        fetch_allow="127.0.0.1", jobs_poll_seconds=0.2, jobs_lease_seconds=3.0
    )
    site = Site(
        pages={
            "/a.html": page("Alpha", "Alpha explains how the first widget is installed."),
            "/b.html": page("Beta", "Beta explains how the second widget is configured."),
        }
    )
    with serve(site), TestClient(create_app(settings), base_url=IN_PROCESS_URL) as client:
        created = client.post("/sources", json={"name": "site", "location": site.sitemap_url})
        assert created.status_code == 201, created.text
        assert created.json()["kind"] == "sitemap"

        queued = client.post("/sources/site/sync")
        assert queued.status_code == 202, queued.text
        job = queued.json()
        assert (job["request"]["kind"], job["request"]["name"]) == ("sync", "site")
        assert queued.headers["location"] == f"/jobs/{job['id']}"
        # One sync of a source at a time: a second is refused while the first is active.
        second = client.post("/sources/site/sync")
        assert (second.status_code, second.json()["error"]) == (409, "SourceBusyError")

        added = {"source": "site", "outcome": "added"}
        added_before = REGISTRY.get_sample_value("synopsis_source_sync_pages_total", added)
        site_304 = ("synopsis_source_sync_not_modified_total", {"source": "site"})
        answered_304 = REGISTRY.get_sample_value(*site_304) or 0
        done = _job_end(client, job["id"])
        assert done["state"] == "done", done
        assert (done["report"]["source"], done["report"]["added"]) == ("site", 2)
        assert done["report"]["completed"] is True
        assert sorted(done["sources"]) == [site.url("/a.html"), site.url("/b.html")]
        assert done["progress"]["sources_done"] == 2

        [listed] = client.get("/sources").json()
        assert (listed["name"], listed["pages"]) == ("site", 2)
        assert listed["synced_at"] is not None
        assert listed["last_report"]["added"] == 2
        assert {d["source"] for d in client.get("/documents").json()} == {
            site.url("/a.html"),
            site.url("/b.html"),
        }

        again = _job_end(client, client.post("/sources/site/sync").json()["id"])
        assert again["state"] == "done", again
        assert (again["report"]["unchanged"], again["report"]["not_modified"]) == (2, 2)
        assert again["report"]["llm_calls"] == 0
        # Both syncs in /metrics, as the job runner recorded them.
        assert client.get("/metrics").status_code == 200
        added_after = REGISTRY.get_sample_value("synopsis_source_sync_pages_total", added)
        assert (added_after or 0) - (added_before or 0) == 2
        assert (REGISTRY.get_sample_value(*site_304) or 0) - answered_304 == 2

        removed = client.delete("/sources/site")
        assert (removed.status_code, removed.json()) == (
            200,
            {"name": "site", "pages_removed": 2, "documents_kept": False},
        )
        assert client.get("/sources").json() == []
        assert client.get("/documents").json() == []
        assert client.post("/sources/site/sync").status_code == 404


def test_two_job_runners_queue_and_run_one_sync_of_a_due_source(
    synopsis: Synopsis, synced_settings: Settings, tmp_path: Path
) -> None:
    """Two processes' job workers (two runners, each with its own Weaviate client) poll a
    source registered with an interval and never synced, so due at once: one sync job is
    created even when both schedulers look at the very same moment, one runner runs it,
    and no other is queued once it completed (the next is an interval away)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nAlpha explains how the widget is installed.\n")
    synopsis.registered_sources.add(new_source("local", str(docs), interval="1h"))
    assert synopsis.registered_sources.require("local").interval_seconds == 3600
    other = Synopsis.open(synced_settings)
    try:
        stores = [JobStore(core.client, prefix=PREFIX) for core in (synopsis, other)]
        stores[0].ensure_schema()

        def scheduler(core: Synopsis, store: JobStore) -> SyncScheduler:
            registry = SourceRegistry(core.client, prefix=PREFIX)
            return SyncScheduler(registry, store, queue_size=10, check_seconds=0.0)

        # Both look at once.
        cores = (synopsis, other)
        racing = [scheduler(core, store) for core, store in zip(cores, stores, strict=True)]
        start = threading.Barrier(2)

        def look(item: SyncScheduler) -> None:
            start.wait()
            item.enqueue_due()

        threads = [threading.Thread(target=look, args=(item,)) for item in racing]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        [queued] = stores[0].in_states(["queued"])
        assert (queued.spec.kind, queued.spec.name, queued.owner) == ("sync", "local", "schedule")

        runners = [
            JobRunner(
                core,
                store,
                uploads=tmp_path / "uploads",
                options=lambda: load_options(synced_settings),
                poll_seconds=0.2,
                lease_seconds=3.0,
                scheduler=scheduler(core, store),
            )
            for core, store in zip((synopsis, other), stores, strict=True)
        ]
        for runner in runners:
            runner.start()
        try:
            deadline = time.monotonic() + 600
            while synopsis.registered_sources.require("local").synced_at is None:
                assert time.monotonic() < deadline, stores[0].recent(limit=10)
                time.sleep(0.2)
            time.sleep(2.0)  # ten more polls of each runner
        finally:
            for runner in runners:
                runner.stop()
        jobs = stores[0].recent(limit=100)
        assert [(job.id, job.state, job.owner) for job in jobs] == [
            (queued.id, "done", SCHEDULE_OWNER)
        ]
        assert (jobs[0].report["added"], jobs[0].report["completed"]) == (1, True)
        source = synopsis.registered_sources.require("local")
        assert source.attempted_at == source.synced_at
        assert synopsis.source(str(docs / "a.md")) is not None
    finally:
        other.close()


def test_a_registry_created_before_schedules_gains_their_properties(synopsis: Synopsis) -> None:
    """The collection as the first release created it, with a source in it: a registry
    adds the schedule's properties, reads the old source as unscheduled, and stores one."""
    registry = synopsis.registered_sources
    synopsis.client.collections.create(
        registry.name,
        vector_config=Configure.Vectors.self_provided(),
        properties=[
            keyword_property("name"),
            keyword_property("kind"),
            stored_text("location"),
            Property(name="crawl_depth", data_type=DataType.INT),
            Property(name="max_pages", data_type=DataType.INT),
            Property(name="created_at", data_type=DataType.DATE),
            Property(name="synced_at", data_type=DataType.DATE),
            stored_text("last_report"),
            stored_text("pages"),
        ],
    )
    synopsis.client.collections.use(registry.name).data.insert(
        {
            "name": "old",
            "kind": "sitemap",
            "location": "https://docs.example/sitemap.xml",
            "crawl_depth": 0,
            "max_pages": 0,
            "created_at": dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
            "last_report": "",
            "pages": "{}",
        }
    )
    fresh = SourceRegistry(synopsis.client, prefix=PREFIX)
    [old] = fresh.list(pages=False)
    assert (old.name, old.interval_seconds, old.attempted_at) == ("old", 0, None)
    fresh.add(new_source("new", "https://docs.example/b/sitemap.xml", interval="2h"))
    assert fresh.require("new").interval_seconds == 7200
    assert [s.name for s in fresh.list()] == ["new", "old"]
