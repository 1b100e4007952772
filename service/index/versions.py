"""Versions of the documentation: the labels chunks carry, how they sort, and which
version a search reads when it names none.

Every chunk and summary stores the `version` label of the source it came from (empty:
none) and its `version_group`: the documentation it is a version of (a registered
source's `group`; empty: none). Two versions of the same docs live side by side as two
registered sources of one group, each with its own location and label, each synced on
its own.

A search with a `version` reads only the chunks with that label (`*`: every version).
A search without one reads, in each group, the chunks of the group's latest version
only, and every chunk that belongs to no group. The latest version of a group is the
highest label (`version_order`) among its registered sources that completed a sync:
a version registered but not synced yet does not hide the one before it. A process keeps
what it read for `LATEST_RECHECK_SECONDS` (`LatestVersions`).

`version_order` compares labels part by part, numbers as numbers: `3.9 < 3.10 < 3.11`,
`v2 < v10`, `2024.1 < 2024.12`. A label that extends another sorts after it
(`3.11 < 3.11.1`, and also `2.0 < 2.0rc1`: label pre-releases so that they sort as you
mean, or keep them out of the group).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping

from langchain_core.documents import Document

from service.errors import InvalidSourceError

__all__ = [
    "ALL_VERSIONS",
    "LATEST_RECHECK_SECONDS",
    "VERSION",
    "VERSION_FILTER_PATTERN",
    "VERSION_GROUP",
    "VERSION_PATTERN",
    "LatestVersions",
    "admits",
    "check_version",
    "labelled",
    "latest_versions",
    "version_order",
]

#: Metadata key of a document (and property of a chunk or summary): its version label.
VERSION = "version"
#: Metadata key and property: the group of versions it belongs to (empty: none).
VERSION_GROUP = "version_group"
#: The `version` filter that reads every version.
ALL_VERSIONS = "*"

#: A version label: letters, digits, `.`, `_`, `-` and `+` (at most 64), starting with a
#: letter or digit.
VERSION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$"
#: What a `version` filter may be: a label, or `*`.
VERSION_FILTER_PATTERN = r"^(?:[A-Za-z0-9][A-Za-z0-9._+-]{0,63}|\*)$"
_VERSION = re.compile(VERSION_PATTERN)
_PARTS = re.compile(r"\d+|[^\d.\-_+]+")


def check_version(label: str, *, field: str = "version") -> str:
    """`label` if it may label a version (empty: none); `InvalidSourceError` naming
    `field` if not."""
    if label and not _VERSION.match(label):
        raise InvalidSourceError(
            f"{label!r} cannot label a version: use 1 to 64 letters, digits, '.', '_', '-' "
            "or '+', starting with a letter or a digit",
            field=field,
        )
    return label


def version_order(label: str) -> tuple[tuple[int, int, str], ...]:
    """The sort key of a version label: its parts in order, numbers compared as numbers
    (and before words at the same place), case ignored; separators do not count."""
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part.lower())
        for part in _PARTS.findall(label)
    )


def latest_versions(labelled_groups: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The latest version of each group, from (group, version) pairs; pairs without a
    group or a version are left out. Equal keys (`3.1` and `3-1`): the first label wins."""
    latest: dict[str, str] = {}
    for group, version in labelled_groups:
        if not group or not version:
            continue
        known = latest.get(group)
        if known is None or version_order(version) > version_order(known):
            latest[group] = version
    return dict(sorted(latest.items()))


#: How long a process trusts its reading of the registered sources' latest versions (a
#: sync in another process changes them; this process's own syncs, edits and removals
#: `forget` them at once).
LATEST_RECHECK_SECONDS = 10.0


class LatestVersions:
    """The latest version of each group (`latest_versions`) of the (group, version) pairs
    that `read` returns, as last read: read again after `recheck_seconds`, or after
    `forget`."""

    def __init__(
        self,
        read: Callable[[], Iterable[tuple[str, str]]],
        *,
        recheck_seconds: float = LATEST_RECHECK_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._read = read
        self.recheck_seconds = recheck_seconds
        self._clock = clock
        self._seen: tuple[float, tuple[tuple[str, str], ...]] | None = None

    def get(self) -> dict[str, str]:
        """The latest versions, read again when the last reading is `recheck_seconds` old."""
        clock = self._clock()
        if self._seen is not None and clock - self._seen[0] < self.recheck_seconds:
            return dict(self._seen[1])
        latest = latest_versions(self._read())
        self._seen = (clock, tuple(latest.items()))
        return latest

    def forget(self) -> None:
        """Read them again on the next `get` (this process changed them)."""
        self._seen = None


def admits(
    properties: Mapping[str, object], *, version: str | None, latest: Mapping[str, str]
) -> bool:
    """Whether a chunk with these properties is read by a search with `version` (None:
    the latest of each group, as `latest` maps them). What the store's filter does."""
    label = str(properties.get(VERSION) or "")
    if version is not None:
        return version in (ALL_VERSIONS, label)
    group = str(properties.get(VERSION_GROUP) or "")
    return group not in latest or label == latest[group]


def labelled(documents: Iterable[Document], *, version: str, group: str = "") -> Iterator[Document]:
    """`documents` with their version label and group set in their metadata."""
    for document in documents:
        document.metadata[VERSION] = version
        document.metadata[VERSION_GROUP] = group
        yield document
