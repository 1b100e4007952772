"""Request limits of the search, answer and crawl routes, from the settings
(`SYNOPSIS_API_MAX_*`).

Static bounds (a `k` of at least 1, a non-empty query) live in the request Structs; the
bounds a deployment may change are checked here, after decoding and before any work, and
a violation is a `RequestLimitError` naming the field (HTTP 400). The body size is
Litestar's `request_max_body_size` (HTTP 413), set app-wide from `api_max_body_bytes`.
"""

from __future__ import annotations

from service.errors import RequestLimitError
from service.settings import ANSWER_MAX_K, Settings

__all__ = ["check_answer_limits", "check_crawl_limits", "check_search_limits"]


def _check_text(text: str, field: str, settings: Settings) -> None:
    limit = settings.api_limits.max_query_chars
    if len(text) > limit:
        raise RequestLimitError(
            f"{field} has {len(text)} characters; at most {limit} are accepted "
            f"({Settings.env_names()['api_max_query_chars']})",
            field=field,
        )


def _check_k(k: int | None, limit: int) -> None:
    if k is not None and k > limit:
        raise RequestLimitError(f"k is {k}; at most {limit} results can be asked for", field="k")


def check_search_limits(query: str, k: int | None, settings: Settings) -> None:
    """Raise `RequestLimitError` when a search's `query` or `k` is over its limit."""
    _check_text(query, "query", settings)
    _check_k(k, settings.api_limits.max_k)


def check_answer_limits(question: str, k: int | None, settings: Settings) -> None:
    """Raise `RequestLimitError` when a question or its `k` is over its limit."""
    _check_text(question, "question", settings)
    _check_k(k, min(ANSWER_MAX_K, settings.api_limits.max_k))


def check_crawl_limits(crawl_depth: int, max_pages: int, settings: Settings) -> None:
    """Raise `RequestLimitError` when a crawl's depth or page count is over its limit
    (`POST /documents` with a URL, `POST /sources` for a site)."""
    _at_most("crawl_depth", crawl_depth, settings.api_limits.max_crawl_depth, "api_max_crawl_depth")
    _at_most("max_pages", max_pages, settings.api_limits.max_crawl_pages, "api_max_crawl_pages")


def _at_most(field: str, value: int, limit: int, setting: str) -> None:
    if value > limit:
        var = Settings.env_names()[setting]
        raise RequestLimitError(f"{field} {value} exceeds the limit {limit} ({var})", field=field)
