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
