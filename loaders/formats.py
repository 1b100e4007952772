"""Bytes of a known format (HTML, Markdown, text, PDF, DOCX) → Documents, for files and URLs."""

from __future__ import annotations

from collections.abc import Iterator

from langchain_core.documents import Document

from loaders.documents import DOCX, HTML, MARKDOWN, PDF, TEXT, make_document
from loaders.docx import docx_documents
from loaders.encoding import decode_text
from loaders.html import html_to_markdown
from loaders.markdown import markdown_document, text_document
from loaders.options import LoadOptions
from loaders.pdf import pdf_documents
from splitters.base.errors import LoaderError

__all__ = ["CONTENT_TYPES_BY_SUFFIX", "convert"]

#: File suffixes loaders read, and the content type each stands for.
CONTENT_TYPES_BY_SUFFIX = {
    ".html": HTML,
    ".htm": HTML,
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".txt": TEXT,
    ".pdf": PDF,
    ".docx": DOCX,
}


def convert(
    data: bytes,
    *,
    content_type: str,
    source: str,
    fallback_title: str,
    options: LoadOptions,
    base_url: str | None = None,
    charset: str | None = None,
) -> Iterator[Document]:
    """Convert one source's bytes to Documents; raise `LoaderError` naming `source` on failure.

    `charset` is the one declared by the transport, if any; `base_url` resolves the
    relative links of HTML.
    """
    if len(data) > options.max_bytes:
        raise LoaderError(
            f"{len(data)} bytes exceeds the size cap of {options.max_bytes} bytes", source=source
        )
    if not data.strip():
        raise LoaderError("empty source: nothing to load", source=source)
    if content_type == PDF:
        yield from pdf_documents(
            data, source=source, fallback_title=fallback_title, options=options
        )
        return
    if content_type == DOCX:
        yield from docx_documents(
            data, source=source, fallback_title=fallback_title, options=options
        )
        return
    text = decode_text(data, source=source, declared=charset, html=content_type == HTML)
    if content_type == HTML:
        tags = text.count("<")
        if tags > options.max_markup_tags:
            raise LoaderError(
                f"about {tags} tags, more than the {options.max_markup_tags} a page may have",
                source=source,
            )
        page = html_to_markdown(text, base_url=base_url)
        if not page.markdown:
            raise LoaderError("no text in the page's main content", source=source)
        yield make_document(
            page.markdown, source=source, title=page.title or fallback_title, content_type=HTML
        )
    elif content_type == MARKDOWN:
        yield markdown_document(text, source=source, fallback_title=fallback_title)
    elif content_type == TEXT:
        yield text_document(text, source=source, fallback_title=fallback_title)
    else:
        raise LoaderError(f"unsupported content type {content_type!r}", source=source)
