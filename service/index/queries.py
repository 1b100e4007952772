"""What a search asks of the index and gets back, in plain terms (no Weaviate types).

`service.index.hybrid` runs these queries against Weaviate; the Protocols in
`service.index.interfaces`, the searcher (`service.query.search`) and the test fakes
speak the same types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from service.index import versions
from service.index.records import SummaryVector, header_path

__all__ = [
    "CHUNK_KEYWORD_PROPERTIES",
    "DEFAULT_SUMMARY_USE",
    "ORIGINAL_HIT_PROPERTIES",
    "HybridQuery",
    "Match",
    "SearchFilters",
    "SummaryUse",
    "like_prefix",
]

#: What BM25 reads of a chunk itself (its summary's text may join: `SummaryUse`).
CHUNK_KEYWORD_PROPERTIES = ("content", "headers", "identifiers")

#: What a search hit shows of an original.
# "summary" is the attached summary's text (empty while pending or filtered out), with its
# kind ("llm" or "extractive") and model (empty in an index built before they were kept).
ORIGINAL_HIT_PROPERTIES = [
    "content", "source", "title", "headers", "chunk_index", "summary", "summary_kind",
    "summary_model", "page_start", "page_end", "anchor", "version", "indexed_at",
]  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class SearchFilters:
    """Restrictions on what a search may return (all optional; combined with AND)."""

    source: str | None = None
    source_prefix: str | None = None
    header_prefix: str | None = None  # of the header path `A > B > C`
    title: str | None = None
    # `service.index.versions`: the version label to read (`*`: every one); None: in
    # each group of `latest` (group, version) only that version, and every chunk of no group.
    version: str | None = None
    latest: tuple[tuple[str, str], ...] = ()

    def admits_version(self, properties: Mapping[str, Any]) -> bool:
        """Whether an object with these properties (`version`, `version_group`) is of the
        version this search reads: what the store's filter does."""
        return versions.admits(properties, version=self.version, latest=dict(self.latest))

    def matches_nothing(self) -> bool:
        """True when no object can match: a `title` without a letter or digit. Titles are
        word-tokenized, and Weaviate refuses a filter that leaves no word to match."""
        return bool(self.title) and not any(char.isalnum() for char in self.title or "")

    def needs_exact_check(self) -> bool:
        """True when a prefix holds a `like` wildcard, which Weaviate matched as any one
        character (`like_prefix`): then `admits` checks each match."""
        return any(
            char in _LIKE_WILDCARDS
            for prefix in (self.source_prefix, self.header_prefix)
            for char in prefix or ""
        )

    def admits(self, properties: Mapping[str, Any]) -> bool:
        """Whether an object with these properties (`source`, `headers`) starts with the
        prefixes as given."""
        source = str(properties.get("source") or "")
        path = header_path([str(header) for header in properties.get("headers") or []])
        return source.startswith(self.source_prefix or "") and path.startswith(
            self.header_prefix or ""
        )


#: Weaviate's `like` wildcards: any characters, one character. It has no escape for them.
_LIKE_WILDCARDS = ("*", "?")


def like_prefix(prefix: str) -> str:
    """The `like` pattern of the values that start with `prefix`. Weaviate's `like` has no
    escape, so a `*` or `?` of the prefix is sent as `?`: one character, itself or another
    (`SearchFilters.admits` then drops what has another there); the prefix can no longer
    match more than its own length."""
    return "".join("?" if char in _LIKE_WILDCARDS else char for char in prefix) + "*"


@dataclass(frozen=True, kw_only=True)
class HybridQuery:
    """One hybrid (BM25 + vector) query, in plain terms."""

    keywords: str  # the BM25 query text
    vector: list[float]
    alpha: float  # 0: BM25 only, 1: vector only
    limit: int
    filters: SearchFilters = field(default_factory=SearchFilters)
    ranked: bool = False  # rankedFusion instead of relativeScoreFusion
    with_vectors: bool = False  # return the matches' vectors (for distances)
    explain: bool = False


@dataclass(frozen=True, kw_only=True)
class SummaryUse:
    """How a search over the chunks reads each chunk's attached summary. Its defaults are
    `joint` search's (`DEFAULT_SUMMARY_USE`), chosen by the rule in docs/eval.md; the
    search request and the settings take theirs from here."""

    vector: SummaryVector = "context"  # which of its vectors joins the chunk's own
    weight: float = 1.0  # that vector's share of the vector score (the rest: `content`)
    # The weight of the summary's words in BM25 against the chunk's own (0: not read).
    keyword_weight: float = 0.0

    def keyword_properties(self) -> list[str]:
        """The properties BM25 reads, with the summary's boost (`summary^0.5`)."""
        if self.keyword_weight <= 0:
            return list(CHUNK_KEYWORD_PROPERTIES)
        boost = "" if self.keyword_weight == 1.0 else f"^{self.keyword_weight:g}"
        return [*CHUNK_KEYWORD_PROPERTIES, f"summary{boost}"]


#: How `joint` search reads the summaries unless told otherwise.
DEFAULT_SUMMARY_USE = SummaryUse()


@dataclass(frozen=True, kw_only=True)
class Match:
    """One object a hybrid query returned: its id, properties, score and vectors."""

    id: str
    properties: dict[str, Any]
    score: float
    vectors: dict[str, list[float]] = field(default_factory=dict)
