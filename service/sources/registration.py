"""What may be registered: a source's name, kind and location checked once, for the CLI
and the HTTP API alike (`new_source`).

A name is what `synopsis sources sync NAME` and `/sources/{name}` take, so it is kept to
letters, digits, `.`, `_` and `-` (at most 64, starting with a letter or digit). The kind
is found from the location when it is `auto`: a directory when the location is one, a
sitemap for an http(s) URL whose path ends in `.xml`, an llms.txt index for one whose
path ends in `/llms.txt`, else a site to crawl (a `git` repository is never guessed: a
repository registered as a directory is read from its working tree).

Where a source may point is the caller's policy: the CLI registers any directory and
URL; the HTTP API passes `directories` (the roots a directory must be under, none by
default) and checks URLs against its address policy itself.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path
from typing import cast
from urllib.parse import urlsplit

from loaders.git import check_ref, check_subpath, resolve_commit
from service.errors import InvalidSourceError
from service.index.records import now
from service.index.versions import check_version
from service.sources.records import SOURCE_KINDS, RegisteredSource, SourceKind
from service.sources.schedule import parse_interval
from splitters.base.errors import LoaderError

__all__ = ["NAME_PATTERN", "check_name", "edited", "new_source"]

#: A registered source's name.
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
_NAME = re.compile(NAME_PATTERN)


def check_name(name: str) -> str:
    """`name` if it may name a registered source; `InvalidSourceError` (field `name`) if not."""
    if not _NAME.match(name):
        raise InvalidSourceError(
            f"{name!r} cannot name a source: use 1 to 64 letters, digits, '.', '_' or '-', "
            "starting with a letter or a digit",
            field="name",
        )
    return name


def new_source(
    name: str,
    location: str,
    *,
    kind: str = "auto",
    crawl_depth: int = 0,
    max_pages: int = 0,
    interval: str = "",
    version: str = "",
    group: str = "",
    ref: str = "",
    subpath: str = "",
    directories: Sequence[Path] | None = None,
) -> RegisteredSource:
    """The source to register, checked: its name, its kind (resolved from `auto`) and its
    location (a directory's resolved absolute path, or the URL as given), and its sync
    interval (`service.sources.schedule.parse_interval`; empty: synced only when asked),
    its `version` label and its `group` of versions (`service.index.versions`; a group
    needs a version; both empty: none).

    A `git` source is a local repository (`location`), synced at `ref` (a branch, a tag
    or a commit; empty: HEAD) under `subpath` (empty: the whole tree); the ref must name a
    commit now.

    `directories`: when given, a directory (or repository) source must be one of them or
    under one (an empty list refuses every directory). `InvalidSourceError` names the
    field at fault.
    """
    check_name(name)
    interval_seconds = parse_interval(interval)
    _check_labels(version, group)
    if kind != "auto" and kind not in SOURCE_KINDS:
        raise InvalidSourceError(
            f"unknown kind {kind!r}: one of auto, {', '.join(SOURCE_KINDS)}", field="kind"
        )
    if crawl_depth < 0 or max_pages < 0:
        field = "crawl_depth" if crawl_depth < 0 else "max_pages"
        raise InvalidSourceError(f"{field} cannot be negative", field=field)
    is_url = location.lower().startswith(("http://", "https://"))
    if kind == "auto":
        kind = _url_kind(urlsplit(location).path.lower()) if is_url else "directory"
    if kind in ("directory", "git"):
        where = _directory(location, directories)
    elif not is_url:
        raise InvalidSourceError(
            f"a {kind} source is an http(s) URL, not {location!r}", field="location"
        )
    elif not urlsplit(location).hostname:
        raise InvalidSourceError(f"{location!r} names no host", field="location")
    else:
        where = location
    if kind != "site" and (crawl_depth or max_pages):
        raise InvalidSourceError(
            "crawl_depth and max_pages apply to a site source only", field="crawl_depth"
        )
    if kind != "git" and (ref or subpath):
        raise InvalidSourceError("ref and subpath apply to a git source only", field="ref")
    if kind == "git":
        ref, subpath = _git_checked(where, ref, subpath)
    return RegisteredSource(
        name=name,
        kind=cast("SourceKind", kind),
        location=where,
        crawl_depth=crawl_depth,
        max_pages=max_pages,
        ref=ref,
        subpath=subpath,
        interval_seconds=interval_seconds,
        version=version,
        group=group,
        created_at=now(),
    )


def edited(
    source: RegisteredSource,
    *,
    interval: str | None = None,
    version: str | None = None,
    group: str | None = None,
) -> RegisteredSource:
    """`source` with another sync interval, version label or group (None: as it is; empty:
    none), checked as `new_source` checks them. A new version or group sets
    `relabel_pending`: its indexed pages are to be relabelled."""
    interval_seconds = source.interval_seconds if interval is None else parse_interval(interval)
    new_version = source.version if version is None else version
    new_group = source.group if group is None else group
    _check_labels(new_version, new_group)
    relabel = (new_version, new_group) != (source.version, source.group)
    return dataclasses.replace(
        source,
        interval_seconds=interval_seconds,
        version=new_version,
        group=new_group,
        relabel_pending=source.relabel_pending or relabel,
    )


def _check_labels(version: str, group: str) -> None:
    check_version(version)
    if group:
        if not _NAME.match(group):
            raise InvalidSourceError(
                f"{group!r} cannot name a group: use 1 to 64 letters, digits, '.', '_' or "
                "'-', starting with a letter or a digit",
                field="group",
            )
        if not version:
            # Which version of the group would it be? Its chunks would never be the latest.
            raise InvalidSourceError("a source in a group needs a version", field="version")


def _git_checked(repository: str, ref: str, subpath: str) -> tuple[str, str]:
    try:
        check_ref(ref or "HEAD")
    except ValueError as error:
        raise InvalidSourceError(str(error), field="ref") from None
    try:
        subpath = check_subpath(subpath)
    except ValueError as error:
        raise InvalidSourceError(str(error), field="subpath") from None
    try:
        resolve_commit(repository, ref or "HEAD")
    except LoaderError as error:
        field = "ref" if "names no commit" in str(error) else "location"
        raise InvalidSourceError(str(error), field=field) from None
    return ref, subpath


def _directory(location: str, roots: Sequence[Path] | None) -> str:
    if roots is not None and not roots:
        raise InvalidSourceError(
            "a directory cannot be registered here (no directory is allowed)", field="location"
        )
    path = Path(location).expanduser()
    if roots is not None and not path.is_absolute():
        raise InvalidSourceError(f"{location!r} is not an absolute path", field="location")
    resolved = path.resolve()
    # Checked before the path is looked at: a caller learns nothing of other directories.
    if roots is not None and not any(resolved.is_relative_to(root.resolve()) for root in roots):
        raise InvalidSourceError(
            f"{location} is not under a directory sources may be registered from",
            field="location",
        )
    if not resolved.is_dir():
        raise InvalidSourceError(f"{location} is not a directory", field="location")
    return str(resolved)


def _url_kind(path: str) -> SourceKind:
    if path.endswith(".xml"):
        return "sitemap"
    if path.endswith("/llms.txt"):
        return "llms-txt"
    return "site"
