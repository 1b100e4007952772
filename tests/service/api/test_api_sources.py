"""`/sources`, the registered sources (unit): registration and its refusals, the list with
the last report, removal, over a fake core with an in-memory registry. The sync job on
the real stack is tests/service/sources/test_sync_integration.py's."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from service.sources import PageState, RegisteredSource, SyncReport
from tests.service.api.apps import client_over
from tests.service.api.test_api import FakeSynopsis, _ollama, _ollama_ok
from tests.service.sources.repo import Repo

# A literal public address: the address policy passes it without resolving a name.
SITEMAP = "https://93.184.216.34/docs/sitemap.xml"


def _client(fake: FakeSynopsis, **settings: Any) -> TestClient[Any]:
    fake.settings = fake.settings.with_overrides(**settings)
    return client_over(fake, _ollama(_ollama_ok))  # the app for these settings, built once


@pytest.fixture
def fake() -> FakeSynopsis:
    return FakeSynopsis()


@pytest.fixture
def client(fake: FakeSynopsis) -> Iterator[TestClient[Any]]:
    with _client(fake) as test_client:
        yield test_client


def test_register_then_list_and_get(client: TestClient[Any], fake: FakeSynopsis) -> None:
    response = client.post("/sources", json={"name": "guide", "location": SITEMAP})
    assert response.status_code == 201, response.text
    assert response.headers["location"] == "/sources/guide"
    body = response.json()
    created = body.pop("created_at")
    assert body == {
        "name": "guide",
        "kind": "sitemap",
        "location": SITEMAP,
        "version": None,
        "group": None,
        "crawl_depth": 0,
        "max_pages": 0,
        "ref": None,
        "subpath": None,
        "commit": None,
        "interval_seconds": 0,
        "pages": 0,
        "synced_at": None,
        "attempted_at": None,
        "next_sync_at": None,
        "last_report": None,
    }
    assert fake.registry.require("guide").created_at == dt.datetime.fromisoformat(created)
    assert client.get("/sources").json() == [response.json()]
    assert client.get("/sources/guide").json() == response.json()


def test_a_source_is_registered_as_a_version_of_a_group(client: TestClient[Any]) -> None:
    body = {"name": "py312", "location": SITEMAP, "version": "3.12", "group": "python"}
    response = client.post("/sources", json=body)
    assert response.status_code == 201, response.text
    assert (response.json()["version"], response.json()["group"]) == ("3.12", "python")
    [listed] = client.get("/sources").json()
    assert (listed["version"], listed["group"]) == ("3.12", "python")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"group": "python"}, "version"),  # which version of the group would it be?
        ({"version": "3 12"}, "version"),
        ({"version": "3.12", "group": "py thon"}, "group"),
    ],
)
def test_a_version_or_group_that_cannot_be_registered(
    client: TestClient[Any], body: dict[str, str], field: str
) -> None:
    response = client.post("/sources", json={"name": "py", "location": SITEMAP, **body})
    assert response.status_code == 400, response.text
    assert field in response.text


def test_an_edit_changes_the_interval_version_and_group_in_place(
    client: TestClient[Any], fake: FakeSynopsis
) -> None:
    body = {"name": "py", "location": SITEMAP, "version": "3.11", "interval": "1h"}
    created = client.post("/sources", json=body).json()
    response = client.patch("/sources/py", json={"version": "3.12", "group": "python"})
    assert response.status_code == 200, response.text
    edited_view = response.json()
    assert (edited_view["version"], edited_view["group"]) == ("3.12", "python")
    assert edited_view["interval_seconds"] == 3600  # not given: as it was
    assert edited_view["created_at"] == created["created_at"]
    assert client.get("/sources/py").json() == edited_view
    assert "edit_registered py" in fake.calls

    response = client.patch("/sources/py", json={"interval": "off", "group": ""})
    assert response.status_code == 200, response.text
    assert (response.json()["interval_seconds"], response.json()["group"]) == (0, None)
    assert response.json()["version"] == "3.12"


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"version": ""}, 400, "version"),  # the group would have no version
        ({"version": "3 12"}, 400, "version"),
        ({"group": "py thon"}, 400, "group"),
        ({"interval": "10s"}, 400, "interval"),
        ({"location": "https://93.184.216.34/other/"}, 400, "location"),  # not editable
    ],
)
def test_an_edit_that_cannot_be_made_is_refused(
    client: TestClient[Any], body: dict[str, str], status: int, field: str
) -> None:
    registered = {"name": "py", "location": SITEMAP, "version": "3.11", "group": "python"}
    assert client.post("/sources", json=registered).status_code == 201
    response = client.patch("/sources/py", json=body)
    assert response.status_code == status, response.text
    assert field in response.text
    assert client.get("/sources/py").json()["version"] == "3.11"


def test_an_edit_of_an_unknown_source_is_404_and_needs_the_write_key(fake: FakeSynopsis) -> None:
    with _client(fake) as client:
        assert client.patch("/sources/nope", json={"version": "1"}).status_code == 404
    with _client(fake, api_read_keys="read-key-1", api_write_keys="write-key-1") as client:
        read = {"Authorization": "Bearer read-key-1"}
        response = client.patch("/sources/nope", json={"version": "1"}, headers=read)
        assert response.status_code == 403, response.text


def test_a_site_with_crawl_limits(client: TestClient[Any]) -> None:
    body = {"name": "book", "location": "https://93.184.216.34/book/", "crawl_depth": 2}
    response = client.post("/sources", json={**body, "max_pages": 50})
    assert response.status_code == 201, response.text
    assert {k: response.json()[k] for k in ("kind", "crawl_depth", "max_pages")} == {
        "kind": "site",
        "crawl_depth": 2,
        "max_pages": 50,
    }


def test_a_source_with_an_interval_is_due_at_once_then_an_interval_after_its_sync(
    client: TestClient[Any], fake: FakeSynopsis
) -> None:
    response = client.post(
        "/sources", json={"name": "guide", "location": SITEMAP, "interval": "1h30m"}
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert (body["interval_seconds"], body["next_sync_at"]) == (5400, body["created_at"])
    ended = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
    fake.registry.save(
        dataclasses.replace(fake.registry.require("guide"), synced_at=ended, attempted_at=ended)
    )
    listed = client.get("/sources/guide").json()
    assert (listed["attempted_at"], listed["next_sync_at"]) == (
        "2026-03-01T12:00:00Z",
        "2026-03-01T13:30:00Z",
    )


def test_the_list_shows_each_source_with_its_last_report(
    client: TestClient[Any], fake: FakeSynopsis
) -> None:
    report = SyncReport(unchanged=2, changed=1, added=1, removed=1, requests=5, not_modified=2)
    report.seconds = 0.25
    synced = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
    fake.registry.add(
        RegisteredSource(
            name="site",
            kind="sitemap",
            location=SITEMAP,
            created_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
            synced_at=synced,
            last_report=report,
            pages={"https://93.184.216.34/a": PageState(hash="x")},
        )
    )
    [listed] = client.get("/sources").json()
    assert (listed["pages"], listed["synced_at"]) == (1, "2026-03-01T12:00:00Z")
    assert listed["last_report"] == {
        "unchanged": 2,
        "changed": 1,
        "added": 1,
        "removed": 1,
        "requests": 5,
        "not_modified": 2,
        "llm_calls": 0,
        "embedded_chunks": 0,
        "completed": True,
        "failed": [],
        "seconds": 0.25,
        "summary": report.summary_line(),
    }


def test_a_name_registers_once(client: TestClient[Any]) -> None:
    assert client.post("/sources", json={"name": "guide", "location": SITEMAP}).status_code == 201
    again = client.post("/sources", json={"name": "guide", "location": SITEMAP + "?v=2"})
    assert again.status_code == 409
    assert again.json()["error"] == "SourceExistsError"
    assert again.json()["detail"] == "a source named 'guide' is registered already"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "a b", "location": SITEMAP}, "name"),
        ({"name": "-a", "location": SITEMAP}, "name"),
        ({"name": "a" * 65, "location": SITEMAP}, "name"),
        ({"name": "a", "location": SITEMAP, "kind": "svn"}, "kind"),
        ({"name": "a", "location": ""}, "location"),
        ({"name": "a", "location": "ftp://93.184.216.34/x", "kind": "sitemap"}, "location"),
        ({"name": "a", "location": "https://"}, "location"),
        ({"name": "a", "location": SITEMAP, "crawl_depth": 1}, "crawl_depth"),
        ({"name": "a", "location": SITEMAP, "crawl_depth": -1}, "crawl_depth"),
        ({"name": "a", "location": "https://93.184.216.34/", "crawl_depth": 6}, "crawl_depth"),
        ({"name": "a", "location": "https://93.184.216.34/", "max_pages": 1001}, "max_pages"),
        ({"name": "a", "location": SITEMAP, "extra": 1}, "extra"),
        ({"name": "a", "location": SITEMAP, "interval": "soon"}, "interval"),
        ({"name": "a", "location": SITEMAP, "interval": "30s"}, "interval"),
        ({"name": "a", "location": SITEMAP, "interval": 3600}, "interval"),
        ({"location": SITEMAP}, "name"),
    ],
)
def test_an_invalid_registration_is_400_naming_the_field(
    client: TestClient[Any], fake: FakeSynopsis, body: dict[str, Any], field: str
) -> None:
    response = client.post("/sources", json=body)
    assert (response.status_code, response.json().get("field")) == (400, field), response.text
    assert fake.registry.sources == {}


@pytest.mark.parametrize(
    "location",
    [
        "http://127.0.0.1:8000/sitemap.xml",
        "http://[::1]/docs/",
        "http://169.254.169.254/latest/sitemap.xml",
        "http://2130706433/sitemap.xml",
        "http://10.0.0.7/docs/",
    ],
)
def test_an_address_the_policy_refuses_is_400_and_not_registered(
    client: TestClient[Any], fake: FakeSynopsis, location: str
) -> None:
    response = client.post("/sources", json={"name": "a", "location": location})
    assert (response.status_code, response.json()["error"]) == (400, "UnsafeUrlError")
    assert fake.registry.sources == {}


def test_fetch_allow_lets_an_internal_host_be_registered(fake: FakeSynopsis) -> None:
    with _client(fake, fetch_allow="127.0.0.1") as client:
        response = client.post(
            "/sources", json={"name": "a", "location": "http://127.0.0.1:8000/sitemap.xml"}
        )
    assert response.status_code == 201, response.text


def test_a_git_repository_is_registered_under_an_allowed_root_only(
    fake: FakeSynopsis, tmp_path: Path
) -> None:
    allowed = tmp_path / "allowed"
    repo = Repo(allowed / "repo")
    repo.commit({"docs/a.md": "# A\n\nText.\n"})
    body = {"name": "g", "location": str(repo.path), "kind": "git", "subpath": "docs"}
    with _client(fake) as client:  # no root configured: no repository either
        refused = client.post("/sources", json=body)
    assert (refused.status_code, refused.json()["field"]) == (400, "location")
    with _client(fake, api_source_directories=str(allowed)) as client:
        ok = client.post("/sources", json={**body, "ref": "main"})
        no_ref = client.post("/sources", json={**body, "name": "h", "ref": "gone"})
    assert ok.status_code == 201, ok.text
    assert {k: ok.json()[k] for k in ("kind", "ref", "subpath", "commit")} == {
        "kind": "git",
        "ref": "main",
        "subpath": "docs",
        "commit": None,
    }
    assert (no_ref.status_code, no_ref.json()["field"]) == (400, "ref")


def test_a_directory_is_refused_unless_under_an_allowed_root(
    fake: FakeSynopsis, tmp_path: Path
) -> None:
    allowed, other = tmp_path / "allowed", tmp_path / "other"
    (allowed / "guide").mkdir(parents=True)
    other.mkdir()
    (allowed / "escape").symlink_to(other)
    with _client(fake) as client:  # no root configured: no directory
        refused = client.post("/sources", json={"name": "g", "location": str(allowed / "guide")})
    assert (refused.status_code, refused.json()["field"]) == (400, "location")
    assert "no directory is allowed" in refused.json()["detail"]

    with _client(fake, api_source_directories=str(allowed)) as client:
        ok = client.post("/sources", json={"name": "g", "location": str(allowed / "guide")})
        outside = client.post("/sources", json={"name": "o", "location": str(other)})
        linked = client.post("/sources", json={"name": "l", "location": str(allowed / "escape")})
        relative = client.post("/sources", json={"name": "r", "location": "guide"})
        missing = client.post("/sources", json={"name": "m", "location": str(allowed / "gone")})
    assert (ok.status_code, ok.json()["kind"], ok.json()["location"]) == (
        201,
        "directory",
        str(allowed / "guide"),
    )
    for response in (outside, linked, relative, missing):
        assert (response.status_code, response.json()["field"]) == (400, "location")
    # Outside the roots, nothing says whether the path exists.
    assert "not under a directory" in linked.json()["detail"]
    assert "is not a directory" in missing.json()["detail"]
    assert sorted(fake.registry.sources) == ["g"]


def test_remove_forgets_the_source_and_its_pages(
    client: TestClient[Any], fake: FakeSynopsis
) -> None:
    pages = {f"https://93.184.216.34/{n}": PageState(hash=str(n)) for n in range(3)}
    for name in ("a", "b"):
        fake.registry.add(
            RegisteredSource(
                name=name,
                kind="sitemap",
                location=SITEMAP,
                created_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
                pages=pages,
            )
        )
    removed = client.delete("/sources/a")
    kept = client.delete("/sources/b", params={"keep_documents": "true"})
    assert (removed.status_code, removed.json()) == (
        200,
        {"name": "a", "pages_removed": 3, "documents_kept": False},
    )
    assert (kept.status_code, kept.json()) == (
        200,
        {"name": "b", "pages_removed": 0, "documents_kept": True},
    )
    assert fake.registry.sources == {}


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/sources/nope"), ("DELETE", "/sources/nope")],
)
def test_an_unknown_source_is_404(client: TestClient[Any], method: str, path: str) -> None:
    response = client.request(method, path)
    assert (response.status_code, response.json()["error"]) == (404, "SourceNotFoundError")


def test_a_sync_needs_the_job_workers(client: TestClient[Any], fake: FakeSynopsis) -> None:
    """The fake core has no job queue: a sync is a clean 503 (the real one is 202 with the
    job, tests/service/sources/test_sync_integration.py)."""
    fake.registry.add(
        RegisteredSource(
            name="a",
            kind="sitemap",
            location=SITEMAP,
            created_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        )
    )
    response = client.post("/sources/a/sync")
    assert (response.status_code, response.json()["error"]) == (503, "JobsUnavailableError")
