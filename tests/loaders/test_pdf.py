from __future__ import annotations

import tracemalloc
from pathlib import Path

import pymupdf
import pytest

from loaders import LoadOptions, load
from loaders.documents import (
    CONTENT_HASH,
    CONTENT_TYPE,
    IMAGE_COUNT,
    PDF,
    SOURCE,
    TITLE,
    content_hash,
)
from loaders.pdf import _norm, _outline_titles, pdf_documents
from service.errors import ConfigurationError, LoaderError, ModelError
from splitters.base.metadata import PAGE_END, PAGE_START
from tests.loaders.bombs import (
    content_bomb_pdf,
    form_bomb_pdf,
    form_content_bomb_pdf,
    image_bomb_pdf,
    outline_pdf,
    text_bomb_pdf,
)
from tests.loaders.hostile import many_pages_pdf
from tests.loaders.pdfs import CODE, empty_page_pdf, encrypted_pdf, sample_pdf, text_pages_pdf

EXPECTED = (
    "<!-- page 1 -->\n\n"
    "# Gadget Manual\n\nGadget turns widgets into gadgets.\n\n## Installation\n\n"
    "Run the installer and then the greeting:\n\n```\n" + "\n".join(CODE) + "\n```\n\n"
    "<!-- page 2 -->\n\n"
    "## Usage\n\nCall greet with a name.\n"
)


def test_pdf_to_markdown_with_headers_code_and_pages(tmp_path: Path) -> None:
    path = tmp_path / "manual.pdf"
    path.write_bytes(sample_pdf())
    [doc] = load([str(path)])
    assert doc.page_content == EXPECTED
    assert doc.metadata == {
        SOURCE: str(path),
        TITLE: "Gadget Manual",
        CONTENT_TYPE: PDF,
        CONTENT_HASH: content_hash(EXPECTED),
        PAGE_START: 1,
        PAGE_END: 2,
        IMAGE_COUNT: 1,
    }


def test_images_are_captioned_only_with_a_captioner() -> None:
    calls: list[tuple[bytes, str]] = []

    def captioner(image: bytes, extension: str) -> str:
        calls.append((image[:8], extension))
        return " a red square\n"

    [plain] = pdf_documents(sample_pdf(), source="m.pdf", fallback_title="m", options=LoadOptions())
    assert "Image" not in plain.page_content
    assert plain.metadata[IMAGE_COUNT] == 1
    [captioned] = pdf_documents(
        sample_pdf(), source="m.pdf", fallback_title="m", options=LoadOptions(captioner=captioner)
    )
    assert calls == [(b"\x89PNG\r\n\x1a\n", "png")]
    assert "\n\n*Image (page 1): a red square*\n\n<!-- page 2 -->" in captioned.page_content


def test_a_failed_caption_is_logged_and_the_text_still_loads(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def captioner(image: bytes, extension: str) -> str:
        raise ModelError("captioning an image with 'llava' failed: timed out")

    [doc] = pdf_documents(
        sample_pdf(), source="m.pdf", fallback_title="m", options=LoadOptions(captioner=captioner)
    )
    assert doc.page_content == EXPECTED
    assert caplog.messages == [
        "m.pdf: page 1: image not captioned: captioning an image with 'llava' failed: timed out"
    ]


def test_a_misconfigured_captioner_is_raised() -> None:
    def captioner(image: bytes, extension: str) -> str:
        raise ConfigurationError("SYNOPSIS_VISION_MODEL 'x' does not accept images")

    with pytest.raises(ConfigurationError):
        list(
            pdf_documents(
                sample_pdf(), source="m.pdf", fallback_title="m",
                options=LoadOptions(captioner=captioner),
            )
        )  # fmt: skip


def _truncated() -> bytes:
    data = sample_pdf()
    return data[: len(data) // 2]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (encrypted_pdf, "encrypted PDF: a password is required"),
        (empty_page_pdf, "PDF has no extractable text (scanned? OCR is not supported)"),
        (_truncated, "damaged PDF (truncated or corrupt; pages may be missing)"),
        (lambda: b"%PDF-1.7\nnot really a pdf\n", "not a readable PDF (Failed to open stream)"),
    ],
)
def test_broken_pdfs_give_a_loader_error_naming_the_file(tmp_path: Path, make, message) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(make())
    with pytest.raises(LoaderError) as caught:
        list(load([str(path)]))
    assert str(caught.value) == f"{path}: {message}"


# --- PDFs that expand: refused, or read within bounds ----------------------------------


def _refusal(data: bytes, options: LoadOptions | None = None) -> str:
    with pytest.raises(LoaderError) as caught:
        list(
            pdf_documents(
                data, source="b.pdf", fallback_title="b", options=options or LoadOptions()
            )
        )
    text = str(caught.value)
    assert text.startswith("b.pdf: ")
    return text.removeprefix("b.pdf: ")


def test_a_pdf_of_more_pages_than_the_limit_is_refused_before_any_is_read() -> None:
    assert (
        _refusal(many_pages_pdf(), LoadOptions())
        == "10000 pages, more than the 5000 a PDF may have"
    )
    assert _refusal(sample_pdf(), LoadOptions(max_pdf_pages=1)) == (
        "2 pages, more than the 1 a PDF may have"
    )


