"""Reading indexed text back: a section or a whole document, reassembled from its chunks.

The chunks of a source hold its text without the header lines (the header path is their
metadata), so reassembling puts each header back, as a Markdown ATX header of its depth,
where the path changes; the chunks' text is given exactly as stored, so code blocks are
byte-exact (but for a look-alike of the fence's tag, below). Long text comes in pages:
as many chunks, from `offset` (counted in chunks of the section or document, from 0), as
fit in `max_tokens` (cl100k_base) with the preamble and the line that says where the next
page starts.

A page's text is fenced as the answer prompt fences a passage
(`service.query.injection.fence`: `<passage id="1" source=… section=…>` … `</passage>`,
look-alike tags inside neutralised), after a preamble that says it is data: a page may
address the model that reads it.

A *section* here is what a reader means by one: the chunks under a header, its
subsections included, in document order. It is named by the header's anchor (`#id`, as
in `source#anchor`), by its header path (`A > B > C`), or by the last headers of that
path (`B > C`, `C`); the first match in document order is read.

`read_section` and `read_document` read a page from the index (`Store`); `read_page` and
`find_section` work on chunks already read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from service.errors import SearchError, SourceNotFoundError
from service.index.records import SourceChunk, header_path
from service.query.injection import DATA_NOTE, fence, neutralise_tags
from service.settings import MAX_CONTEXT_TOKENS, MIN_CONTEXT_TOKENS
from splitters.encoding import count_tokens

if TYPE_CHECKING:
    from service.index.store import Store

__all__ = [
    "CHUNK_PAGE",
    "Reading",
    "check_page",
    "find_section",
    "read_document",
    "read_page",
    "read_section",
    "source_text",
    "split_location",
]

#: Chunks read per query when a whole document is read (Weaviate reads at most 10,000
#: objects past an offset, so a page size keeps it in one window for most documents).
CHUNK_PAGE = 500

#: Sections named in the error for a section that is not found.
_LISTED_SECTIONS = 40
_SEPARATOR = "\n\n"


@dataclass(frozen=True, kw_only=True)
class Reading:
    """One page of a section or document: `text` is what a model reads (within the
    budget); `offset`/`next_offset` count chunks of the whole (None: nothing follows)."""

    source: str
    what: str  # "section A > B" or "document"
    offset: int
    count: int  # chunks on this page
    total: int  # chunks of the section or document
    next_offset: int | None
    text: str

    @property
    def tokens(self) -> int:
        """cl100k_base tokens of `text`."""
        return count_tokens(self.text)


def check_page(max_tokens: int, offset: int) -> None:
    """Raise SearchError for a page that cannot be asked for."""
    if not MIN_CONTEXT_TOKENS <= max_tokens <= MAX_CONTEXT_TOKENS:
        raise SearchError(
            f"max_tokens must be between {MIN_CONTEXT_TOKENS} and {MAX_CONTEXT_TOKENS}, "
            f"not {max_tokens}"
        )
    if offset < 0:
        raise SearchError(f"offset must be 0 or more, not {offset}")


def split_location(source: str) -> tuple[str, str]:
    """`source#anchor` → (source, anchor); a source without `#` → (source, "")."""
    base, hashmark, anchor = source.rpartition("#")
    return (base, anchor) if hashmark and base and anchor else (source, "")


def find_section(
    source: str, chunks: Sequence[SourceChunk], section: str
) -> tuple[list[str], list[SourceChunk]]:
    """The header path of the section named `section` (anchor or header path) in `chunks`
    (the whole source, in order), and its chunks; SourceNotFoundError naming the sections
    when there is none."""
    wanted = section.strip()
    anchor = wanted.removeprefix("#")
    parts = [" ".join(part.split()) for part in wanted.split(">")]
    depths = [_matched_depth(chunk, parts, anchor) for chunk in chunks]
    # An anchor names one header exactly; a path may also be the end of a longer one.
    by_anchor = [i for i, chunk in enumerate(chunks) if anchor and chunk.anchor == anchor]
    start = by_anchor[0] if by_anchor else next((i for i, d in enumerate(depths) if d), None)
    if start is None:
        raise SourceNotFoundError(_no_section(source, chunks, wanted))
    # The header the name matched may be above the chunk's own (a section whose text
    # starts in a subsection): the section is everything under the matched header.
    depth = len(chunks[start].headers) if by_anchor else depths[start]
    prefix = list(chunks[start].headers[:depth])
    end = start
    while end + 1 < len(chunks) and list(chunks[end + 1].headers[:depth]) == prefix:
        end += 1
    return prefix, list(chunks[start : end + 1])


def _matched_depth(chunk: SourceChunk, parts: list[str], anchor: str) -> int:
    """The depth of the chunk's header whose path ends with `parts` (0: none does)."""
    headers = [" ".join(header.split()) for header in chunk.headers]
    for depth in range(len(parts), len(headers) + 1):
        if headers[:depth][-len(parts) :] == parts:
            return depth
    return 0


