"""What may be registered (`service.sources.registration`): names, kinds found from the
location, and where a directory may be."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.errors import InvalidSourceError
from service.sources import check_name, edited, new_source
from tests.service.sources.repo import Repo


@pytest.mark.parametrize("name", ["a", "guide", "Py3.11-docs_v2", "0", "a" * 64])
def test_a_name_of_letters_digits_dots_underscores_dashes(name: str) -> None:
    assert check_name(name) == name


@pytest.mark.parametrize("name", ["", "a b", "-a", ".a", "_a", "a/b", "a?b", "é", "a" * 65])
def test_other_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidSourceError) as raised:
        check_name(name)
    assert raised.value.field == "name"


@pytest.mark.parametrize(
    ("location", "kind"),
    [
        ("https://docs.example/sitemap.xml", "sitemap"),
        ("HTTP://docs.example/docs/SITEMAP.XML?x=1", "sitemap"),
        ("https://docs.example/docs/", "site"),
        ("https://docs.example/feed.xml.html", "site"),
        ("https://docs.example/llms.txt", "llms-txt"),
        ("https://docs.example/v2/LLMS.TXT", "llms-txt"),
        ("https://docs.example/my-llms.txt", "site"),
        ("https://docs.example/llms-full.txt", "site"),
    ],
)
def test_auto_finds_the_kind_of_a_url(location: str, kind: str) -> None:
    source = new_source("a", location)
    assert (source.kind, source.location) == (kind, location)


def test_auto_takes_a_path_for_a_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "docs").mkdir()
    monkeypatch.chdir(tmp_path)
    source = new_source("a", "docs")
    assert (source.kind, source.location) == ("directory", str(tmp_path / "docs"))


@pytest.mark.parametrize(
    ("location", "options", "field", "message"),
    [
        ("https://docs.example/", {"kind": "svn"}, "kind", "unknown kind 'svn'"),
        ("/nonexistent/docs", {}, "location", "/nonexistent/docs is not a directory"),
        ("docs/", {"kind": "sitemap"}, "location", "a sitemap source is an http(s) URL"),
        ("ftp://docs.example/", {"kind": "site"}, "location", "a site source is an http(s) URL"),
        ("https:///docs", {}, "location", "names no host"),
        ("https://docs.example/s.xml", {"crawl_depth": 1}, "crawl_depth", "site source only"),
        ("https://docs.example/", {"max_pages": -1}, "max_pages", "cannot be negative"),
    ],
)
def test_what_cannot_be_registered_says_which_field(
    location: str, options: dict[str, object], field: str, message: str
) -> None:
    with pytest.raises(InvalidSourceError) as raised:
        new_source("a", location, **options)  # type: ignore[arg-type]
    assert raised.value.field == field
    assert message in str(raised.value)


def test_a_site_keeps_its_crawl_limits() -> None:
    source = new_source("a", "https://docs.example/", crawl_depth=2, max_pages=30)
    assert (source.kind, source.crawl_depth, source.max_pages) == ("site", 2, 30)


def test_directories_bound_where_a_directory_may_be(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "guide").mkdir(parents=True)
    outside.mkdir()
    (root / "link").symlink_to(outside)
    assert new_source("a", str(root), directories=[root]).location == str(root)
    assert new_source("a", str(root / "guide"), directories=[root]).location == str(root / "guide")
    for location in (str(outside), str(root / "link"), str(root / ".." / "outside")):
        with pytest.raises(InvalidSourceError, match="not under a directory"):
            new_source("a", location, directories=[root])
    with pytest.raises(InvalidSourceError, match="not an absolute path"):
        new_source("a", "guide", directories=[root])
    with pytest.raises(InvalidSourceError, match="no directory is allowed"):
        new_source("a", str(root), directories=[])
    # URLs are the caller's to check (the API's address policy).
    assert new_source("a", "http://127.0.0.1/s.xml", directories=[]).kind == "sitemap"


def test_a_source_may_be_a_version_of_a_group() -> None:
    source = new_source("py312", "https://docs.example/3.12/", version="3.12", group="python")
    assert (source.version, source.group) == ("3.12", "python")
    assert new_source("notes", "https://docs.example/", version="2").group == ""


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"group": "python"}, "version"),  # which version of the group would it be?
        ({"version": "3 12"}, "version"),
        ({"version": "*"}, "version"),
        ({"version": "3.12", "group": "py thon"}, "group"),
        ({"version": "3.12", "group": "-py"}, "group"),
    ],
)
def test_a_version_or_group_that_cannot_be_registered(options: dict[str, str], field: str) -> None:
    with pytest.raises(InvalidSourceError) as raised:
        new_source("a", "https://docs.example/", **options)  # type: ignore[arg-type]
    assert raised.value.field == field


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, (3600, "1.0", "docs", False)),
        ({"interval": "off"}, (0, "1.0", "docs", False)),
        ({"interval": "2h"}, (7200, "1.0", "docs", False)),
        ({"version": "1.0", "group": "docs"}, (3600, "1.0", "docs", False)),
        ({"version": "1.1"}, (3600, "1.1", "docs", True)),
        ({"group": ""}, (3600, "1.0", "", True)),
        ({"version": "", "group": ""}, (3600, "", "", True)),
        ({"group": "other"}, (3600, "1.0", "other", True)),
    ],
)
def test_an_edit_changes_what_it_is_given(
    changes: dict[str, str], expected: tuple[int, str, str, bool]
) -> None:
    source = new_source("a", "https://docs.example/", interval="1h", version="1.0", group="docs")
    changed = edited(source, **changes)
    assert (
        changed.interval_seconds,
        changed.version,
        changed.group,
        changed.relabel_pending,
    ) == expected
    assert (changed.name, changed.location, changed.created_at) == (
        source.name,
        source.location,
        source.created_at,
    )


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"version": ""}, "version"),  # the group would have no version
        ({"version": "1 1"}, "version"),
        ({"group": "a group"}, "group"),
        ({"interval": "30s"}, "interval"),
        ({"interval": "soon"}, "interval"),
    ],
)
def test_an_edit_is_checked_as_a_registration_is(changes: dict[str, str], field: str) -> None:
    source = new_source("a", "https://docs.example/", version="1.0", group="docs")
    with pytest.raises(InvalidSourceError) as raised:
        edited(source, **changes)
    assert raised.value.field == field


def test_a_pending_relabel_stays_pending_through_another_edit() -> None:
    source = edited(new_source("a", "https://docs.example/", version="1.0"), version="2.0")
    assert edited(source, interval="1h").relabel_pending
    assert edited(source, version="1.0").relabel_pending  # its pages may carry either


def test_a_git_source_is_a_repository_with_a_ref_and_a_subpath(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({"docs/a.md": "# A\n\nText.\n"})
    repo.git("tag", "v1")
    source = new_source("g", str(repo.path), kind="git", ref="v1", subpath="docs/")
    assert (source.kind, source.location, source.ref, source.subpath) == (
        "git",
        str(repo.path),
        "v1",
        "docs",
    )
    assert new_source("h", str(repo.path)).kind == "directory"  # never guessed
    assert new_source("i", str(repo.path), kind="git").ref == ""  # HEAD


@pytest.mark.parametrize(
    ("options", "field", "message"),
    [
        ({"ref": "nope"}, "ref", "names no commit"),
        ({"ref": "--upload-pack=x"}, "ref", "not a ref"),
        ({"subpath": "../x"}, "subpath", "not a path inside"),
        ({"kind": "directory", "ref": "main"}, "ref", "git source only"),
    ],
)
def test_what_cannot_be_registered_as_a_git_source(
    tmp_path: Path, options: dict[str, str], field: str, message: str
) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({"a.md": "# A\n\nText.\n"})
    with pytest.raises(InvalidSourceError, match=message) as raised:
        new_source("g", str(repo.path), **{"kind": "git", **options})  # type: ignore[arg-type]
    assert raised.value.field == field


def test_a_directory_that_is_no_repository_is_no_git_source(tmp_path: Path) -> None:
    with pytest.raises(InvalidSourceError) as raised:
        new_source("g", str(tmp_path), kind="git")
    assert raised.value.field == "location"
