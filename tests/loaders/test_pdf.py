from __future__ import annotations

from pathlib import Path

import pytest

from loaders import LoadOptions, load
from loaders.documents import (
    CONTENT_HASH,
    CONTENT_TYPE,
    IMAGE_COUNT,
    PAGE_END,
    PAGE_START,
    PDF,
    SOURCE,
    TITLE,
    content_hash,
)
from loaders.pdf import pdf_documents
from service.errors import ConfigurationError, LoaderError, ModelError
from tests.loaders.pdfs import CODE, empty_page_pdf, encrypted_pdf, sample_pdf

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