@pytest.mark.parametrize(
    "make",
    [
        text_bomb_pdf,  # 200 MB of `(AAAA…) Tj`: 1.3 GB and 45 s to extract
        content_bomb_pdf,  # 200 MB of `q Q`: no text, only CPU time
        form_content_bomb_pdf,  # a form of 1 MB of `q Q` drawn 1,000 times, from 8 KB
        form_bomb_pdf,  # a form drawn ten million times through seven levels of forms, 2 KB
    ],
)
def test_a_content_stream_that_inflates_past_the_size_cap_is_refused(make) -> None:
    data = make()
    assert len(data) < 1_000_000
    assert _refusal(data) == (
        "page 1: the document's content passes 100000000 bytes (its streams inflated, each"
        " form counted as often as it is drawn)"
    )


def test_text_drawn_by_nested_forms_is_stopped_at_the_page_limit() -> None:
    # 2 KB: a form that draws a form ten times, five levels deep (100,000 sentences; 17 MB
    # of content to interpret, under the limit on that).
    data = form_bomb_pdf(levels=5)
    assert len(data) < 3_000
    assert _refusal(data) == "page 1: more than 200000 characters of text on one page"


def test_what_the_whole_document_draws_is_limited() -> None:
    # sample_pdf draws 10 things (text, the image, its clips) on its two pages.
    [doc] = pdf_documents(
        sample_pdf(), source="b.pdf", fallback_title="b", options=LoadOptions(max_pdf_operations=12)
    )
    assert doc.page_content == EXPECTED
    assert _refusal(sample_pdf(), LoadOptions(max_pdf_operations=8)) == (
        "page 2: the document draws more than 8 things (text, paths, images, clips)"
    )


def test_the_text_of_the_whole_document_is_capped() -> None:
    data = form_bomb_pdf(levels=3)  # 1,000 sentences on one page: 44,000 characters
    assert len(data) < 3_000
    assert _refusal(data, LoadOptions(max_bytes=30_000)) == (
        "page 1: the document's text passes the size cap of 30000"
    )


def test_pages_are_read_one_at_a_time() -> None:
    # Python's allocations while converting (imports done): all pages' pymupdf text
    # dictionaries at once took 25.6 bytes per character of the Markdown; the lines kept
    # per page and one page's dictionary at a time, 14.8.
    data = text_pages_pdf(100, 40)
    list(pdf_documents(sample_pdf(), source="a.pdf", fallback_title="a", options=LoadOptions()))
    tracemalloc.start()  # pymupdf imported
    try:
        [doc] = pdf_documents(data, source="b.pdf", fallback_title="b", options=LoadOptions())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert doc.metadata[PAGE_END] == 100
    assert peak < 20 * len(doc.page_content)


def test_an_image_too_large_to_decode_is_neither_decoded_nor_captioned(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[str] = []

    def captioner(image: bytes, extension: str) -> str:
        calls.append(extension)
        return "a grey square"

    [doc] = pdf_documents(
        image_bomb_pdf(),
        source="b.pdf",
        fallback_title="b",
        options=LoadOptions(captioner=captioner),
    )
    assert doc.page_content == "<!-- page 1 -->\n\nA page that looks harmless\n"
    assert doc.metadata[IMAGE_COUNT] == 1
    assert calls == []
    assert caplog.messages == [
        "b.pdf: page 1: image of 20000x20000 pixels not captioned (over 20000000 pixels)"
    ]


def _toc_titles(data: bytes) -> dict[int, dict[str, int]]:
    doc = pymupdf.open(stream=data, filetype="pdf")
    titles: dict[int, dict[str, int]] = {}
    for level, title, page in doc.get_toc(simple=True):
        titles.setdefault(page, {})[_norm(title)] = level
    return titles


def _outline(data: bytes) -> dict[int, dict[str, int]]:
    return _outline_titles(pymupdf.open(stream=data, filetype="pdf"), "test.pdf")


def test_the_outline_is_read_entry_by_entry_as_the_whole_table_of_contents_reads() -> None:
    doc = pymupdf.open()
    for _ in range(3):
        doc.new_page()
    doc.set_toc(
        [
            [1, "One", 1],
            [2, "One.A", 1],
            [3, "One.A.i", 2],
            [2, "One.B", 2],
            [1, "Two", 2],
            [1, "Three", 3],
            [2, "Three.A", 3],
        ]
    )
    data = doc.tobytes()
    assert (
        _outline(data)
        == _toc_titles(data)
        == {
            1: {"one": 1, "one.a": 2},
            2: {"one.a.i": 3, "one.b": 2, "two": 1},
            3: {"three": 1, "three.a": 2},
        }
    )
    assert _outline(outline_pdf(5)) == _toc_titles(outline_pdf(5))


def test_a_long_outline_is_read_to_its_bound(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("loaders.pdf.MAX_OUTLINE_ENTRIES", 40)
    titles = _outline(outline_pdf(300))
    assert sorted(titles[1].values()) == [1] * 40
    assert "outline read to its first 40 entries only" in caplog.text


def test_an_endless_outline_costs_its_headers_not_the_document(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    # MuPDF finds the cycle before the first entry; without the outline, headers come
    # from font sizes and the page's text is loaded.
    assert _outline(outline_pdf(3, cycle=True)) == {}
    assert "Cycle detected in outlines" in caplog.text
    path = tmp_path / "cycle.pdf"
    path.write_bytes(outline_pdf(3, cycle=True))
    [doc] = load([str(path)])
    assert "A page that looks harmless" in doc.page_content
