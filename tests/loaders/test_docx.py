"""Word files: headings, code and metadata through the HTML path; unreadable files are
refused with one line naming the file. The .docx files are written here by python-docx."""

from __future__ import annotations

import bz2
import dataclasses
import io
import struct
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest
from docx import Document as WordDocument
from docx.enum.style import WD_STYLE_TYPE
from docx.shared import Pt

from loaders import LoadOptions, load
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
from tests.loaders.bombs import Member, docx_bomb, lying_docx, minimal_docx, zip_archive

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


# --- decompression bombs and other files that expand: refused before parsing -----------


def _refusal(data: bytes, tmp_path: Path, options: LoadOptions | None = None) -> str:
    """The one-line refusal of `data` as a .docx (after the path), with the peak of
    Python's allocations while it was read: nothing big may be inflated or parsed."""
    path = tmp_path / "bomb.docx"
    path.write_bytes(data)
    tracemalloc.start()
    try:
        with pytest.raises(LoaderError) as caught:
            list(load([str(path)], options=options))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000, peak
    text = str(caught.value)
    assert text.startswith(f"{path}: ")
    assert "\n" not in text
    return text.removeprefix(f"{path}: ")


def _member(data: bytes, name: str = "word/document.xml") -> zipfile.ZipInfo:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.getinfo(name)


def test_the_measured_docx_bomb_is_refused_before_parsing(tmp_path: Path) -> None:
    # 78 MB of document.xml from about 300 KB: a server reached 4.1 GB parsing it.
    data = docx_bomb()
    assert len(data) < 400_000
    info = _member(data)
    assert info.file_size > 77_000_000
    ratio = info.file_size / info.compress_size
    assert _refusal(data, tmp_path) == (
        f"member 'word/document.xml' inflates {ratio:.0f}:1 ({info.file_size} bytes from"
        f" {info.compress_size}), more than 100:1 (a decompression bomb?)"
    )


def test_a_member_lying_about_its_size_is_never_inflated_past_it(tmp_path: Path) -> None:
    # Declares 10 KB, inflates to 1 GiB: zipfile stops at the declared size, the CRC fails.
    data = lying_docx()
    assert _member(data).file_size == 10_000
    assert _refusal(data, tmp_path) == (
        "not a readable .docx (corrupt or truncated: Bad CRC-32 for file 'word/document.xml')"
    )


def test_too_many_members_are_refused(tmp_path: Path) -> None:
    data = minimal_docx(b"", [Member.deflated(f"extra/{n}", b"") for n in range(10)])
    options = LoadOptions(max_archive_members=12)
    assert _refusal(data, tmp_path, options) == (
        "13 members in the archive, more than the 12 a Word file may have"
    )


def test_a_member_compressed_otherwise_than_stored_or_deflated_is_refused(
    tmp_path: Path,
) -> None:
    member = Member(
        "word/media/a.bin", bz2.compress(b"x" * 1000), zlib.crc32(b"x" * 1000), 1000, 12
    )
    assert _refusal(minimal_docx(b"", [member]), tmp_path) == (
        "member 'word/media/a.bin' is compressed with method 12; a Word file's members are"
        " stored or deflated"
    )


def test_what_all_members_inflate_to_is_capped(tmp_path: Path) -> None:
    # Stored (1:1) so no ratio is over; together they pass the cap.
    media = [Member.deflated(f"word/media/{n}.png", bytes(600_000), method=0) for n in range(2)]
    data = minimal_docx(b"<w:p/>", media)
    total = sum(info.file_size for info in zipfile.ZipFile(io.BytesIO(data)).infolist())
    assert _refusal(data, tmp_path, LoadOptions(max_inflated_bytes=1_000_000)) == (
        f"its members inflate to {total} bytes, more than the cap of 1000000 bytes"
        " (a decompression bomb?)"
    )


def test_the_parsed_parts_are_capped_like_a_page(tmp_path: Path) -> None:
    words = " ".join(f"w{n}" for n in range(200_000)).encode()
    data = minimal_docx(b"<w:p><w:r><w:t>" + words + b"</w:t></w:r></w:p>")
    parsed = sum(
        info.file_size
        for info in zipfile.ZipFile(io.BytesIO(data)).infolist()
        if info.filename.endswith((".xml", ".rels"))
    )
    assert _refusal(data, tmp_path, LoadOptions(max_bytes=1_000_000)) == (
        f"its XML parts inflate to {parsed} bytes, more than the size cap of 1000000 bytes"
    )


def _tags(data: bytes) -> int:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return sum(archive.read(name).count(b"<") for name in archive.namelist())


def test_the_tags_of_its_xml_are_limited_like_a_page(tmp_path: Path) -> None:
    data = minimal_docx(b"<w:p><w:r><w:t>x</w:t></w:r></w:p>" * 2_000)
    assert _refusal(data, tmp_path, LoadOptions(max_markup_tags=10_000)) == (
        f"about {_tags(data)} tags in its XML, more than the 10000 a document may have"
    )


def test_the_converted_html_is_limited_in_tags_and_size(tmp_path: Path) -> None:
    # An empty paragraph is one tag of XML (`<w:p/>`, 6 bytes) and two of HTML
    # (`<p></p>`, 7 characters).
    data = minimal_docx(b"<w:p><w:r><w:t>text</w:t></w:r></w:p>" + b"<w:p/>" * 2_000)
    assert _tags(data) < 2_100
    options = LoadOptions(max_markup_tags=3_000)
    assert _refusal(data, tmp_path, options) == (
        "converted to about 4002 tags of HTML, more than the 3000 a document may have"
    )
    parsed = sum(info.file_size for info in zipfile.ZipFile(io.BytesIO(data)).infolist())
    assert parsed < 13_900
    assert _refusal(data, tmp_path, LoadOptions(max_bytes=13_900)) == (
        "converted to 14011 characters of HTML, more than the size cap of 13900"
    )


def test_images_are_counted_and_never_read(tmp_path: Path) -> None:
    path = write_docx(tmp_path / "pictures.docx")
    document = WordDocument(str(path))
    document.add_picture(io.BytesIO(_PNG))
    document.save(str(path))
    # The image's member fails its CRC check if anything reads it.
    with zipfile.ZipFile(path) as archive:
        members = [Member.deflated(name, archive.read(name)) for name in archive.namelist()]
    members = [
        dataclasses.replace(m, crc=m.crc ^ 1) if m.name.startswith("word/media/") else m
        for m in members
    ]
    assert any(m.name.startswith("word/media/") for m in members)
    path.write_bytes(zip_archive(members))
    [doc] = load([str(path)])
    assert doc.metadata[IMAGE_COUNT] == 1
    assert "data:" not in doc.page_content


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">L", len(body)) + kind + body + struct.pack(">L", zlib.crc32(kind + body))
        )

    header = struct.pack(">2L5B", width, height, 8, 0, 0, 0, 0)
    rows = zlib.compress(b"".join(b"\x00" + bytes(width) for _ in range(height)))
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")
    )


_PNG = _png(16, 16)
