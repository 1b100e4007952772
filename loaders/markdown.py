"""Markdown and plain-text sources: decoded, line endings normalised, otherwise unchanged."""

from __future__ import annotations

from langchain_core.documents import Document

from loaders.documents import MARKDOWN, TEXT, make_document
from splitters.base.markdown_syntax import iter_atx_headers

__all__ = ["first_h1", "markdown_document", "text_document"]


def first_h1(markdown: str) -> str | None:
    """Text of the first ATX level-1 header outside code with any text, or None."""
    for _, header in iter_atx_headers(markdown):
        if header.level == 1 and header.text:
            return header.text.strip()
    return None


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def markdown_document(text: str, *, source: str, fallback_title: str) -> Document:
    """A Markdown source as a Document; title is its first H1 outside code, else the fallback."""
    markdown = _normalise_newlines(text)
    return make_document(
        markdown,
        source=source,
        title=first_h1(markdown) or fallback_title,
        content_type=MARKDOWN,
    )


def text_document(text: str, *, source: str, fallback_title: str) -> Document:
    """A plain-text source as a Document, titled by `fallback_title` (e.g. the file stem).

    Plain text has no header syntax, so a leading `#` line (often a comment) is not a title.
    """
    return make_document(
        _normalise_newlines(text), source=source, title=fallback_title, content_type=TEXT
    )
