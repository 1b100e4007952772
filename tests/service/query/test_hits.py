"""`HIT_FIELDS`, the one list of a hit's fields every edge is made from: it is `Hit`'s
fields, in order, each with its meaning, whether every hit has it, its empty value and
whether it is a time. Each edge's form of a hit: tests/service/test_hit_fields.py."""

from __future__ import annotations

import dataclasses
import datetime as dt
import typing

from service.index.records import SummaryKind
from service.query.hits import HIT_FIELDS, Hit


def test_hit_fields_are_the_hits_fields_in_order() -> None:
    assert [spec.name for spec in HIT_FIELDS] == [
        "id", "source", "title", "headers", "chunk_index", "content", "summary",
        "summary_kind", "summary_model", "score", "leg", "distance", "scores",
        "page_start", "page_end", "anchor", "version", "indexed_at",
    ]  # fmt: skip
    assert [spec.name for spec in HIT_FIELDS] == [field.name for field in dataclasses.fields(Hit)]


def test_every_field_says_what_it_means() -> None:
    for spec in HIT_FIELDS:
        assert spec.meaning.endswith("."), spec.name
        assert len(spec.meaning.split()) >= 4, spec.name


def test_required_fields_are_those_without_a_default_and_the_others_are_empty() -> None:
    assert [spec.name for spec in HIT_FIELDS if spec.required] == [
        "id", "source", "title", "headers", "chunk_index", "content", "summary", "score", "leg",
    ]  # fmt: skip
    assert {spec.name: spec.empty() for spec in HIT_FIELDS if not spec.required} == {
        "summary_kind": None,
        "summary_model": None,
        "distance": None,
        "scores": {},
        "page_start": None,
        "page_end": None,
        "anchor": "",
        "version": None,
        "indexed_at": None,
    }
    scores = next(spec for spec in HIT_FIELDS if spec.name == "scores")
    assert scores.empty() is not scores.empty()  # a new dict each time


def test_the_times_are_the_datetime_fields() -> None:
    hints = typing.get_type_hints(Hit, localns={"SummaryKind": SummaryKind, "dt": dt})
    datetimes = {name for name, hint in hints.items() if dt.datetime in typing.get_args(hint)}
    assert {spec.name for spec in HIT_FIELDS if spec.time} == datetimes == {"indexed_at"}


def test_to_dict_gives_every_field_with_empty_values_and_rounds_scores() -> None:
    hit = Hit(
        id="A",
        source="doc.md",
        title="Doc",
        headers=["Doc"],
        chunk_index=0,
        content="text",
        summary=None,
        score=0.12345678,
        leg="originals",
    )
    assert hit.to_dict() == {
        "id": "A",
        "source": "doc.md",
        "title": "Doc",
        "headers": ["Doc"],
        "chunk_index": 0,
        "content": "text",
        "summary": None,
        "summary_kind": None,
        "summary_model": None,
        "score": 0.123457,
        "leg": "originals",
        "distance": None,
        "scores": {},
        "page_start": None,
        "page_end": None,
        "anchor": "",
        "version": None,
        "indexed_at": None,
    }
    assert list(hit.to_dict()) == [spec.name for spec in HIT_FIELDS]
