"""`chunk_documents`: loader `Document`s → header-aware, token-bounded chunk `Document`s.

This is the one entry point the CLI (``synopsis chunk``) and the ingest service
call. It streams: one source document is split at a time and its chunks are
yielded before the next document is read.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence

from langchain_core.documents import Document

from splitters.base.markdown_syntax import Header
from splitters.base.metadata import CHUNK_INDEX, PAGE_END, PAGE_MARKER, PAGE_START, TOKENS
from splitters.encoding import count_tokens
from splitters.headers import (
    DEFAULT_UNWANTED_HEADERS,
    DroppedSection,
    MarkdownHeaderSplitter,
    Section,
)
from splitters.tokens import Chunk, MarkdownTokenSplitter

__all__ = ["DEFAULT_MIN_SECTION_TOKENS", "chunk_documents"]

#: With `pack_small_sections`, a section of fewer tokens than this is packed.
DEFAULT_MIN_SECTION_TOKENS = 80

logger = logging.getLogger(__name__)


def chunk_documents(
    documents: Iterable[Document],
    *,
    max_tokens: int = 500,
    overlap_tokens: int = 0,
    unwanted_headers: Sequence[str] = DEFAULT_UNWANTED_HEADERS,
    on_dropped: Callable[[Document, DroppedSection], None] | None = None,
    on_oversized: Callable[[Document], None] | None = None,
    pack_small_sections: bool = False,
    min_section_tokens: int = DEFAULT_MIN_SECTION_TOKENS,
) -> Iterator[Document]:
    """Split Markdown documents into chunks, one document at a time.

    Each document is split into sections at its ATX headers (code-aware, unwanted
    sections dropped), and each section into chunks of at most `max_tokens`
    cl100k_base tokens (code blocks kept whole; see `MarkdownTokenSplitter`).

    Every chunk's metadata is the source document's metadata (deep-copied) plus:

    * ``headers``: the enclosing header texts, H1 side first;
    * ``Header 1`` … ``Header 6``: the enclosing header of each level present;
    * ``chunk_index``: 0-based position among the chunks of its source document;
    * ``tokens``: the exact cl100k_base token count of ``page_content``;
    * ``page_start``, ``page_end`` (PDFs): the pages the chunk's text is on. The
      loader's ``<!-- page N -->`` lines are removed from the chunks, and a chunk left
      with nothing but such lines is not emitted.

    ``page_content`` does not repeat the header lines: the path is in the metadata,
    and whoever indexes the chunk prepends it.

    With `pack_small_sections` (off by default), adjacent sections that are each one
    chunk of fewer than `min_section_tokens` tokens are packed into one chunk up to
    `max_tokens`, as long as they stay under one parent: the first section's parent, and
    never across top-level headers. The packed chunk's header path is the sections'
    common path, and each section keeps the rest of its path in the text as ATX header
    lines (a header already opened by the section before is not repeated).

    Args:
        documents: Markdown documents, e.g. from `loaders.load`.
        max_tokens: the token limit of a chunk (an over-long line is cut inside; a
            chunk still over it would be passed to `on_oversized` and logged).
        overlap_tokens: up to this many tokens of whole blocks repeated from the
            previous chunk of the same section.
        unwanted_headers: sections under these headers are dropped (and passed to
            `on_dropped` and logged).
        on_dropped: called with the source document and each dropped section.
        on_oversized: called with each chunk over `max_tokens`.
        pack_small_sections: pack adjacent small sections into one chunk.
        min_section_tokens: a section of fewer tokens than this is small.

    Raises:
        SplitterError: `max_tokens` or `overlap_tokens` is out of range.
    """
    header_splitter = MarkdownHeaderSplitter(unwanted_headers=unwanted_headers)
    token_splitter = MarkdownTokenSplitter(max_tokens=max_tokens, overlap_tokens=overlap_tokens)
    for document in documents:
        source = document.metadata.get("source", "")
        paged = PAGE_START in document.metadata
        page = int(document.metadata.get(PAGE_START, 1))
        index = 0
        pieces = (
            (section.header_metadata(), chunk)
            for section, chunk in _section_chunks(
                header_splitter.split_sections(document.page_content),
                token_splitter,
                pack=pack_small_sections,
                min_tokens=min_section_tokens,
            )
        )
        for header_metadata, chunk in pieces:
            content, tokens = chunk.content, chunk.tokens
            metadata = copy.deepcopy(document.metadata)
            if paged:
                content, first, last, page = _page_span(content, page)
                if not content:
                    continue  # only page markers
                tokens = count_tokens(content) if content != chunk.content else tokens
                metadata.update({PAGE_START: first, PAGE_END: last})
            metadata.update(header_metadata)
            metadata[CHUNK_INDEX] = index
            metadata[TOKENS] = tokens
            index += 1
            result = Document(page_content=content, metadata=metadata)
            if chunk.oversized:
                logger.warning(
                    "%s: chunk %d has %d tokens (limit %d)",
                    source,
                    metadata[CHUNK_INDEX],
                    tokens,
                    max_tokens,
                )
                if on_oversized is not None:
                    on_oversized(result)
            yield result
        for dropped in header_splitter.dropped:
            logger.info(
                "%s: dropped section %s",
                source,
                " > ".join(h.text for h in dropped.headers),
            )
            if on_dropped is not None:
                on_dropped(document, dropped)


def _common_path(paths: Sequence[tuple[Header, ...]]) -> tuple[Header, ...]:
    common = paths[0]
    for path in paths[1:]:
        length = 0
        while length < min(len(common), len(path)) and common[length] == path[length]:
            length += 1
        common = common[:length]
    return common


def _packed_text(sections: Sequence[Section], common: tuple[Header, ...]) -> str:
    """The sections as one text: each preceded by its headers below `common`, except
    those the previous section already opened."""
    parts: list[str] = []
    previous: tuple[Header, ...] = common
    for section in sections:
        shared = len(_common_path([previous, section.headers]))
        for header in section.headers[max(shared, len(common)) :]:
            parts.append(f"{'#' * header.level} {header.text}")
        parts.append(section.content)
        previous = section.headers
    return "\n\n".join(parts)


def _section_chunks(
    sections: Iterable[Section],
    splitter: MarkdownTokenSplitter,
    *,
    pack: bool,
    min_tokens: int,
) -> Iterator[tuple[Section, Chunk]]:
    """Each section's chunks; with `pack`, runs of small sections as one chunk each.

    A packed chunk is paired with a `Section` whose headers are the run's common path.
    """
    run: list[Section] = []
    run_chunk: Chunk | None = None

    def flush() -> Iterator[tuple[Section, Chunk]]:
        if run and run_chunk is not None:
            if len(run) == 1:
                yield run[0], run_chunk
            else:
                common = _common_path([s.headers for s in run])
                yield Section(run_chunk.content, common, run[0].start), run_chunk
        run.clear()

    for section in sections:
        chunks = splitter.split_chunks(section.content)
        small = pack and len(chunks) == 1 and chunks[0].tokens < min_tokens
        if small and run:
            candidate = [*run, section]
            common = _common_path([s.headers for s in candidate])
            if len(common) >= max(1, len(run[0].headers) - 1):
                text = _packed_text(candidate, common)
                tokens = count_tokens(text)
                if tokens <= splitter.max_tokens:
                    run.append(section)
                    run_chunk = Chunk(text, run[0].start, tokens)
                    continue
        yield from flush()
        if small:
            run.append(section)
            run_chunk = chunks[0]
            continue
        for chunk in chunks:
            yield section, chunk
    yield from flush()


def _page_span(content: str, page: int) -> tuple[str, int, int, int]:
    """Remove the page-marker lines of a chunk that starts on `page`.

    Returns the content without them (and without the blank line each leaves), the
    first and last page the remaining text is on, and the page the next chunk starts on.
    A marker after the chunk's last text (the next page starts with the next section)
    changes only the page returned for the next chunk.
    """
    kept: list[str] = []
    first = last = None
    skip_blank = False
    for line in content.split("\n"):
        marker = PAGE_MARKER.match(line)
        if marker:
            page = int(marker.group(1))
            skip_blank = not kept or not kept[-1].strip()
            continue
        if skip_blank and not line.strip():
            skip_blank = False
            continue
        skip_blank = False
        if line.strip():
            first = page if first is None else first
            last = page
        kept.append(line)
    text = "\n".join(kept).strip("\n")
    return text, first or page, last or page, page
