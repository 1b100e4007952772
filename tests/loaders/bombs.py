"""Decompression bombs and other small files that expand hugely, generated in memory.

Zip archives are written member by member here (`zip_archive`), so that a member can be
a deflate stream far larger inflated than on disk, built in well under a second:
deflate after a full flush starts afresh, so a compressed segment can be repeated
(`Member.repeated`), and only the CRC sees every inflated byte. PDFs are written object
by object (`pdf_file`), as pymupdf's own writer is slow for thousands of pages and will
not write a lying stream.
"""

from __future__ import annotations

import functools
import io
import struct
import zipfile
import zlib
from dataclasses import dataclass

from docx import Document

__all__ = [
    "DOCX_BOMB_INFLATED",
    "Inflating",
    "Member",
    "content_bomb_pdf",
    "docx_bomb",
    "docx_with",
    "form_bomb_pdf",
    "form_content_bomb_pdf",
    "form_pdf",
    "image_bomb_pdf",
    "lying_docx",
    "many_members_docx",
    "minimal_docx",
    "names_bomb_pdf",
    "pdf_file",
    "pdf_stream",
    "text_bomb_pdf",
    "word_parts",
    "zip_archive",
]

#: What the DOCX bomb's document.xml inflates to: the 78 MB of the measured report.
DOCX_BOMB_INFLATED = 78_000_000
_DEFLATED = 8
_STORED = 0


# --- zip -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Member:
    """One zip member: its raw (compressed) bytes and what its headers declare."""

    name: str
    data: bytes
    crc: int
    size: int
    method: int = _DEFLATED

    @classmethod
    def deflated(cls, name: str, content: bytes, *, method: int = _DEFLATED) -> Member:
        """`content` deflated (or stored, with `method` 0, or declared as `method`)."""
        if method == _STORED:
            data = content
        else:
            compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
            data = compressor.compress(content) + compressor.flush()
        return cls(name, data, zlib.crc32(content), len(content), method)

    @classmethod
    def repeated(cls, name: str, head: bytes, block: bytes, count: int, tail: bytes) -> Member:
        """`head`, `block` `count` times, `tail` (`Inflating`), deflated."""
        inflating = Inflating(head, block, count, tail)
        return cls(name, inflating.deflated(), inflating.crc32(), inflating.size)


@dataclass(frozen=True)
class Inflating:
    """Content of `head`, `block` repeated `count` times and `tail`, which deflates to
    little more than one compressed block: after a full flush, deflate starts afresh, so
    the block's compressed bytes are written `count` times."""

    head: bytes
    block: bytes
    count: int
    tail: bytes

    @property
    def size(self) -> int:
        return len(self.head) + len(self.block) * self.count + len(self.tail)

    def deflated(self) -> bytes:
        """Raw deflate (as in a zip member)."""
        compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
        first = compressor.compress(self.head) + compressor.flush(zlib.Z_FULL_FLUSH)
        segment = compressor.compress(self.block) + compressor.flush(zlib.Z_FULL_FLUSH)
        return first + segment * self.count + compressor.compress(self.tail) + compressor.flush()

    def zlib(self) -> bytes:
        """The zlib format (a PDF's FlateDecode): a header, raw deflate, the Adler-32."""
        check = zlib.adler32(self.head)
        for _ in range(self.count):
            check = zlib.adler32(self.block, check)
        check = zlib.adler32(self.tail, check)
        return b"\x78\xda" + self.deflated() + struct.pack(">L", check)

    def crc32(self) -> int:
        crc = zlib.crc32(self.head)
        for _ in range(self.count):
            crc = zlib.crc32(self.block, crc)
        return zlib.crc32(self.tail, crc)


def zip_archive(members: list[Member], *, declared_sizes: dict[str, int] | None = None) -> bytes:
    """A zip of `members`; `declared_sizes` makes the headers lie about a member's size."""
    lying = declared_sizes or {}
    out = bytearray()
    central = bytearray()
    for member in members:
        name = member.name.encode()
        size = lying.get(member.name, member.size)
        fields = (member.method, 0, 0x21, member.crc, len(member.data), size, len(name))
        offset = len(out)
        out += struct.pack("<4s2H3H3L2H", b"PK\x03\x04", 20, 0, *fields, 0) + name
        out += member.data
        central += struct.pack(
            "<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, *fields, 0, 0, 0, 0, 0, offset
        )
        central += name
    start = len(out)
    out += central
    # Over 65,535 members a zip needs zip64 records; readers go by the central
    # directory's size, so the count is written as its 16-bit maximum instead.
    count = min(len(members), 0xFFFF)
    out += struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, len(central), start, 0)
    return bytes(out)


