"""`LoadOptions`: the knobs of loading, crawling and PDF image handling."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LoadOptions"]


@dataclass(frozen=True, kw_only=True)
class LoadOptions:
    """How sources are read and crawled.

    `crawl_depth` 0 loads only the given URL; N follows links on the same host under
    the same path prefix up to N levels deep. `max_bytes` caps every file and every HTTP
    response. `vision_model` is off by default: PDF images are only counted; when a model
    is named, images are handed to the captioning hook in `loaders.images`.
    """

    crawl_depth: int = 0
    max_pages: int = 200
    concurrency: int = 4
    timeout: float = 20.0
    max_bytes: int = 20_000_000
    respect_robots: bool = True
    user_agent: str = "synopsis/0.1"
    vision_model: str | None = None
