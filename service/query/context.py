"""Search hits as context for a model: each expanded to its whole section, cut to a budget.

A search returns chunks, and a chunk is often part of a section: the third of four chunks
under "4.7. Defining Functions" reads badly alone. `build_context` turns the ranked hits
into *passages*: with `expand="section"` each hit becomes the whole section it is part of
— the run of consecutive chunks of its source that share its header path (the text under
that header up to the next header of any level; subsections are their own sections) —
and with `expand="none"` the hit's chunk alone. Each section is given once, in the rank
of its best hit.

The passages are then cut to `max_tokens` (cl100k_base, as the splitter counts): they
are taken in rank order while the whole Markdown rendering (`SearchContext.text`: a
header line, one block per passage with its header path, `source#anchor` and summary,
and the note on what was left out) stays within the budget. A section too large for
what is left is given as its matched chunk alone, marked as a part, when that fits;
otherwise it is left out. Whatever is left out is listed in the note, so a reader knows
to ask for it (`read_section`), and every caller — POST /search, the retrievers, the MCP
tool — gets the same selection for the same query and budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from service.errors import SearchError
from service.index.records import header_path
from service.index.store import SourceChunk
from service.query.search import Hit
from service.settings import MAX_CONTEXT_TOKENS, MAX_K, MIN_CONTEXT_TOKENS
from splitters.encoding import count_tokens

__all__ = [
    "EXPANDS",
    "MAX_CONTEXT_TOKENS",
    "MIN_CONTEXT_TOKENS",
    "ContextRequest",
    "Expand",
    "LeftOut",
    "Passage",
    "SearchContext",
    "SectionReader",
    "build_context",
    "candidates_for",
]

Expand = Literal["none", "section"]
EXPANDS: tuple[Expand, ...] = ("none", "section")

#: Hits searched per token of budget: a chunk holds at most ~500 tokens, a section more;
#: one candidate per 250 tokens leaves room for short sections without searching far
#: past what can be shown (5,000 tokens: 20 candidates).
_TOKENS_PER_CANDIDATE = 250
_MIN_CANDIDATES = 5
#: At most this many left-out sections are named in the note (the rest are counted).
_NOTE_ITEMS = 8
_SEPARATOR = "\n\n"
#: The query is repeated in the header line up to this many characters.
_SHOWN_QUERY_CHARS = 200


def candidates_for(max_tokens: int) -> int:
    """How many hits a budgeted search looks at when the caller names no `k`."""
    return max(_MIN_CANDIDATES, min(MAX_K, max_tokens // _TOKENS_PER_CANDIDATE))


@dataclass(frozen=True, kw_only=True)
class ContextRequest:
    """How search hits become context: expanded or not, and the token budget."""

    expand: Expand = "section"
    max_tokens: int = 5000

    def validate(self) -> None:
        """Raise SearchError for a request that cannot be met."""
        if self.expand not in EXPANDS:
            raise SearchError(f"expand must be one of {', '.join(EXPANDS)}, not {self.expand!r}")
        if not MIN_CONTEXT_TOKENS <= self.max_tokens <= MAX_CONTEXT_TOKENS:
            raise SearchError(
                f"max_tokens must be between {MIN_CONTEXT_TOKENS} and {MAX_CONTEXT_TOKENS}, "
                f"not {self.max_tokens}"
            )


class SectionReader(Protocol):
    """The read `build_context` makes: the chunks of whole sections (`Store` has it)."""

    def section_chunks(
        self, keys: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], list[SourceChunk]]: ...


@dataclass(frozen=True, kw_only=True)
class Passage:
    """One section (or chunk) given as context, with the hit that found it.

    `chunk_indexes` are the chunks given, `section_chunks` all chunks of the section;
    `complete` is False when only the matched chunk of a larger section fit. `tokens`
    counts the passage's Markdown block (`block`), which holds `content`.
    """

    hit: Hit
    content: str
    chunk_indexes: tuple[int, ...]
    section_chunks: tuple[int, ...]
    complete: bool
    expanded: bool
    block: str
    tokens: int

    @property
    def location(self) -> str:
        """`source#anchor`: where a reader opens the section."""
        return self.hit.location


@dataclass(frozen=True, kw_only=True)
class LeftOut:
    """A matched section that did not fit, with what it would have cost."""

    location: str
    path: str
    tokens: int


@dataclass(frozen=True, kw_only=True)
class SearchContext:
    """The passages of one budgeted search and what was left out; `text()` renders it."""

    query: str
    max_tokens: int
    passages: list[Passage] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    note_items: int = _NOTE_ITEMS  # left-out sections named in the note

    def text(self) -> str:
        """The Markdown a model reads: within `max_tokens` (cl100k_base)."""
        return _render(self.query, self.max_tokens, self.passages, self.left_out, self.note_items)

    @property
    def tokens(self) -> int:
        """cl100k_base tokens of `text()`."""
        return count_tokens(self.text())


@dataclass(frozen=True, kw_only=True)
class _Candidate:
    hit: Hit
    section: list[SourceChunk]  # the whole run (one chunk when not expanded)
    expanded: bool


def build_context(
    query: str, hits: Sequence[Hit], reader: SectionReader, request: ContextRequest
) -> SearchContext:
    """The passages of `hits` (best first) under `request`; see the module docstring."""
    request.validate()
    budget = request.max_tokens
    candidates = _candidates(hits, reader, expand=request.expand == "section")
    # The note's length depends on what is left out, so the blocks' share of the budget
    # is found by trying: fill, render, and shrink by the overflow until it fits.
    allowance = budget - count_tokens(_header(query, 0))
    passages: list[Passage] = []
    left_out: list[LeftOut] = []
    for _ in range(8):
        passages, left_out = _fill(candidates, allowance)
        overflow = count_tokens(_render(query, budget, passages, left_out)) - budget
        if overflow <= 0:
            return SearchContext(
                query=query, max_tokens=budget, passages=passages, left_out=left_out
            )
        allowance -= overflow
    # Not met in practice (each round shrinks the blocks' room), but the budget is a
    # promise: drop passages from the end, then the note's list, until it holds.
    items = _NOTE_ITEMS
    while count_tokens(_render(query, budget, passages, left_out, items)) > budget:
        if passages:
            dropped = passages.pop()
            left_out.insert(0, _left_out(dropped.hit, dropped.tokens))
        elif items:
            items = 0
        else:
            break
    return SearchContext(
        query=query, max_tokens=budget, passages=passages, left_out=left_out, note_items=items
    )


def _candidates(hits: Sequence[Hit], reader: SectionReader, *, expand: bool) -> list[_Candidate]:
    """One candidate per distinct section (or chunk), in the rank of its best hit."""
    keys = list(dict.fromkeys((hit.source, header_path(hit.headers)) for hit in hits))
    # A chunk before the first header has no section to expand to.
    keys = [key for key in keys if key[1]]
    found = reader.section_chunks(keys) if expand and keys else {}
    candidates: list[_Candidate] = []
    seen: set[tuple[str, int]] = set()
    for hit in hits:
        run = _run(found.get((hit.source, header_path(hit.headers)), []), hit)
        if (hit.source, hit.chunk_index) in seen:  # its section is already a candidate
            continue
        seen.update((hit.source, chunk.chunk_index) for chunk in run)
        candidates.append(_Candidate(hit=hit, section=run, expanded=expand))
    return candidates


def _run(chunks: list[SourceChunk], hit: Hit) -> list[SourceChunk]:
    """The consecutive chunks around the hit's (`chunks` sorted by index); the hit's own
    chunk alone when it is not among them (re-ingested meanwhile, or not expanded)."""
    position = next(
        (i for i, chunk in enumerate(chunks) if chunk.chunk_index == hit.chunk_index), None
    )
    if position is None:
        return [_chunk_of(hit)]
    start = end = position
    while start > 0 and chunks[start - 1].chunk_index == chunks[start].chunk_index - 1:
        start -= 1
    while end + 1 < len(chunks) and chunks[end + 1].chunk_index == chunks[end].chunk_index + 1:
        end += 1
    return chunks[start : end + 1]


def _chunk_of(hit: Hit) -> SourceChunk:
    return SourceChunk(
        id=hit.id,
        headers=list(hit.headers),
        chunk_index=hit.chunk_index,
        content=hit.content,
        summary=hit.summary,
        summary_pending=hit.summary is None,
        page_start=hit.page_start,
        page_end=hit.page_end,
        anchor=hit.anchor,
    )


def _fill(candidates: list[_Candidate], allowance: int) -> tuple[list[Passage], list[LeftOut]]:
    passages: list[Passage] = []
    left_out: list[LeftOut] = []
    used = 0
    for candidate in candidates:
        whole = _passage(candidate, candidate.section)
        cost = whole.tokens + (2 if passages else 0)  # the separator
        if used + cost <= allowance:
            passages.append(whole)
            used += cost
            continue
        if len(candidate.section) > 1:
            own = [c for c in candidate.section if c.chunk_index == candidate.hit.chunk_index]
            part = _passage(candidate, own)
            cost = part.tokens + (2 if passages else 0)
            if used + cost <= allowance:
                passages.append(part)
                used += cost
                continue
        left_out.append(_left_out(candidate.hit, whole.tokens))
    return passages, left_out


def _passage(candidate: _Candidate, chunks: list[SourceChunk]) -> Passage:
    section = tuple(chunk.chunk_index for chunk in candidate.section)
    given = tuple(chunk.chunk_index for chunk in chunks)
    content = _SEPARATOR.join(chunk.content for chunk in chunks)
    complete = given == section
    block = _block(candidate.hit, content, given, section, expanded=candidate.expanded)
    return Passage(
        hit=candidate.hit,
        content=content,
        chunk_indexes=given,
        section_chunks=section,
        complete=complete,
        expanded=candidate.expanded,
        block=block,
        tokens=count_tokens(block),
    )


def _left_out(hit: Hit, tokens: int) -> LeftOut:
    return LeftOut(location=hit.location, path=header_path(hit.headers), tokens=tokens)


def _span(indexes: Sequence[int]) -> str:
    return f"chunk {indexes[0]}" if len(indexes) == 1 else f"chunks {indexes[0]}-{indexes[-1]}"


def _block(
    hit: Hit,
    content: str,
    given: tuple[int, ...],
    section: tuple[int, ...],
    *,
    expanded: bool,
) -> str:
    """One passage as Markdown: header path, location, summary, what part, the text."""
    lines = [f"## {header_path(hit.headers) or hit.title or hit.source}", f"Source: {hit.location}"]
    if hit.summary:
        lines.append(f"Summary: {hit.summary}")
    if not expanded:
        lines.append(f"Passage: the matching {_span(given)}")
    elif given == section:
        lines.append(f"Passage: the whole section ({_span(section)})")
    else:
        lines.append(
            f"Passage: part of the section, {_span(given)} of {_span(section)}; "
            "read_section gives the whole section"
        )
    return "\n".join(lines) + _SEPARATOR + content


def _header(query: str, count: int) -> str:
    shown = " ".join(query.split())
    if len(shown) > _SHOWN_QUERY_CHARS:
        shown = shown[:_SHOWN_QUERY_CHARS] + "…"
    noun = "passage" if count == 1 else "passages"
    return f"# Search results for: {shown}\n{count} {noun}, best first."


def _note(max_tokens: int, left_out: list[LeftOut], items: int) -> str:
    lines = [f"## Left out: {len(left_out)} more matching, over the {max_tokens:,}-token budget"]
    for item in left_out[:items]:
        where = f"{item.location} § {item.path}" if item.path else item.location
        lines.append(f"- {where} (about {item.tokens:,} tokens)")
    if len(left_out) > items:
        lines.append(f"- and {len(left_out) - items} more")
    lines.append("Read one with read_section, or search again with a larger max_tokens.")
    return "\n".join(lines)


def _render(
    query: str,
    max_tokens: int,
    passages: list[Passage],
    left_out: list[LeftOut],
    note_items: int = _NOTE_ITEMS,
) -> str:
    parts = [_header(query, len(passages)), *(passage.block for passage in passages)]
    if left_out:
        parts.append(_note(max_tokens, left_out, note_items))
    elif not passages:
        parts.append("Nothing indexed matches the query.")
    return _SEPARATOR.join(parts)