@functools.cache
def word_parts() -> tuple[tuple[str, bytes], ...]:
    """The members of a small valid .docx written by python-docx (one paragraph)."""
    document = Document()
    document.add_paragraph("Seed paragraph.")
    buffer = io.BytesIO()
    document.save(buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        return tuple((name, archive.read(name)) for name in archive.namelist())


def docx_with(replaced: dict[str, Member], extra: list[Member] | None = None) -> bytes:
    """The seed .docx with some members replaced (by name) and others added."""
    members = [
        replaced.get(name) or Member.deflated(name, content) for name, content in word_parts()
    ]
    return zip_archive(members + list(extra or []))


_CONTENT_TYPES = (
    b'<?xml version="1.0" encoding="UTF-8"?>'
    b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    b'<Default Extension="rels"'
    b' ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    b'<Default Extension="xml" ContentType="application/xml"/>'
    b'<Override PartName="/word/document.xml" ContentType="application/'
    b'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
)
_PACKAGE_RELATIONSHIPS = (
    b'<?xml version="1.0" encoding="UTF-8"?>'
    b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    b'<Relationship Id="rId1" Target="word/document.xml" Type="http://schemas.'
    b'openxmlformats.org/officeDocument/2006/relationships/officeDocument"/></Relationships>'
)


def minimal_docx(body: bytes, extra: list[Member] | None = None) -> bytes:
    """The smallest .docx mammoth reads: content types, one relationship, and a
    document.xml whose body is `body` (no styles: nothing to parse but the body)."""
    members = [
        Member.deflated("[Content_Types].xml", _CONTENT_TYPES),
        Member.deflated("_rels/.rels", _PACKAGE_RELATIONSHIPS),
        Member.deflated("word/document.xml", _DOCUMENT_HEAD + body + _DOCUMENT_TAIL),
    ]
    return zip_archive(members + list(extra or []))


_DOCUMENT_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    b"<w:body>"
)
_DOCUMENT_TAIL = b"</w:body></w:document>"
_PARAGRAPH = b"<w:p><w:r><w:t>All work and no play makes Jack a dull boy.</w:t></w:r></w:p>"


def document_xml(block: bytes, count: int) -> Member:
    """word/document.xml: `block` (paragraphs) `count` times in the body."""
    return Member.repeated("word/document.xml", _DOCUMENT_HEAD, block, count, _DOCUMENT_TAIL)


