"""Loaders: documentation sources → LangChain `Document`s whose `page_content` is Markdown.

`load()` takes file paths, directories and http(s) URLs and yields one Document at a
time. Every Document's metadata has `source` (absolute path or canonical URL), `title`,
`content_type` (of the source) and `content_hash` (sha256 of the Markdown); PDF
Documents add `page_start`, `page_end` and `image_count`. The keys are constants in
`loaders.documents`, and the page keys, which the splitters read too, in
`splitters.base.metadata`: the only part of `splitters` the loaders import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import httpx
from langchain_core.documents import Document

from loaders.addresses import AddressPolicy
from loaders.boilerplate import drop_repeated_blocks
from loaders.crawl import crawl
from loaders.documents import (
    CONTENT_HASH,
    CONTENT_TYPE,
    IMAGE_COUNT,
    SOURCE,
    TITLE,
    content_hash,
)
from loaders.files import iter_files, load_file
from loaders.options import ImageCaptioner, LoadOptions
from splitters.base.errors import LoaderError, UnsafeUrlError
from splitters.base.metadata import PAGE_END, PAGE_START

__all__ = [
    "CONTENT_HASH",
    "CONTENT_TYPE",
    "IMAGE_COUNT",
    "PAGE_END",
    "PAGE_START",
    "SOURCE",
    "TITLE",
    "AddressPolicy",
    "ImageCaptioner",
    "LoadOptions",
    "LoaderError",
    "UnsafeUrlError",
    "content_hash",
    "load",
]


def _is_url(source: str) -> bool:
    return source.lower().startswith(("http://", "https://"))


def load(
    sources: Sequence[str],
    *,
    options: LoadOptions | None = None,
    on_error: Callable[[LoaderError], None] | None = None,
    http_client: httpx.Client | None = None,
) -> Iterator[Document]:
    """Yield the Documents of `sources`, one at a time, in a deterministic order.

    Sources are taken in the given order: a file yields its Documents, a directory the
    Documents of its `.html`, `.htm`, `.md`, `.markdown`, `.txt`, `.pdf` and `.docx`
    files in sorted path order, and a URL its page (or, with `options.crawl_depth` > 0,
    the pages of its crawl, breadth first). When a source fails, `on_error` receives the
    `LoaderError` and loading goes on; without `on_error` the error is raised.
    `http_client` is used for URLs (one is created, and closed, when it is None); with
    `options.address_policy`, URLs whose host is not allowed are refused before any
    connection (`UnsafeUrlError`, `loaders.addresses`).

    The HTML pages of one directory or one crawl are one site: with
    `options.drop_repeated_blocks` (the default), text blocks repeated on many of its
    pages are dropped (`loaders.boilerplate`); a page is then yielded once some later
    pages have been read.
    """
    opts = options or LoadOptions()

    def fail(error: LoaderError) -> None:
        if on_error is None:
            raise error
        on_error(error)

    def site(documents: Iterator[Document]) -> Iterator[Document]:
        return drop_repeated_blocks(documents) if opts.drop_repeated_blocks else documents

    for source in sources:
        if _is_url(source):
            yield from site(crawl(source, options=opts, on_error=fail, client=http_client))
            continue
        path = Path(source).expanduser()
        if path.is_dir():
            yield from site(
                document for file in iter_files(path) for document in _guarded(file, opts, fail)
            )
        elif path.exists():
            yield from _guarded(path, opts, fail)
        else:
            fail(LoaderError("no such file, directory or URL", source=source))


def _guarded(
    path: Path, options: LoadOptions, fail: Callable[[LoaderError], None]
) -> Iterator[Document]:
    try:
        yield from load_file(path, options=options)
    except LoaderError as error:
        fail(error)
