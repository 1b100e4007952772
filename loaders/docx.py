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
from splitters.errors import LoaderError

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


def _core_title(archive: zipfile.ZipFile) -> str:
    try:
        root = ElementTree.fromstring(archive.read("docProps/core.xml"))
    except (KeyError, ElementTree.ParseError):
        return ""
    title = root.find(_CORE_TITLE)
    return " ".join((title.text or "").split()) if title is not None else ""


def _convert(data: bytes, source: str) -> tuple[str, str]:
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
            title = _core_title(archive)
        converter: Any = mammoth
        # Empty paragraphs are kept: in a code block they are its blank lines.
        result = converter.convert_to_html(
            io.BytesIO(data), style_map=_STYLE_MAP, ignore_empty_paragraphs=False
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


def docx_documents(data: bytes, *, source: str, fallback_title: str) -> Iterator[Document]:
    """Yield the Document of a .docx file; `LoaderError` naming `source` if unreadable."""
    body, title = _convert(data, source)
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
