"""When a registered source is due (`service.sources.schedule`): intervals as written, due
slots, and the job id of a slot."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from service.errors import InvalidSourceError
from service.sources import (
    RegisteredSource,
    due_slot,
    format_interval,
    next_sync_at,
    parse_interval,
    sync_job_id,
)

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("", 0),
        ("0", 0),
        ("off", 0),
        (" OFF ", 0),
        ("60", 60),
        ("3600", 3600),
        ("1m", 60),
        ("90s", 90),
        ("15m", 900),
        ("1h", 3600),
        ("1h30m", 5400),
        ("1d", 86_400),
        ("1d2h3m4s", 93_784),
        ("2H", 7200),
    ],
)
def test_an_interval_as_written(text: str, seconds: int) -> None:
    assert parse_interval(text) == seconds


@pytest.mark.parametrize("text", ["1x", "h", "1.5h", "-1h", "1m1h", "59s", "30", "1 h", "d"])
def test_what_is_not_an_interval_names_the_field(text: str) -> None:
    with pytest.raises(InvalidSourceError) as raised:
        parse_interval(text)
    assert raised.value.field == "interval"


@pytest.mark.parametrize(
    ("seconds", "text"), [(0, "off"), (60, "1m"), (5400, "1h30m"), (93_784, "1d2h3m4s")]
)
def test_an_interval_is_shown_as_it_is_written(seconds: int, text: str) -> None:
    assert format_interval(seconds) == text
    assert parse_interval(text) == seconds


def _source(**fields: object) -> RegisteredSource:
    base = RegisteredSource(
        name="docs",
        kind="sitemap",
        location="https://h/s.xml",
        created_at=T0,
        interval_seconds=3600,
    )
    return dataclasses.replace(base, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "at", "slot"),
    [
        # No interval: never due.
        ({"interval_seconds": 0}, T0 + 100 * HOUR, None),
        # Never synced: due from its registration on, one slot per interval missed.
        ({}, T0, T0),
        ({}, T0 + HOUR / 2, T0),
        ({}, T0 + HOUR, T0 + HOUR),
        ({}, T0 + 5.5 * HOUR, T0 + 5 * HOUR),
        # One interval after the last completed sync (its end).
        ({"synced_at": T0 + HOUR, "attempted_at": T0 + HOUR}, T0 + 1.5 * HOUR, None),
        ({"synced_at": T0 + HOUR, "attempted_at": T0 + HOUR}, T0 + 2 * HOUR, T0 + 2 * HOUR),
        ({"synced_at": T0 + HOUR, "attempted_at": T0 + HOUR}, T0 + 4.2 * HOUR, T0 + 4 * HOUR),
        # A sync that failed after the last completed one: tried again an interval later.
        ({"synced_at": T0 + HOUR, "attempted_at": T0 + 3 * HOUR}, T0 + 3.5 * HOUR, None),
        ({"synced_at": T0 + HOUR, "attempted_at": T0 + 3 * HOUR}, T0 + 4 * HOUR, T0 + 4 * HOUR),
        # Synced before the schedule's fields existed: synced_at alone.
        ({"synced_at": T0 + HOUR}, T0 + 2 * HOUR, T0 + 2 * HOUR),
    ],
)
def test_the_due_slot(fields: dict[str, object], at: dt.datetime, slot: dt.datetime | None) -> None:
    assert due_slot(_source(**fields), at) == slot


def test_the_next_sync() -> None:
    assert next_sync_at(_source(interval_seconds=0)) is None
    assert next_sync_at(_source()) == T0
    assert next_sync_at(_source(attempted_at=T0 + HOUR)) == T0 + 2 * HOUR


def test_a_slot_names_one_job_whatever_the_time_zone() -> None:
    job = sync_job_id("docs", T0)
    assert job == sync_job_id("docs", T0.astimezone(dt.timezone(dt.timedelta(hours=2))))
    assert len({job, sync_job_id("docs", T0 + HOUR), sync_job_id("other", T0)}) == 3
