"""The search settings: the defaults of a search request, joint mode's use of the
summaries, the relevance gate."""

from __future__ import annotations

import typing
from dataclasses import dataclass

from service.errors import ConfigurationError
from service.index.queries import DEFAULT_SUMMARY_USE
from service.index.records import SummaryVector
from service.query.modes import Mode
from service.settings.fields import Section, setting

__all__ = ["MAX_CONTEXT_TOKENS", "MIN_CONTEXT_TOKENS", "SUMMARY_VECTORS", "SearchSettings"]

#: The token budgets a search's context or a page of read text may have (cl100k_base):
#: below the first, hardly one chunk fits; past the second, read a document instead.
MIN_CONTEXT_TOKENS = 500
MAX_CONTEXT_TOKENS = 100_000
#: The vectors of a chunk's summary that `joint` search can read (service/index/records.py).
SUMMARY_VECTORS: tuple[SummaryVector, ...] = typing.get_args(SummaryVector)


@dataclass(frozen=True, kw_only=True)
class SearchSettings(Section):
    """Search (`SYNOPSIS_SEARCH_*`, `SYNOPSIS_MAX_VECTOR_DISTANCE`)."""

    TOPIC = "Search"
    PREFIX = "search_"

    # The measurements behind the search defaults: docs/eval.md.
    k: int = setting(5, "Hits of a search unless the request says otherwise.")
    alpha: float = setting(0.5, "Hybrid search's balance: 0 keyword (BM25) only, 1 vector only.")
    mode: Mode = setting(
        "joint", "The search mode unless the request says otherwise (docs/search.md)."
    )
    summary_vector: SummaryVector = setting(
        DEFAULT_SUMMARY_USE.vector,
        "`joint` mode: the summary vector it reads (`context`: summary and chunk embedded "
        "together; `summary`: the summary alone).",
    )
    summary_weight: float = setting(
        DEFAULT_SUMMARY_USE.weight,
        "`joint` mode: the summary vector's share of the vector score, 0 to 1 (the rest: the "
        "chunk's own vector).",
    )
    summary_keyword_weight: float = setting(
        DEFAULT_SUMMARY_USE.keyword_weight,
        "`joint` mode: the weight of the summary's words in BM25 against the chunk's, 0 to 1 "
        "(0: BM25 reads the chunk only).",
    )
    max_tokens: int = setting(
        5000,
        "Token budget of a search given as context (MCP `search_docs`, `POST /search` with "
        "`expand: section`) and of a page of read text, 500 to 100000.",
    )
    # Weaviate's hybrid scores are normalized per query, so they cannot serve as such a gate.
    max_vector_distance: float = setting(
        0.0,
        "Relevance gate: a hit farther than this cosine distance from the query is dropped; "
        "0: off.",
        name="max_vector_distance",
    )

    def check(self) -> None:
        names = self.variables()
        if not MIN_CONTEXT_TOKENS <= self.max_tokens <= MAX_CONTEXT_TOKENS:
            raise ConfigurationError(
                f"{names['max_tokens']} must be between "
                f"{MIN_CONTEXT_TOKENS} and {MAX_CONTEXT_TOKENS}"
            )
        for attribute in ("summary_weight", "summary_keyword_weight"):
            if not 0.0 <= getattr(self, attribute) <= 1.0:
                raise ConfigurationError(f"{names[attribute]} must be between 0 and 1")
