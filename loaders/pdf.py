"""PDF → Markdown (placeholder until the PDF loader lands)."""

from __future__ import annotations

from collections.abc import Iterator

from langchain_core.documents import Document

from loaders.options import LoadOptions
from service.errors import LoaderError

__all__ = ["pdf_documents"]


def pdf_documents(
    data: bytes, *, source: str, fallback_title: str, options: LoadOptions
) -> Iterator[Document]:
    """Documents of a PDF."""
    raise LoaderError("PDF loading is not implemented yet", source=source)
    yield  # pragma: no cover