def _no_section(source: str, chunks: Sequence[SourceChunk], wanted: str) -> str:
    named: dict[str, str] = {}
    for chunk in chunks:
        path = header_path(chunk.headers)
        if path and path not in named:
            named[path] = chunk.anchor
    listed = [f"{path} (#{anchor})" if anchor else path for path, anchor in named.items()]
    more = len(listed) - _LISTED_SECTIONS
    shown = "; ".join(listed[:_LISTED_SECTIONS]) + (f"; and {more} more" if more > 0 else "")
    return f"{source} has no section {wanted!r}; its sections: {shown or 'none'}"


def read_page(
    source: str,
    what: str,
    chunks: Sequence[SourceChunk],
    *,
    offset: int,
    max_tokens: int,
    base_depth: int = 0,
    headers: Sequence[str] = (),
    continuation: Callable[[int], str],
) -> Reading:
    """The page of `chunks` (a section or document, in order) from `offset` that fits in
    `max_tokens`: a preamble, the text with its header lines (those deeper than
    `base_depth`, plus the path's own at the page's start) fenced with the section's
    `headers` (none for a document), and `continuation(next)` when more follows.
    SearchError when `offset` is past the end or one chunk cannot fit."""
    check_page(max_tokens, offset)
    total = len(chunks)
    if total and offset >= total:
        raise SearchError(f"offset is {offset}, but the {what} has {total} chunks (0-{total - 1})")
    # Counted piece by piece (a page of many chunks is not re-tokenized per chunk), with
    # the preamble and continuation at their longest; the exact count is checked last.
    frame = count_tokens(
        _page_text(
            source,
            what,
            [],
            offset=max(0, total - 1),
            total=total,
            headers=headers,
            continuation=continuation,
        )
    )
    frame += count_tokens(continuation(total))
    pieces: list[str] = []
    used = frame
    previous: list[str] | None = None
    for chunk in chunks[offset:]:
        piece = _with_headers(chunk, previous, base_depth)
        cost = count_tokens(piece) + 1  # the separator
        if used + cost > max_tokens and pieces:
            break
        pieces.append(piece)
        used += cost
        previous = list(chunk.headers)

    def page(pieces: list[str]) -> str:
        return _page_text(
            source,
            what,
            pieces,
            offset=offset,
            total=total,
            headers=headers,
            continuation=continuation,
        )

    text = page(pieces)
    while count_tokens(text) > max_tokens and len(pieces) > 1:
        pieces.pop()
        text = page(pieces)
    if pieces and count_tokens(text) > max_tokens:
        needed = count_tokens(text)
        raise SearchError(
            f"the chunk at offset {offset} of the {what} needs {needed:,} tokens with its "
            f"headers; ask with max_tokens={needed} or more"
        )
    following = offset + len(pieces)
    return Reading(
        source=source,
        what=what,
        offset=offset,
        count=len(pieces),
        total=total,
        next_offset=following if following < total else None,
        text=text,
    )


