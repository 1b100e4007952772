"""The settings of URL sources: how far a crawl goes, what a fetch may reach, its deadline."""

from __future__ import annotations

from dataclasses import dataclass

from service.settings.fields import Section, setting

__all__ = ["UrlSettings"]


@dataclass(frozen=True, kw_only=True)
class UrlSettings(Section):
    """URL sources."""

    TOPIC = "URL sources"
    PREFIX = ""

    crawl_depth: int = setting(0, "URL sources: levels of same-site links to follow.")
    max_pages: int = setting(200, "URL sources: pages fetched at most.")
    fetch_allow: str = setting(
        "",
        "Hosts or networks (comma-separated: `docs.internal, 10.0.0.0/8`) a URL ingest over "
        "the HTTP API may reach although loopback or private (the CLI does not check).",
    )
    fetch_deadline: float = setting(
        60.0, "Seconds for the whole fetch of one URL, its redirects and body included."
    )
