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
        "max_pdf_pages": options.max_pdf_pages,
        "max_page_chars": options.max_page_chars,
        "max_pdf_operations": options.max_pdf_operations,
        "max_pdf_content_bytes": options.max_pdf_content_bytes,
    } == {
        "max_bytes": 20_000_000,
        "max_markup_tags": 500_000,
        "max_archive_members": 10_000,
        "max_inflated_bytes": 100_000_000,
        "max_compression_ratio": 100,
        "max_pdf_pages": 5_000,
        "max_page_chars": 200_000,
        "max_pdf_operations": 5_000_000,
        "max_pdf_content_bytes": 100_000_000,
    }