def _with_headers(chunk: SourceChunk, previous: list[str] | None, base_depth: int) -> str:
    """The chunk's text, after the header lines of its path that differ from the previous
    chunk's (all of them below `base_depth` at the start of a page)."""
    headers = list(chunk.headers)
    if previous is None:
        first = max(0, min(base_depth, len(headers) - 1)) if headers else 0
    else:
        first = next(
            (i for i, (a, b) in enumerate(zip(headers, previous, strict=False)) if a != b),
            min(len(headers), len(previous)),
        )
    lines = [f"{'#' * min(depth + 1, 6)} {headers[depth]}" for depth in range(first, len(headers))]
    return _SEPARATOR.join([*lines, chunk.content])


def _page_text(
    source: str,
    what: str,
    pieces: list[str],
    *,
    offset: int,
    total: int,
    headers: Sequence[str],
    continuation: Callable[[int], str],
) -> str:
    count = len(pieces)
    if not total:
        span = f"The {what} has no chunks."
    elif count == total:
        span = f"The whole {what}: chunks 0-{total - 1}."
    else:
        last = offset + count - 1
        span = f"Chunks {offset}-{last} of the {what}'s 0-{total - 1}."
    # The source and the header path in `what` come from the page too: outside the
    # fence, no look-alike of its tag either.
    preamble = neutralise_tags(f"Source: {source}\n{span}")
    if not total:
        return preamble
    # Fenced even with no piece yet: `read_page` counts the frame so.
    parts = [
        f"{preamble}\n{DATA_NOTE}",
        fence(1, source, headers, _SEPARATOR.join(pieces)),
    ]
    if offset + count < total:
        parts.append(continuation(offset + count))
    return _SEPARATOR.join(parts)


def read_section(
    store: Store,
    source: str,
    section: str,
    *,
    max_tokens: int,
    offset: int,
    continuation: Callable[[int], str],
) -> Reading:
    """One page of a section's text, reassembled from its chunks. `source` may be a
    `source#anchor` location, which names the section when `section` is empty.
    SourceNotFoundError when either is not indexed."""
    check_page(max_tokens, offset)
    name, chunks = source_text(store, source)
    if name != source and not section:
        section = split_location(source)[1]
    if not section.strip():
        raise SearchError("name the section: its anchor or its header path")
    path, selected = find_section(name, chunks, section)
    return read_page(
        name,
        f"section {header_path(path)}",
        selected,
        offset=offset,
        max_tokens=max_tokens,
        base_depth=len(path) - 1,
        headers=path,
        continuation=continuation,
    )


def read_document(
    store: Store,
    source: str,
    *,
    max_tokens: int,
    offset: int,
    continuation: Callable[[int], str],
) -> Reading:
    """One page of a whole document's text, reassembled from its chunks in order."""
    check_page(max_tokens, offset)
    name, chunks = source_text(store, source)
    return read_page(
        name,
        "document",
        chunks,
        offset=offset,
        max_tokens=max_tokens,
        continuation=continuation,
    )


def source_text(store: Store, source: str) -> tuple[str, list[SourceChunk]]:
    """The indexed source `source` names (a `source#anchor` location names its source)
    and all its chunks in order; SourceNotFoundError when it is not indexed."""
    name = source
    if not _indexed(store, name):
        name = split_location(source)[0]
        if name == source or not _indexed(store, name):
            raise SourceNotFoundError(f"{source} is not indexed")
    chunks: list[SourceChunk] = []
    while True:
        page, total = store.source_chunks(name, limit=CHUNK_PAGE, offset=len(chunks))
        chunks.extend(page)
        if not page or len(chunks) >= total:
            return name, chunks


def _indexed(store: Store, source: str) -> bool:
    return store.exists() and store.source_record(source) is not None
