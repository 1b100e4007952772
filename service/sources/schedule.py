"""When a registered source with an interval is due for a sync (`due_slot`), and how an
interval is written (`parse_interval`: `90s`, `15m`, `1h`, `1d`, `1h30m`, or seconds).

A source is due one interval after its last sync ended (`attempted_at`: the end of the
last sync whose states were stored, completed or not; for a completed one that is
`synced_at`, so the interval is measured from the last completed sync, and a failed sync
is tried again one interval after it failed). A source never synced is due at once.

Each due moment is one *slot*: the due time, moved on by whole intervals while none of
them ran (a source due for ten intervals gets one sync, not ten). The job workers
(`service.jobs.schedule`) name the job of a slot by the slot (`sync_job_id`), so every
replica that finds the same source due names the same job, and Weaviate stores it once.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid

from service.errors import InvalidSourceError
from service.index.identity import NAMESPACE
from service.sources.records import RegisteredSource

__all__ = [
    "MIN_INTERVAL_SECONDS",
    "due_slot",
    "format_interval",
    "next_sync_at",
    "parse_interval",
    "sync_job_id",
]

#: The shortest interval: a sync of a site is many requests.
MIN_INTERVAL_SECONDS = 60

_UNITS = {"d": 86_400, "h": 3_600, "m": 60, "s": 1}
_INTERVAL = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def parse_interval(text: str) -> int:
    """Seconds of an interval written `1d`, `6h`, `1h30m`, `15m`, `90s` or `3600`; 0 for
    `0`, `off` or nothing (no schedule). `InvalidSourceError` (field `interval`) for
    anything else, or less than a minute."""
    value = text.strip().lower()
    if value in ("", "0", "off", "none"):
        return 0
    if value.isdigit():
        seconds = int(value)
    else:
        match = _INTERVAL.match(value)
        if match is None or not any(match.groups()):
            raise InvalidSourceError(
                f"{text!r} is not an interval: write it as 1d, 6h, 1h30m, 15m, 90s or "
                "seconds (0 or off: none)",
                field="interval",
            )
        seconds = sum(
            int(part) * unit
            for part, unit in zip(match.groups(), _UNITS.values(), strict=True)
            if part
        )
    if 0 < seconds < MIN_INTERVAL_SECONDS:
        raise InvalidSourceError(
            f"an interval is at least {MIN_INTERVAL_SECONDS} s, not {seconds} s", field="interval"
        )
    return seconds


def format_interval(seconds: int) -> str:
    """`seconds` as `parse_interval` reads it (`1h30m`); `off` for 0."""
    if seconds <= 0:
        return "off"
    parts = []
    for unit, size in _UNITS.items():
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)


def due_slot(source: RegisteredSource, at: dt.datetime) -> dt.datetime | None:
    """The slot of `source`'s sync due at `at`, or None when it has no interval or is not
    due yet (see the module docstring)."""
    due = next_sync_at(source)
    if due is None or at < due:
        return None
    missed = int((at - due).total_seconds() // source.interval_seconds)
    return due + dt.timedelta(seconds=missed * source.interval_seconds)


def next_sync_at(source: RegisteredSource) -> dt.datetime | None:
    """When `source` is due next (None without an interval); may be in the past."""
    if source.interval_seconds <= 0:
        return None
    last = source.attempted_at or source.synced_at
    if last is None:
        return source.created_at
    return last + dt.timedelta(seconds=source.interval_seconds)


def sync_job_id(name: str, slot: dt.datetime) -> str:
    """The id of the scheduled sync job of source `name` for `slot`: the same in every
    process that finds it due."""
    stamp = slot.astimezone(dt.UTC).isoformat(timespec="microseconds")
    return str(uuid.uuid5(NAMESPACE, f"scheduled-sync\n{name}\n{stamp}"))
