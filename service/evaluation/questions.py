"""Question sets: JSONL, one question per line, with where its answer may be.

    {"query": "loop over two lists at once",
     "expect": [{"source_suffix": "datastructures.html", "section": "5.6."}]}

A hit is relevant when its `source` ends with one `source_suffix` and one of its
`headers` starts with that expectation's `section`. An empty `expect` marks a question
the corpus cannot answer (out of scope).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from service.errors import QuerySetError
from service.query.search import Hit

__all__ = ["Expectation", "Query", "QuerySetError", "load_queries", "parse_queries"]


@dataclass(frozen=True, kw_only=True)
class Expectation:
    """One place an answer may be: a source (by suffix) and a section (by header prefix)."""

    source_suffix: str
    section: str

    def matches(self, hit: Hit) -> bool:
        """True when `hit` is in this source and under this section."""
        return hit.source.endswith(self.source_suffix) and any(
            header.startswith(self.section) for header in hit.headers
        )


@dataclass(frozen=True, kw_only=True)
class Query:
    """One question of the set, with where its answer is (nothing: out of scope)."""

    text: str
    expect: tuple[Expectation, ...]
    line: int = 0

    @property
    def in_scope(self) -> bool:
        """True when the corpus is expected to answer it."""
        return bool(self.expect)

    def is_relevant(self, hit: Hit) -> bool:
        """True when `hit` matches any expectation."""
        return any(expectation.matches(hit) for expectation in self.expect)


def load_queries(path: Path) -> list[Query]:
    """Read a JSONL question set; QuerySetError names the file and line of a bad entry."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise QuerySetError(f"{path}: cannot read the question set: {exc}") from exc
    return parse_queries(text.splitlines(), name=str(path))


def parse_queries(lines: Iterable[str], *, name: str = "<queries>") -> list[Query]:
    """Parse JSONL lines (blank lines and `#` comments are skipped) into queries."""
    queries: list[Query] = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{name}, line {number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise QuerySetError(f"{where}: not valid JSON ({exc.msg})") from exc
        queries.append(_query(data, where, number))
    if not queries:
        raise QuerySetError(f"{name}: no questions")
    return queries


def _query(data: object, where: str, number: int) -> Query:
    if not isinstance(data, dict):
        raise QuerySetError(f"{where}: expected an object with 'query' and 'expect'")
    unknown = set(data) - {"query", "expect"}
    if unknown:
        raise QuerySetError(f"{where}: unknown keys {sorted(unknown)}")
    text = data.get("query")
    if not isinstance(text, str) or not text.strip():
        raise QuerySetError(f"{where}: 'query' must be a non-empty string")
    expect = data.get("expect")
    if not isinstance(expect, list):
        raise QuerySetError(f"{where}: 'expect' must be a list (empty: out of scope)")
    expectations: list[Expectation] = []
    for item in expect:
        if (
            not isinstance(item, dict)
            or set(item) != {"source_suffix", "section"}
            or not all(isinstance(value, str) and value for value in item.values())
        ):
            raise QuerySetError(
                f"{where}: each 'expect' entry needs non-empty strings "
                "'source_suffix' and 'section' and nothing else"
            )
        expectations.append(
            Expectation(source_suffix=item["source_suffix"], section=item["section"])
        )
    return Query(text=text, expect=tuple(expectations), line=number)
