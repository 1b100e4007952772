"""`loaders.pdf_limits.ContentMeter`: what a page's content costs, read a chunk at a time
(the PDFs are real; the loader's refusals are tested in test_pdf.py)."""

from __future__ import annotations

import tracemalloc

import pymupdf
import pytest

from loaders.options import LoadOptions
from loaders.pdf import pdf_documents
from loaders.pdf_limits import FORM_DRAW_BYTES, ContentMeter
from tests.loaders.bombs import form_pdf, names_bomb_pdf

CHUNK = 1 << 20
#: One drawing of `form_pdf`'s form, `q Q`.
DRAW = FORM_DRAW_BYTES + 3


def _cost(data: bytes, budget: int = 100_000_000) -> int:
    doc = pymupdf.open(stream=data, filetype="pdf")
    try:
        return ContentMeter(pymupdf.mupdf, doc, budget).page(doc[0])
    finally:
        doc.close()


@pytest.mark.parametrize("before", [CHUNK - 7, CHUNK - 6, CHUNK - 5, CHUNK - 3, CHUNK - 1, CHUNK])
def test_a_form_drawn_across_two_chunks_is_counted(before: int) -> None:
    content = b" " * before + b"/X Do\n/X Do"
    assert _cost(form_pdf(content)) == len(content) + 2 * DRAW


def test_white_space_across_chunks_and_escaped_names_are_read_as_mupdf_reads_them() -> None:
    content = b"/X" + b" " * (3 * CHUNK) + b"Do /#58 Do /X\nDo"
    assert _cost(form_pdf(content)) == len(content) + 3 * DRAW


@pytest.mark.parametrize(
    "content",
    [
        b"/X Dox /XY Do /Y Do /X",  # another operator, other names, no operator
        b"/X Do" + b"\0" * (CHUNK - 5) + b"x",  # `Do` then more of a word in the next chunk
    ],
)
def test_only_drawings_of_the_form_are_counted(content: bytes) -> None:
    assert _cost(form_pdf(content)) == len(content)


def test_a_name_that_is_not_utf8_is_matched_as_pymupdf_decodes_it() -> None:
    assert _cost(form_pdf(b"/#e9 Do", name=b"#E9")) == 7 + DRAW


def test_the_count_stops_within_a_chunk_past_the_budget() -> None:
    content = b"/X Do " * 1_000_000  # 6 MB drawing the form a million times: 109 MB
    assert _cost(form_pdf(content), budget=200_000_000) == len(content) + 1_000_000 * DRAW
    assert 1_000_000 < _cost(form_pdf(content), budget=1_000_000) <= 1_000_000 + CHUNK


def test_a_stream_of_a_hundred_megabytes_is_read_in_bounded_memory() -> None:
    # 98 MB of `/Zz Do` from 150 KB: with the stream read whole and every name found at
    # once, Python's allocations peaked at 700 MB (measured); now at most a few chunks.
    data = names_bomb_pdf()
    assert len(data) < 200_000
    tracemalloc.start()
    try:
        [doc] = pdf_documents(data, source="b.pdf", fallback_title="b", options=LoadOptions())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert doc.page_content == "<!-- page 1 -->\n\nA page that looks harmless\n"
    assert peak < 10 * CHUNK
