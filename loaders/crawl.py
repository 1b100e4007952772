"""Placeholder."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
from langchain_core.documents import Document

from loaders.options import LoadOptions
from service.errors import LoaderError

__all__ = ["crawl"]


def crawl(
    start: str,
    *,
    options: LoadOptions,
    on_error: Callable[[LoaderError], None],
    client: httpx.Client | None = None,
) -> Iterator[Document]:
    """Documents of `start` and the pages it links to."""
    on_error(LoaderError("URLs are not supported yet", source=start))
    yield from ()
