"""Request and response bodies of the HTTP API (msgspec Structs, so Litestar validates them)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

import msgspec

from service.index.records import SummaryKind
from service.index.versions import VERSION_FILTER_PATTERN
from service.query.answer import Answer, AnswerKind
from service.query.context import ContextRequest, Expand, Passage, candidates_for
from service.query.hits import HIT_FIELDS, Hit
from service.query.modes import Mode
from service.query.search import SearchRequest, search_request
from service.settings import ANSWER_MAX_K, MAX_CONTEXT_TOKENS, MIN_CONTEXT_TOKENS, Settings

__all__ = [
    "AnswerToken",
    "AskDone",
    "AskRequestBody",
    "AskResponse",
    "DeletedSource",
    "ErrorBody",
    "Health",
    "Readiness",
    "SearchHit",
    "SearchRequestBody",
    "SectionSpan",
    "SummaryKindField",
    "SummaryModelField",
]

# Upper bounds are settings (SYNOPSIS_API_MAX_K, SYNOPSIS_API_MAX_QUERY_CHARS), checked in
# service/api/limits.py; `extra["setting"]` names the one the OpenAPI document
# declares as the bound (service/api/openapi.py).
Count = Annotated[
    int,
    msgspec.Meta(
        ge=1,
        description="Originals to return (at most SYNOPSIS_API_MAX_K, 100).",
        extra={"setting": "api_max_k"},
    ),
]
Distance = Annotated[
    float,
    msgspec.Meta(
        ge=0.0,
        le=2.0,
        description="Absolute relevance gate: drop hits whose matched object is farther than "
        "this cosine distance from the query (0 = off). Hybrid scores are normalized per "
        "query and cannot serve as such a gate.",
    ),
]
#: Some character that is not white space. The class is spelled out so that JSON Schema's
#: regular expressions (ECMA-262) and Python's (which the body decoder and the core use)
#: agree: each counts characters as `\s` that the other does not (U+001C-U+001F, U+0085;
#: U+FEFF).
NOT_ONLY_SPACE = (
    r"[^\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
)
ContextTokens = Annotated[
    int,
    msgspec.Meta(
        ge=MIN_CONTEXT_TOKENS,
        le=MAX_CONTEXT_TOKENS,
        description="Token budget (cl100k_base) of the hits as context: they are taken best "
        "first while the whole rendering (each hit's header path, location, summary and "
        "text) fits; a section too large for what is left comes as its matched chunk. "
        "Given without `expand`, the hits stay chunks.",
    ),
]
ExpandField = Annotated[
    Expand,
    msgspec.Meta(
        description="`section`: each hit's text is its whole section (the consecutive "
        "chunks under its header path), each section once, within `max_tokens` "
        "(SYNOPSIS_SEARCH_MAX_TOKENS, 5000, when not given); `none`: the matched chunk."
    ),
]
Text = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        pattern=NOT_ONLY_SPACE,
        description="Not only white space; at most SYNOPSIS_API_MAX_QUERY_CHARS (4000).",
        extra={"setting": "api_max_query_chars"},
    ),
]


#: A source name (sources are URLs or paths; a URL ingest takes 2048 characters).
SourceText = Annotated[str, msgspec.Meta(max_length=2048)]
#: A prefix of a source or of a header path (`A > B > C`).
PrefixText = Annotated[
    str,
    msgspec.Meta(
        max_length=2048,
        description="What the value starts with; `*` and `?` are characters, not wildcards.",
    ),
]
#: A document title (an inline ingest takes 500 characters).
TitleText = Annotated[str, msgspec.Meta(max_length=500)]
#: The version a search reads (`service.index.versions`).
VersionFilter = Annotated[
    str,
    msgspec.Meta(
        pattern=VERSION_FILTER_PATTERN,
        description="Read only the chunks of this version label (`*`: every version). "
        "Left out: the latest version of each group of registered sources, and every "
        "chunk of no group.",
    ),
]


def _meaning(name: str) -> msgspec.Meta:
    """The description of a hit's field in the OpenAPI document: what the core says it
    means (`service.query.hits.HIT_FIELDS`)."""
    return msgspec.Meta(description=_MEANINGS[name])


_MEANINGS = {spec.name: spec.meaning for spec in HIT_FIELDS}


class SearchRequestBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A search; fields left out take the server's settings (`SYNOPSIS_SEARCH_*`)."""

    query: Text
    k: Count | None = None
    mode: Mode | None = None  # None: SYNOPSIS_SEARCH_MODE (joint)
    alpha: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] | None = None
    fusion: Literal["relative", "ranked"] = "relative"
    source: SourceText | None = None
    # A `?` or `*` in a prefix means itself (service/index/queries.py, `like_prefix`).
    source_prefix: PrefixText | None = None
    header_prefix: PrefixText | None = None
    title: TitleText | None = None
    version: VersionFilter | None = None
    max_vector_distance: Distance | None = None
    explain: bool = False
    expand: ExpandField = "none"
    max_tokens: ContextTokens | None = None

    def to_context(self, settings: Settings) -> ContextRequest | None:
        """How the hits become context (None: plain chunks, as without these fields)."""
        if self.expand == "none" and self.max_tokens is None:
            return None
        return ContextRequest(
            expand=self.expand, max_tokens=self.max_tokens or settings.search.max_tokens
        )

    def to_request(self, settings: Settings) -> SearchRequest:
        """The core `SearchRequest`, with the settings' defaults filled in; a budgeted
        search without `k` looks at as many hits as its budget may hold."""
        context = self.to_context(settings)
        default_k = candidates_for(context.max_tokens) if context is not None else None
        return search_request(
            settings,
            self.query,
            k=self.k or default_k,
            mode=self.mode,
            alpha=self.alpha,
            fusion=self.fusion,
            source=self.source,
            source_prefix=self.source_prefix,
            header_prefix=self.header_prefix,
            title=self.title,
            version=self.version,
            max_vector_distance=_gate(self.max_vector_distance, settings),
            explain=self.explain,
        )


