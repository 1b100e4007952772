"""Word (.docx) → Markdown: mammoth turns the document into HTML, the HTML path does the rest.

Headings ("Heading 1" … "Heading 6", and what mammoth maps by default) become ATX
headers; paragraphs in a code style ("Code", "Source Code", "HTML Preformatted",
"Preformatted Text", "Macro Text") become one fenced block per run of such paragraphs,
their text kept exactly; runs in a code character style become inline code. Images are
counted (`image_count`, as for PDFs) and left out: mammoth would inline them as base64.
The title is the document's core property `title`, else its first H1, else the file
stem.

A file that is not a readable .docx — truncated, corrupt, password-protected (an
encrypted Office file is an OLE container, not a zip), or a legacy .doc renamed — gives a
one-line `LoaderError` naming the file.

A .docx is a zip, and deflate inflates up to ~1000:1: a 300 KB file whose document.xml
inflates to 78 MB took a server to 4 GB of memory in mammoth's DOM. So before anything
in it is parsed, the archive is checked against the `LoadOptions` limits: its member
count, its members' compression methods (stored or deflated) and ratios, what they
inflate to together, what the parts mammoth parses (XML, relationships, an embedded
style map) inflate to, and their tags, counted in a stream of inflated bytes. The sizes
are the ones the archive declares; zipfile never yields more than a member declares (a
member that inflates to more fails its CRC check). Images are counted, never read, and
mammoth's HTML is held to the tag and size limits of an HTML page.
"""

from __future__ import annotations

import html
import io
import re
import zipfile
from collections.abc import Iterator
from typing import Any
from xml.etree import ElementTree

from langchain_core.documents import Document

from loaders.documents import DOCX, IMAGE_COUNT, make_document
from loaders.html import html_to_markdown
from loaders.options import LoadOptions
from splitters.base.errors import LoaderError

__all__ = ["docx_documents"]

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_STYLE_MAP = """
p[style-name='Code'] => pre:separator('\\n')
p[style-name='Source Code'] => pre:separator('\\n')
p[style-name='HTML Preformatted'] => pre:separator('\\n')
p[style-name='Preformatted Text'] => pre:separator('\\n')
p[style-name='Macro Text'] => pre:separator('\\n')
r[style-name='Verbatim Char'] => code
r[style-name='HTML Code'] => code
r[style-name='Source Text'] => code
"""
_IMAGE = re.compile(r"<img\b[^>]*>")
_CORE_TITLE = "{http://purl.org/dc/elements/1.1/}title"
#: Members mammoth (and the title lookup) parse: their bytes and tags are limited.
_PARSED_SUFFIXES = (".xml", ".rels")
_EMBEDDED_STYLE_MAP = "mammoth/style-map"
#: Members up to this size inflated may have any ratio (a tiny part of zeros is harmless).
_RATIO_FREE_BYTES = 1024 * 1024
_READ_CHUNK = 1024 * 1024


def _check_archive(archive: zipfile.ZipFile, options: LoadOptions, source: str) -> None:
    """Refuse an archive that would inflate past `options`' limits, before any parsing."""
    members = archive.infolist()
    if len(members) > options.max_archive_members:
        raise LoaderError(
            f"{len(members)} members in the archive, more than the"
            f" {options.max_archive_members} a Word file may have",
            source=source,
        )
    for member in members:
        if member.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise LoaderError(
                f"member {member.filename!r} is compressed with method {member.compress_type};"
                " a Word file's members are stored or deflated",
                source=source,
            )
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > _RATIO_FREE_BYTES and ratio > options.max_compression_ratio:
            raise LoaderError(
                f"member {member.filename!r} inflates {ratio:.0f}:1 ({member.file_size} bytes"
                f" from {member.compress_size}), more than {options.max_compression_ratio}:1"
                " (a decompression bomb?)",
                source=source,
            )
    total = sum(member.file_size for member in members)
    if total > options.max_inflated_bytes:
        raise LoaderError(
            f"its members inflate to {total} bytes, more than the cap of"
            f" {options.max_inflated_bytes} bytes (a decompression bomb?)",
            source=source,
        )
    parsed = [member for member in members if _is_parsed(member.filename)]
    markup = sum(member.file_size for member in parsed)
    if markup > options.max_bytes:
        raise LoaderError(
            f"its XML parts inflate to {markup} bytes, more than the size cap of"
            f" {options.max_bytes} bytes",
            source=source,
        )
    tags = 0
    for member in parsed:
        # Streamed: never more than one chunk of inflated bytes at a time.
        with archive.open(member) as stream:
            while chunk := stream.read(_READ_CHUNK):
                tags += chunk.count(b"<")
        if tags > options.max_markup_tags:
            raise LoaderError(
                f"about {tags} tags in its XML, more than the {options.max_markup_tags}"
                " a document may have",
                source=source,
            )


