"""Word files: headings, code and metadata through the HTML path; unreadable files are
refused with one line naming the file. The .docx files are written here by python-docx."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from docx import Document as WordDocument
from docx.enum.style import WD_STYLE_TYPE
from docx.shared import Pt

from loaders import load
from loaders.documents import (
    CONTENT_HASH,
    CONTENT_TYPE,
    DOCX,
    IMAGE_COUNT,
    SOURCE,
    TITLE,
    content_hash,
)
from service.errors import LoaderError
from splitters import chunk_documents

CODE = "def spin(w):\n    return w  # `x` **not** markdown\n\n\tindented with a tab"


def write_docx(path: Path, *, title: str = "Widget Guide") -> Path:
    document = WordDocument()
    document.core_properties.title = title
    code_style = document.styles.add_style("Code", WD_STYLE_TYPE.PARAGRAPH)
    code_style.font.name = "Courier New"
    code_style.font.size = Pt(9)
    document.add_heading("Widgets", level=1)
    document.add_paragraph("A widget spins.")
    document.add_heading("Spinning", level=2)
    document.add_paragraph("Call it like this:")
    for line in CODE.split("\n"):
        document.add_paragraph(line, style="Code")
    document.add_heading("Limits", level=3)
    document.add_paragraph("Not more than ten turns.", style="List Bullet")
    document.save(str(path))
    return path


def test_a_word_file_becomes_markdown_with_headings_and_exact_code(tmp_path: Path) -> None:
    path = write_docx(tmp_path / "guide.docx")
    [doc] = load([str(path)])
    assert doc.metadata == {
        SOURCE: str(path),
        TITLE: "Widget Guide",
        CONTENT_TYPE: DOCX,
        CONTENT_HASH: content_hash(doc.page_content),
        IMAGE_COUNT: 0,
    }
    assert doc.page_content == (
        "# Widgets\n\nA widget spins.\n\n## Spinning\n\nCall it like this:\n\n"
        f"```\n{CODE}\n```\n\n### Limits\n\n- Not more than ten turns.\n"
    )
    headers = [chunk.metadata["headers"] for chunk in chunk_documents([doc])]
    assert headers == [["Widgets"], ["Widgets", "Spinning"], ["Widgets", "Spinning", "Limits"]]


def test_a_directory_with_word_files_loads_them(tmp_path: Path) -> None:
    write_docx(tmp_path / "a.docx", title="")
    [doc] = load([str(tmp_path)])
    assert doc.metadata[TITLE] == "Widgets"  # no title property: the first heading


def _encrypted(path: Path) -> Path:
    # What Word writes for a password-protected file: an OLE compound file, not a zip.
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504 + b"EncryptedPackage")
    return path


def _truncated(path: Path) -> Path:
    write_docx(path)
    path.write_bytes(path.read_bytes()[:2000])
    return path


def _not_word(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("readme.txt", "a zip, not a Word file")
    return path


def _broken_xml(path: Path) -> Path:
    write_docx(path)
    with zipfile.ZipFile(path) as source:
        entries = {name: source.read(name) for name in source.namelist()}
    entries["word/document.xml"] = b"<w:document><w:body><w:p>"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_encrypted, "password-protected (encrypted) or legacy binary Word file"),
        (_truncated, "not a readable .docx (corrupt or truncated"),
        (_not_word, "not a Word document (no word/document.xml)"),
        (_broken_xml, "not a readable .docx ("),
    ],
)
def test_unreadable_word_files_give_one_line_naming_the_file(
    tmp_path: Path, make, message: str
) -> None:
    path = make(tmp_path / "bad.docx")
    with pytest.raises(LoaderError) as caught:
        list(load([str(path)]))
    text = str(caught.value)
    assert text.startswith(f"{path}: {message}")
    assert "\n" not in text