#: What a summary shown with a chunk is (search hits, a document's chunks).
SummaryKindField = Annotated[SummaryKind, _meaning("summary_kind")]
SummaryModelField = Annotated[str, _meaning("summary_model")]


class SearchHit(msgspec.Struct, kw_only=True):
    """One original chunk, with its summary (null while its chunk has none yet).

    `score` ranks hits within one response only (hybrid scores are normalized per query;
    in `fused` mode it is the reciprocal-rank score). `distance` is the absolute cosine
    distance of the matched object to the query.
    """

    # The fields of a core `Hit`, in `HIT_FIELDS`' order, each described by its meaning
    # there (tests/service/test_hit_fields.py checks every edge against them).
    id: Annotated[str, _meaning("id")]
    source: Annotated[str, _meaning("source")]
    title: Annotated[str, _meaning("title")]
    headers: Annotated[list[str], _meaning("headers")]
    chunk_index: Annotated[int, _meaning("chunk_index")]
    content: Annotated[str, _meaning("content")]
    summary: Annotated[str, _meaning("summary")] | None
    summary_kind: SummaryKindField | None = None
    summary_model: SummaryModelField | None = None
    score: Annotated[float, _meaning("score")]
    leg: Annotated[str, _meaning("leg")]
    distance: Annotated[float, _meaning("distance")] | None = None
    scores: Annotated[dict[str, float], _meaning("scores")] = msgspec.field(default_factory=dict)
    page_start: Annotated[int, _meaning("page_start")] | None = None
    page_end: Annotated[int, _meaning("page_end")] | None = None
    anchor: Annotated[str, _meaning("anchor")] = ""
    version: Annotated[str, _meaning("version")] | None = None
    indexed_at: Annotated[dt.datetime, _meaning("indexed_at")] | None = None
    # With `expand` or `max_tokens` only: the tokens the hit took of the budget, and with
    # `expand: section` which chunks of its section `content` holds.
    tokens: int | msgspec.UnsetType = msgspec.UNSET
    section: SectionSpan | msgspec.UnsetType = msgspec.UNSET

    @classmethod
    def from_hit(cls, hit: Hit) -> SearchHit:
        """The response form of a core `Hit`: every field of `HIT_FIELDS` (copies of
        lists and dicts); a field this Struct lacks is a TypeError, not a silent loss."""
        return cls(**{spec.name: _copy(getattr(hit, spec.name)) for spec in HIT_FIELDS})

    @classmethod
    def from_passage(cls, passage: Passage) -> SearchHit:
        """The response form of a hit given as context: `content` is the passage's text."""
        hit = cls.from_hit(passage.hit)
        hit.content = passage.content
        hit.tokens = passage.tokens
        if passage.expanded:
            hit.section = SectionSpan(
                chunk_indexes=list(passage.chunk_indexes),
                chunks=list(passage.section_chunks),
                complete=passage.complete,
            )
        return hit


class SectionSpan(msgspec.Struct, kw_only=True):
    """The chunks of a hit's section: those its `content` holds, in order, and all of the
    section's; `complete` is false when only the matched chunk fit the budget."""

    chunk_indexes: list[int]
    chunks: list[int]
    complete: bool


class AskRequestBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A question answered from the indexed documents only."""

    question: Text
    k: (
        Annotated[int, msgspec.Meta(ge=1, le=ANSWER_MAX_K, extra={"setting": "api_max_k"})] | None
    ) = None
    max_vector_distance: Distance | None = None
    version: VersionFilter | None = None
    # Server-sent events instead of one JSON body (`POST /ask`'s description).
    stream: bool = False

    def to_request(self, settings: Settings) -> SearchRequest:
        """The search that retrieves the passages the answer may use."""
        return search_request(
            settings,
            self.question,
            k=self.k or None,
            version=self.version,
            max_vector_distance=(
                settings.answers.max_vector_distance
                if self.max_vector_distance is None
                else self.max_vector_distance
            ),
        )


AnswerKindField = Annotated[
    AnswerKind,
    msgspec.Meta(
        description="generated: the model's reply, which passed the grounding check; "
        "extractive: the best passage's lead sentences and code block, because the reply "
        'failed it or was "I don\'t know" (`SYNOPSIS_ANSWER_QUOTE_ON_REFUSAL`); refusal: '
        '"I don\'t know".'
    ),
]
Support = Annotated[
    float | None,
    msgspec.Meta(
        description="Grounding support of the model's reply: the weakest sentence's share "
        "of content words found in a passage (null when no reply was checked)."
    ),
]
GroundingReasons = Annotated[
    list[str], msgspec.Meta(description="Why the reply failed the grounding check.")
]


class AskResponse(msgspec.Struct, kw_only=True):
    """The answer; `[n]` in it cites `citations[n - 1]`."""

    answer: str
    citations: list[SearchHit]
    llm_called: bool
    # What the question names that no retrieved passage mentions (then "I don't know").
    missing_terms: list[str]
    kind: AnswerKindField
    support: Support = None
    grounding: GroundingReasons = msgspec.field(default_factory=list)

    @classmethod
    def from_answer(cls, answer: Answer) -> AskResponse:
        """The response form of a core `Answer`."""
        return cls(
            answer=answer.text,
            citations=[SearchHit.from_hit(hit) for hit in answer.citations],
            llm_called=answer.llm_called,
            missing_terms=list(answer.missing_terms),
            **_verdict(answer),
        )


DraftState = Annotated[
    Literal["accepted", "replaced", "none"],
    msgspec.Meta(
        description="What became of the streamed draft: `accepted` (it passed the check and "
        "is the answer), `replaced` (the client replaces it with `answer`), `none` (nothing "
        "was drafted: a refusal without the model)"
    ),
]


class AnswerToken(msgspec.Struct, kw_only=True):
    """A `token` event of a streamed answer: a piece of the model's reply.

    `draft`: true while the reply is unchecked (every piece of the model's reply: the
    grounding check needs the whole of it; the `done` event says whether the draft was
    accepted or replaced). False only for the one line of a refusal without the model,
    which is the answer itself."""

    text: str
    draft: bool = True


class AskDone(msgspec.Struct, kw_only=True):
    """The `done` event of a streamed answer: the checked answer, without its citations
    (the `citations` event before it has them). `draft`: whether the streamed draft was
    `accepted` as the answer or `replaced` by it (or `none` was streamed); `replaced`:
    `answer` differs from the streamed tokens, which the client replaces with it."""

    answer: str
    draft: DraftState
    replaced: bool
    llm_called: bool
    missing_terms: list[str]
    kind: AnswerKindField
    support: Support = None
    grounding: GroundingReasons = msgspec.field(default_factory=list)

    @classmethod
    def from_answer(cls, answer: Answer, *, streamed: str | None) -> AskDone:
        """The `done` event of `answer`, whose draft tokens made `streamed` (None: nothing
        was drafted, the answer's one line was streamed as it is)."""
        replaced = streamed is not None and answer.text != streamed.strip()
        state: Literal["accepted", "replaced", "none"] = (
            "none" if streamed is None else "replaced" if replaced else "accepted"
        )
        return cls(
            answer=answer.text,
            draft=state,
            replaced=replaced,
            llm_called=answer.llm_called,
            missing_terms=list(answer.missing_terms),
            **_verdict(answer),
        )


def _verdict(answer: Answer) -> dict[str, Any]:
    reasons = list(answer.grounding.reasons) if answer.grounding is not None else []
    return {"kind": answer.kind, "support": answer.support, "grounding": reasons}


class DeletedSource(msgspec.Struct, kw_only=True):
    """What `DELETE /documents/{source}` removed."""

    source: str
    originals: int
    summaries: int


class Health(msgspec.Struct, kw_only=True):
    """`GET /health`: the process answers (nothing else is checked)."""

    status: Literal["ok"] = "ok"


class Readiness(msgspec.Struct, kw_only=True):
    """`GET /ready`: whether requests can be served; each part "ok", else a category of
    why not (the details are logged: this route needs no key).

    `weaviate`: ok, not ready, unreachable. `ollama`: ok, unreachable, `HTTP <status>`.
    `schema`: "ok" when the collections exist and fit the configured embedding model,
    "empty: nothing is indexed yet" before the first ingest creates them (still ready),
    mismatch (built with another embedding model or schema), unreadable, or unknown while
    Weaviate is down.
    """

    status: Literal["ok", "unavailable"]
    weaviate: str
    ollama: str
    schema: str


class ErrorBody(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The body of every error response (`service.api.exceptions`).

    `request_id` is also the response's `X-Request-ID` and names the request in the
    server's log. `field` is the request field a 4xx is about (`body` for the body as a
    whole), `extra` Litestar's validation details, `dependency` the server (`weaviate`,
    `ollama`) a 503 is waiting for; each is left out when it does not apply.
    """

    status_code: int
    error: str
    detail: str
    request_id: str = ""
    field: str | None = None
    dependency: str | None = None
    extra: Any = None


def _gate(value: float | None, settings: Settings) -> float:
    return settings.search.max_vector_distance if value is None else value


def _copy(value: Any) -> Any:
    """`value`, with a list or a dict copied (a response must not share the core's)."""
    if isinstance(value, list):
        return list(value)
    return dict(value) if isinstance(value, dict) else value