def _is_parsed(name: str) -> bool:
    return name.lower().endswith(_PARSED_SUFFIXES) or name == _EMBEDDED_STYLE_MAP


def _image(image: Any) -> dict[str, str]:
    """An image's `<img>` attributes: none. Its bytes are never read (mammoth's default
    inlines them as base64, only for the tag to be dropped)."""
    return {}


def _core_title(archive: zipfile.ZipFile) -> str:
    try:
        root = ElementTree.fromstring(archive.read("docProps/core.xml"))
    except (KeyError, ElementTree.ParseError):
        return ""
    title = root.find(_CORE_TITLE)
    return " ".join((title.text or "").split()) if title is not None else ""


def _convert(data: bytes, source: str, options: LoadOptions) -> tuple[str, str]:
    """The HTML mammoth makes of the document, and the document's title property."""
    # Imported here: only reading a Word file needs mammoth.
    import mammoth  # noqa: PLC0415

    if data.startswith(_OLE_MAGIC):
        raise LoaderError(
            "password-protected (encrypted) or legacy binary Word file; save it as an"
            " unprotected .docx",
            source=source,
        )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            if "word/document.xml" not in archive.namelist():
                raise LoaderError("not a Word document (no word/document.xml)", source=source)
            _check_archive(archive, options, source)
            title = _core_title(archive)
        converter: Any = mammoth
        # Empty paragraphs are kept: in a code block they are its blank lines.
        result = converter.convert_to_html(
            io.BytesIO(data),
            style_map=_STYLE_MAP,
            ignore_empty_paragraphs=False,
            convert_image=converter.images.img_element(_image),
        )
    except LoaderError:
        raise
    except zipfile.BadZipFile as exc:
        raise LoaderError(
            f"not a readable .docx (corrupt or truncated: {exc})", source=source
        ) from exc
    except Exception as exc:  # mammoth raises whatever its XML and zip readers raise
        message = " ".join(str(exc).split()) or type(exc).__name__
        raise LoaderError(f"not a readable .docx ({message})", source=source) from exc
    return str(result.value), title


def docx_documents(
    data: bytes, *, source: str, fallback_title: str, options: LoadOptions
) -> Iterator[Document]:
    """Yield the Document of a .docx file; `LoaderError` naming `source` if it is
    unreadable or over one of `options`' limits."""
    body, title = _convert(data, source, options)
    tags = body.count("<")
    if tags > options.max_markup_tags:
        raise LoaderError(
            f"converted to about {tags} tags of HTML, more than the"
            f" {options.max_markup_tags} a document may have",
            source=source,
        )
    if len(body) > options.max_bytes:
        raise LoaderError(
            f"converted to {len(body)} characters of HTML, more than the size cap of"
            f" {options.max_bytes}",
            source=source,
        )
    images = len(_IMAGE.findall(body))
    body = _IMAGE.sub("", body)
    head = f"<title>{html.escape(title)}</title>" if title else ""
    page = html_to_markdown(
        f"<html><head>{head}</head><body>{body}</body></html>", main_content=False
    )
    if not page.markdown:
        raise LoaderError("no text in the Word document", source=source)
    yield make_document(
        page.markdown,
        source=source,
        title=title or page.title or fallback_title,
        content_type=DOCX,
        **{IMAGE_COUNT: images},
    )
