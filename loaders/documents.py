"""Metadata keys, content hashing and `Document` construction shared by every loader.

The keys the splitters read too (the PDF page keys and page marker lines, the header
path) are in `splitters.base.metadata`, the base both packages share.
"""

from __future__ import annotations

import hashlib

from langchain_core.documents import Document

__all__ = [
    "CONTENT_HASH",
    "CONTENT_TYPE",
    "DOCX",
    "HTML",
    "IMAGE_COUNT",
    "MARKDOWN",
    "PDF",
    "SOURCE",
    "TEXT",
    "TITLE",
    "content_hash",
    "make_document",
]

#: Canonical URL or absolute path of the source the document came from.
SOURCE = "source"
#: Human-readable title (first H1, HTML `<title>`, PDF metadata or the file stem).
TITLE = "title"
#: MIME type of the *source*; `page_content` is always Markdown.
CONTENT_TYPE = "content_type"
#: sha256 hex digest of `page_content` encoded as UTF-8.
CONTENT_HASH = "content_hash"
#: Number of images on the PDF pages (or in the Word file) of the document.
IMAGE_COUNT = "image_count"

HTML = "text/html"
MARKDOWN = "text/markdown"
TEXT = "text/plain"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def content_hash(markdown: str) -> str:
    """Return the sha256 hex digest of `markdown` encoded as UTF-8."""
    return hashlib.sha256(markdown.encode("utf-8")).hexdigest()


def make_document(
    markdown: str,
    *,
    source: str,
    title: str,
    content_type: str,
    **extra: int | str,
) -> Document:
    """Build a `Document` with the metadata every loader guarantees, plus `extra` keys."""
    metadata: dict[str, int | str] = {
        SOURCE: source,
        TITLE: title,
        CONTENT_TYPE: content_type,
        CONTENT_HASH: content_hash(markdown),
    }
    metadata.update(extra)
    return Document(page_content=markdown, metadata=metadata)
