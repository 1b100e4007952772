"""The loader limits' defaults, pinned: each one is measured or argued in
docs/reliability.md ("Decompression bombs"), so a change here is a change there."""

from __future__ import annotations

from loaders import LoadOptions


def test_the_limits_on_what_a_source_may_expand_to() -> None:
    options = LoadOptions()
    assert {
        "max_bytes": options.max_bytes,
        "max_markup_tags": options.max_markup_tags,
        "max_archive_members": options.max_archive_members,
        "max_inflated_bytes": options.max_inflated_bytes,
        "max_compression_ratio": options.max_compression_ratio,
    } == {
        "max_bytes": 20_000_000,
        "max_markup_tags": 500_000,
        "max_archive_members": 10_000,
        "max_inflated_bytes": 100_000_000,
        "max_compression_ratio": 100,
    }