@functools.cache
def docx_bomb(inflated: int = DOCX_BOMB_INFLATED) -> bytes:
    """A valid .docx whose document.xml inflates to about `inflated` bytes of paragraphs
    (78 MB from about 80 KB: what the measured report used, 229 KB then)."""
    block = _PARAGRAPH * 10_000
    return docx_with({"word/document.xml": document_xml(block, inflated // len(block))})


def lying_docx(inflated: int = 1024**3) -> bytes:
    """A .docx whose document.xml declares 10 KB but inflates to `inflated` bytes (1 GiB)."""
    block = _PARAGRAPH * 10_000
    member = document_xml(block, inflated // len(block))
    return zip_archive(
        [
            member if name == member.name else Member.deflated(name, content)
            for name, content in word_parts()
        ],
        declared_sizes={member.name: 10_000},
    )


def many_members_docx(count: int = 200_000) -> bytes:
    """The seed .docx and `count` empty members (stored): a central directory of MBs."""
    extra = [Member.deflated(f"{n:x}", b"", method=_STORED) for n in range(count)]
    return docx_with({}, extra)


# --- PDF -------------------------------------------------------------------------------


def pdf_file(objects: list[bytes]) -> bytes:
    """A PDF of `objects` (object n is `objects[n - 1]`; 1 is the catalog)."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%b\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def pdf_stream(data: bytes | Inflating, entries: bytes = b"") -> bytes:
    """A stream object's body: `entries` in its dictionary, then `data` (as it is, or an
    `Inflating` one deflated)."""
    if isinstance(data, Inflating):
        data = data.zlib()
        entries += b" /Filter /FlateDecode"
    return b"<< /Length %d %b >>\nstream\n%b\nendstream" % (len(data), entries, data)


_CATALOG = b"<< /Type /Catalog /Pages 2 0 R >>"
_ONE_PAGE = b"<< /Type /Pages /Count 1 /Kids [4 0 R] >>"
_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
_TITLE = b"BT /F1 14 Tf 72 740 Td (A page that looks harmless) Tj ET\n"


def _one_page(contents: bytes, resources: bytes, *more: bytes) -> bytes:
    """A one-page PDF: catalog, pages, font (3), page (4), its contents (5), `more` (6…)."""
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R"
        b" /Resources << /Font << /F1 3 0 R >> %b >> >>" % resources
    )
    return pdf_file([_CATALOG, _ONE_PAGE, _FONT, page, contents, *more])


@functools.cache
def text_bomb_pdf(inflated: int = 200_000_000) -> bytes:
    """One page whose deflated content stream inflates to `inflated` bytes of text-showing
    operators (`(AAAA…) Tj`), each string drawn over the last."""
    line = b"(" + b"A" * 98 + b") Tj\n"
    count = inflated // (len(line) * 1000)
    content = Inflating(_TITLE + b"BT /F1 1 Tf 72 700 Td\n", line * 1000, count, b"ET\n")
    return _one_page(pdf_stream(content), b"")


@functools.cache
def content_bomb_pdf(inflated: int = 200_000_000) -> bytes:
    """One page whose content stream inflates to `inflated` bytes of operators that draw
    nothing (`q Q`: save and restore the graphics state): CPU time, no text."""
    block = b"q Q\n" * 100_000
    content = Inflating(_TITLE, block, inflated // len(block), b"")
    return _one_page(pdf_stream(content), b"")


def form_bomb_pdf(levels: int = 7, fan: int = 10) -> bytes:
    """One page drawing a form that draws the one below it `fan` times, `levels` deep:
    `fan ** levels` sentences of text (ten million by default) from about 2 KB."""
    form = b" /Type /XObject /Subtype /Form /BBox [0 0 612 792]"
    leaf = b"BT /F1 10 Tf 72 700 Td (All work and no play makes Jack a dull boy.) Tj ET"
    forms = [pdf_stream(leaf, form + b" /Resources << /Font << /F1 3 0 R >> >>")]
    for _ in range(levels):
        below = 6 + len(forms) - 1
        resources = b" /Resources << /XObject << /X %d 0 R >> >>" % below
        forms.append(pdf_stream(b"/X Do " * fan, form + resources))
    top = 6 + len(forms) - 1
    contents = pdf_stream(_TITLE + b"/X Do")
    return _one_page(contents, b"/XObject << /X %d 0 R >>" % top, *forms)


def form_content_bomb_pdf(inflated: int = 1_000_000, draws: int = 1_000) -> bytes:
    """One page drawing `draws` times a form whose content inflates to `inflated` bytes of
    `q Q` (a gigabyte of operators to interpret by default, from about 8 KB)."""
    block = b"q Q\n" * 25_000
    form = pdf_stream(
        Inflating(b"", block, inflated // len(block), b""),
        b" /Type /XObject /Subtype /Form /BBox [0 0 612 792]",
    )
    contents = pdf_stream(_TITLE + b"/X Do\n" * draws)
    return _one_page(contents, b"/XObject << /X 6 0 R >>", form)


def form_pdf(contents: bytes | Inflating, form: bytes = b"q Q", name: bytes = b"X") -> bytes:
    """One page of `contents` beside a form of content `form`, named `name` (object 6)."""
    return _one_page(
        pdf_stream(contents),
        b"/XObject << /%b 6 0 R >>" % name,
        pdf_stream(form, b" /Type /XObject /Subtype /Form /BBox [0 0 612 792]"),
    )


def names_bomb_pdf(inflated: int = 98_000_000) -> bytes:
    """One page whose content inflates to `inflated` bytes of `/Zz Do` (a name of nothing:
    MuPDF skips it) beside a form it never draws; about 150 KB."""
    block = b"/Zz Do\n" * 100_000
    return form_pdf(Inflating(_TITLE, block, inflated // len(block), b""))


@functools.cache
def image_bomb_pdf(side: int = 20_000) -> bytes:
    """One page with a line of text and a `side` x `side` grey image of one colour (400
    MB decoded by default), deflated."""
    rows = Inflating(b"", bytes(side * 100), side // 100, b"")
    image = pdf_stream(
        rows,
        b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray"
        b" /BitsPerComponent 8" % (side, side),
    )
    contents = pdf_stream(_TITLE + b"q 500 0 0 500 50 50 cm /Im Do Q")
    return _one_page(contents, b"/XObject << /Im 6 0 R >>", image)


def outline_pdf(entries: int, *, cycle: bool = False) -> bytes:
    """A one-page PDF whose outline is `entries` top-level entries, each pointing at the
    page; with `cycle`, the last entry's /Next is the first again (an endless outline)."""
    catalog = b"<< /Type /Catalog /Pages 2 0 R /Outlines 6 0 R >>"
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R >>"
    first, last = 7, 6 + entries
    root = b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>" % (first, last, entries)
    items = []
    for number in range(first, last + 1):
        after = number + 1 if number < last else (first if cycle else 0)
        links = b" /Prev %d 0 R" % (number - 1) if number > first else b""
        links += b" /Next %d 0 R" % after if after else b""
        items.append(
            b"<< /Title (Entry %d) /Parent 6 0 R /Dest [4 0 R /Fit]%b >>" % (number - 6, links)
        )
    return pdf_file([catalog, _ONE_PAGE, _FONT, page, pdf_stream(_TITLE), root, *items])
