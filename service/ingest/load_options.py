"""The loader options an ingest or a sync reads its sources with, from the settings.

`loaders.LoadOptions` cannot read `Settings` (the loaders do not import the service), so
the service builds them here: the crawl's extent, the fetch deadline, the limits on what a
source may expand to (`settings.loader_limits`) and, with a `vision_model`, the captioner
of PDF images (`service.models.captions`).
"""

from __future__ import annotations

import dataclasses

from loaders import LoadOptions
from service.settings import Settings

__all__ = ["load_options"]


def load_options(
    settings: Settings, *, crawl_depth: int | None = None, max_pages: int | None = None
) -> LoadOptions:
    """Loader options from the settings: the crawl's extent, the limits on what a source
    may expand to (`settings.loader_limits`); with a `vision_model`, PDF images are captioned."""
    captioner = None
    if settings.models.vision_model:
        # The captioner's Ollama client loads only when a vision model is configured.
        from service.models.captions import OllamaCaptioner  # noqa: PLC0415

        captioner = OllamaCaptioner(settings)
    limits = dataclasses.asdict(settings.loader_limits)
    return LoadOptions(
        crawl_depth=settings.urls.crawl_depth if crawl_depth is None else crawl_depth,
        max_pages=settings.urls.max_pages if max_pages is None else max_pages,
        fetch_deadline=settings.urls.fetch_deadline,
        captioner=captioner,
        **limits,
    )
