"""A git repository at a commit (`loaders.git`): its files in `iter_files` order, read
from the commit and not from the working tree; refs and sub-paths checked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from loaders import LoaderError, LoadOptions
from loaders.files import iter_files, load_file
from loaders.git import check_ref, check_subpath, file_documents, resolve_commit, tree_files
from tests.service.sources.repo import Repo

FILES = {
    "README.md": "# Readme\n\nAt the top.\n",
    "docs/a.md": "# A\n\nFirst.\n",
    "docs/a/b.md": "# B\n\nNested under a.\n",
    "docs/a.b.html": "<html><body><h1>AB</h1><p>An HTML page.</p></body></html>",
    "docs/Z.txt": "Upper case sorts first.\n",
    "docs/.hidden/c.md": "# C\n\nHidden.\n",
    "docs/_static/d.md": "# D\n\nA build artefact.\n",
    "docs/e.png": "not a document",
    "docs/notes.rst": "not a loaded type",
}


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.commit(FILES)
    os.symlink("a.md", repo.path / "docs" / "link.md")
    repo.commit({})
    return repo


def test_tree_files_are_the_files_iter_files_walks_in_its_order(repo: Repo) -> None:
    commit = resolve_commit(str(repo.path), "HEAD")
    # A symbolic link is a blob holding its target's path: left out, where a directory's
    # walk follows a link to a file.
    walked = [str(p.relative_to(repo.path)) for p in iter_files(repo.path) if not p.is_symlink()]
    listed = [f.path for f in tree_files(str(repo.path), commit)]
    assert listed == walked
    assert listed == ["README.md", "docs/Z.txt", "docs/a/b.md", "docs/a.b.html", "docs/a.md"]
    under = [f.path for f in tree_files(str(repo.path), commit, "docs/a")]
    assert under == ["docs/a/b.md"]


def test_files_are_read_from_the_commit_not_the_working_tree(repo: Repo) -> None:
    first = resolve_commit(str(repo.path), "HEAD")
    repo.commit({"docs/a.md": "# A\n\nSecond.\n"})
    repo.write({"docs/a.md": "# A\n\nNot committed.\n"})
    [old] = [f for f in tree_files(str(repo.path), first) if f.path == "docs/a.md"]
    [new] = [f for f in tree_files(str(repo.path), "HEAD") if f.path == "docs/a.md"]
    assert old.blob != new.blob
    options = LoadOptions()
    [document] = file_documents(str(repo.path), old, source="s", options=options)
    assert "First." in document.page_content
    [document] = file_documents(str(repo.path), new, source="s", options=options)
    assert "Second." in document.page_content
    # the same Markdown as the file loaded from disk, once it is the committed one
    repo.write({"docs/a.md": "# A\n\nSecond.\n"})
    [on_disk] = load_file(repo.path / "docs" / "a.md", options=options)
    assert document.page_content == on_disk.page_content


def test_a_file_over_the_size_cap_is_refused(repo: Repo) -> None:
    [file] = [f for f in tree_files(str(repo.path), "HEAD") if f.path == "README.md"]
    with pytest.raises(LoaderError, match="size cap"):
        file_documents(str(repo.path), file, source="s", options=LoadOptions(max_bytes=5))


def test_refs_resolve_to_commits(repo: Repo) -> None:
    head = repo.git("rev-parse", "HEAD")
    repo.git("tag", "v1")
    repo.git("branch", "stable")
    for ref in ("HEAD", "main", "v1", "stable", head, head[:10]):
        assert resolve_commit(str(repo.path), ref) == head
    with pytest.raises(LoaderError, match="names no commit"):
        resolve_commit(str(repo.path), "nope")


def test_a_directory_that_is_no_repository_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LoaderError, match="git rev-parse"):
        resolve_commit(str(tmp_path), "HEAD")


@pytest.mark.parametrize("ref", ["HEAD", "main", "v1.2", "release/3.11", "a1b2c3d"])
def test_a_ref_git_may_be_asked_for(ref: str) -> None:
    assert check_ref(ref) == ref


@pytest.mark.parametrize("ref", ["", "-x", "--output=f", "a..b", "a b", "HEAD~1", "a:b", "a^"])
def test_what_could_be_read_as_an_option_or_a_range_is_no_ref(ref: str) -> None:
    with pytest.raises(ValueError, match="not a ref"):
        check_ref(ref)


@pytest.mark.parametrize(
    ("subpath", "expected"),
    [("", ""), (".", ""), ("docs", "docs"), ("docs/", "docs"), ("a/./b", "a/b")],
)
def test_a_subpath_is_normalized(subpath: str, expected: str) -> None:
    assert check_subpath(subpath) == expected


@pytest.mark.parametrize("subpath", ["..", "../x", "a/../../x", "/etc", "/"])
def test_a_subpath_outside_the_repository_is_refused(subpath: str) -> None:
    with pytest.raises(ValueError, match="not a path inside"):
        check_subpath(subpath)
