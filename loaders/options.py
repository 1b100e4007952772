"""`LoadOptions`: the knobs of loading, crawling and PDF image handling."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from loaders.addresses import AddressPolicy

__all__ = ["ImageCaptioner", "LoadOptions"]

#: Describes an image (its bytes and file extension, e.g. "png") in one sentence;
#: `service.models.captions.OllamaCaptioner` is one. It raises `SynopsisError` on failure.
ImageCaptioner = Callable[[bytes, str], str]


@dataclass(frozen=True, kw_only=True)
class LoadOptions:
    """How sources are read and crawled.

    `crawl_depth` 0 loads only the given URL; N follows links on the same host under the
    same path prefix up to N levels deep. `max_bytes` caps every file and every HTTP
    response (decoded). `timeout` bounds each network operation (connecting, each read);
    `fetch_deadline` the whole fetch of one URL, its redirects and its body included, so
    that a server trickling a byte at a time cannot hold a fetch forever. `captioner` is
    off by default: PDF images are only counted; with one, each image's caption is added
    where the image sits. `drop_repeated_blocks`: text blocks repeated on many HTML
    pages of one directory or crawl (a menu, a footer) are dropped
    (`loaders.boilerplate`). `address_policy` is off by default (any host may be
    fetched, as a local command line wants); with one, every URL (robots.txt, the start
    URL, each redirect hop, each crawled link) is checked before it is connected to, and
    the connection goes to the checked address (`loaders.addresses`).

    The rest bound what a small file may expand to (docs/reliability.md, "Decompression
    bombs"). An HTML page, and the XML of a Word file, may have `max_markup_tags` tags
    (counted as `<` characters): conversion costs ~50 µs and hundreds of bytes per
    element, and no documentation page comes near (the largest page of the Python docs
    has about 35,000). A Word file is a zip: before anything in it is parsed, it may have
    `max_archive_members` members, which together inflate to `max_inflated_bytes` at most
    and its XML parts to `max_bytes`; a member over 1 MiB inflated may not inflate more
    than `max_compression_ratio` times its compressed size. A PDF may have
    `max_pdf_pages` pages and each page's text `max_page_chars` characters; the content
    streams of all its pages may inflate to `max_pdf_content_bytes` (each form counted as
    often as it is drawn: MuPDF interprets some 10 MB of content a second here, holding
    the GIL), and the document may draw `max_pdf_operations` things (text, paths, images,
    clips) and come to `max_bytes` characters of text.
    """

    crawl_depth: int = 0
    max_pages: int = 200
    concurrency: int = 4
    timeout: float = 20.0
    fetch_deadline: float = 60.0
    max_bytes: int = 20_000_000
    respect_robots: bool = True
    user_agent: str = "synopsis/0.1"
    captioner: ImageCaptioner | None = None
    drop_repeated_blocks: bool = True
    address_policy: AddressPolicy | None = None
    max_markup_tags: int = 500_000
    max_archive_members: int = 10_000
    max_inflated_bytes: int = 100_000_000
    max_compression_ratio: int = 100
    max_pdf_pages: int = 5_000
    max_page_chars: int = 200_000
    max_pdf_operations: int = 5_000_000
    max_pdf_content_bytes: int = 100_000_000
