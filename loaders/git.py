"""A local git repository at a commit: its files as `iter_files` would walk them, read
from git's object store (not from the working tree), with the `git` command line.

`resolve_commit` turns a ref (a branch, a tag, a commit, `HEAD`) into the commit it
names now; `tree_files` lists the loadable files of the commit's tree under a sub-path,
each with its blob id, in the order `loaders.files.iter_files` walks a directory (names
sorted at every level, hidden entries and `SKIPPED_DIRECTORIES` left out; unlike a walk
of a directory, symbolic links are left out too, as are submodules); `file_documents`
converts one of them. Two commits' blob ids say which files differ between them without
reading a file: what `git diff --raw` compares.

Every failure (no repository, a ref that names no commit, a file git cannot give, a file
over the size cap) is a `LoaderError`.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from dataclasses import dataclass

from langchain_core.documents import Document

from loaders.files import SKIPPED_DIRECTORIES
from loaders.formats import CONTENT_TYPES_BY_SUFFIX, convert
from loaders.options import LoadOptions
from splitters.base.errors import LoaderError

__all__ = [
    "GitFile",
    "check_ref",
    "check_subpath",
    "file_documents",
    "resolve_commit",
    "tree_files",
]

_TIMEOUT = 60.0
_REGULAR_MODES = frozenset({"100644", "100755"})


@dataclass(frozen=True, slots=True)
class GitFile:
    """A file of a commit's tree: its path from the repository's root, and its blob id."""

    path: str
    blob: str


def check_ref(ref: str) -> str:
    """`ref` if git may be asked for it; `ValueError` for what could be read as an option
    or a range (a leading `-`, `..`, whitespace or control characters)."""
    if (
        not ref
        or ref.startswith("-")
        or ".." in ref
        or any(c.isspace() or ord(c) < 32 or c in "~^:?*[\\" for c in ref)
    ):
        raise ValueError(f"{ref!r} is not a ref: name a branch, a tag, a commit or HEAD")
    return ref


def check_subpath(subpath: str) -> str:
    """`subpath` normalized (`docs/guide`, empty for the whole tree); `ValueError` for an
    absolute path or one that leaves the repository."""
    cleaned = posixpath.normpath(subpath.strip().strip("/")) if subpath.strip("/ ") else ""
    if cleaned == ".":
        cleaned = ""
    if subpath.startswith("/") or cleaned == ".." or cleaned.startswith("../"):
        raise ValueError(f"{subpath!r} is not a path inside the repository")
    return cleaned


def _git(repository: str, *args: str, source: str) -> bytes:
    command = ["git", "-C", repository, "-c", "core.quotePath=false", *args]
    # Nothing prompts, and no pager or editor is started.
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "GIT_EDITOR": "true"}
    try:
        done = subprocess.run(command, capture_output=True, timeout=_TIMEOUT, env=env, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LoaderError(f"git failed ({type(exc).__name__}: {exc})", source=source) from exc
    if done.returncode != 0:
        # The first line says what is wrong ("fatal: not a git repository ..."); the rest
        # are hints.
        message = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        why = message[0].removeprefix("fatal: ") if message else f"exit {done.returncode}"
        raise LoaderError(f"git {args[0]}: {why}", source=source)
    return done.stdout


def resolve_commit(repository: str, ref: str) -> str:
    """The id of the commit `ref` names in `repository` now."""
    check_ref(ref)
    where = f"{repository}@{ref}"
    _git(repository, "rev-parse", "--git-dir", source=where)  # a repository at all?
    try:
        out = _git(
            repository,
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            f"{ref}^{{commit}}",
            source=where,
        )
    except LoaderError:
        raise LoaderError(f"{ref!r} names no commit of the repository", source=where) from None
    return out.decode().strip()


def tree_files(repository: str, commit: str, subpath: str = "") -> list[GitFile]:
    """The loadable files of `commit`'s tree under `subpath`, in `iter_files` order."""
    args = ["ls-tree", "-r", "-z", "--full-tree", commit]
    if subpath:
        args += ["--", subpath]
    out = _git(repository, *args, source=f"{repository}@{commit}")
    files: list[GitFile] = []
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        mode, kind, blob = meta.decode().split()
        path = raw_path.decode("utf-8", errors="surrogateescape")
        if kind != "blob" or mode not in _REGULAR_MODES:
            continue  # symbolic links, submodules
        parts = path.split("/")
        if subpath:
            if path != subpath and not path.startswith(subpath + "/"):
                continue
            parts = path[len(subpath) + 1 :].split("/") if path != subpath else parts[-1:]
        if any(part.startswith(".") for part in parts) or any(
            part in SKIPPED_DIRECTORIES for part in parts[:-1]
        ):
            continue
        if posixpath.splitext(parts[-1])[1].lower() not in CONTENT_TYPES_BY_SUFFIX:
            continue
        files.append(GitFile(path=path, blob=blob))
    return sorted(files, key=lambda f: f.path.split("/"))


def file_documents(
    repository: str, file: GitFile, *, source: str, options: LoadOptions
) -> list[Document]:
    """The Documents of one file of a tree (its blob), indexed under `source`."""
    size = int(_git(repository, "cat-file", "-s", file.blob, source=source).decode().strip())
    if size > options.max_bytes:
        raise LoaderError(
            f"{size} bytes exceeds the size cap of {options.max_bytes} bytes", source=source
        )
    data = _git(repository, "cat-file", "blob", file.blob, source=source)
    name = posixpath.basename(file.path)
    content_type = CONTENT_TYPES_BY_SUFFIX[posixpath.splitext(name)[1].lower()]
    return list(
        convert(
            data,
            content_type=content_type,
            source=source,
            fallback_title=posixpath.splitext(name)[0],
            options=options,
        )
    )
