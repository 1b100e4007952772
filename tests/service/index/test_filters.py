"""Prefix filters as sent to Weaviate: its `like` has no escape, so a wildcard of a prefix
is sent as one character and checked exactly afterwards (the real Weaviate:
test_filters_integration.py)."""

from __future__ import annotations

from typing import Any

import pytest

from service.index.queries import SearchFilters, like_prefix


@pytest.mark.parametrize(
    ("prefix", "pattern"),
    [
        ("docs/", "docs/*"),
        ("https://x.test/page?id=", "https://x.test/page?id=*"),
        ("*", "?*"),
        ("a*b?c", "a?b?c*"),
        ("Guide > Step *", "Guide > Step ?*"),
    ],
)
def test_like_prefix(prefix: str, pattern: str) -> None:
    assert like_prefix(prefix) == pattern


@pytest.mark.parametrize(
    ("filters", "exact"),
    [
        (SearchFilters(), False),
        (SearchFilters(source_prefix="docs/"), False),
        (SearchFilters(source_prefix="docs/a?"), True),
        (SearchFilters(header_prefix="Step *"), True),
        (SearchFilters(source="a*b", title="?"), False),  # equality filters take them as is
    ],
)
def test_needs_exact_check(filters: SearchFilters, exact: bool) -> None:
    assert filters.needs_exact_check() is exact


@pytest.mark.parametrize(
    ("filters", "properties", "admitted"),
    [
        (SearchFilters(source_prefix="docs/a?"), {"source": "docs/a?b.md"}, True),
        (SearchFilters(source_prefix="docs/a?"), {"source": "docs/aXb.md"}, False),
        (SearchFilters(header_prefix="A > B*"), {"headers": ["A", "B*C"]}, True),
        (SearchFilters(header_prefix="A > B*"), {"headers": ["A", "BXC"]}, False),
        (SearchFilters(header_prefix="A > B*"), {}, False),
    ],
)
def test_admits(filters: SearchFilters, properties: dict[str, Any], admitted: bool) -> None:
    assert filters.admits(properties) is admitted
