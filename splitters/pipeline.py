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

from splitters.headers import DEFAULT_UNWANTED_HEADERS, DroppedSection, MarkdownHeaderSplitter
from splitters.metadata import CHUNK_INDEX, TOKENS
from splitters.tokens import MarkdownTokenSplitter

__all__ = ["chunk_documents"]

logger = logging.getLogger(__name__)


def chunk_documents(
    documents: Iterable[Document],
    *,
    max_tokens: int = 500,
    overlap_tokens: int = 0,
    unwanted_headers: Sequence[str] = DEFAULT_UNWANTED_HEADERS,
    on_dropped: Callable[[Document, DroppedSection], None] | None = None,
    on_oversized: Callable[[Document], None] | None = None,
) -> Iterator[Document]:
    """Split Markdown documents into chunks, one document at a time.

    Each document is split into sections at its ATX headers (code-aware, unwanted
    sections dropped), and each section into chunks of at most `max_tokens`
    cl100k_base tokens (code blocks kept whole; see `MarkdownTokenSplitter`).

    Every chunk's metadata is the source document's metadata (deep-copied) plus:

    * ``headers``: the enclosing header texts, H1 side first;
    * ``Header 1`` … ``Header 6``: the enclosing header of each level present;
    * ``chunk_index``: 0-based position among the chunks of its source document;
    * ``tokens``: the exact cl100k_base token count of ``page_content``.

    ``page_content`` does not repeat the header lines: the path is in the metadata,
    and whoever indexes the chunk prepends it.

    Args:
        documents: Markdown documents, e.g. from `loaders.load`.
        max_tokens: the token limit of a chunk (a single longer line is the only
            exception; such chunks are passed to `on_oversized` and logged).
        overlap_tokens: up to this many tokens of whole blocks repeated from the
            previous chunk of the same section.
        unwanted_headers: sections under these headers are dropped (and passed to
            `on_dropped` and logged).
        on_dropped: called with the source document and each dropped section.
        on_oversized: called with each chunk over `max_tokens`.

    Raises:
        SplitterError: `max_tokens` or `overlap_tokens` is out of range.
    """
    header_splitter = MarkdownHeaderSplitter(unwanted_headers=unwanted_headers)
    token_splitter = MarkdownTokenSplitter(max_tokens=max_tokens, overlap_tokens=overlap_tokens)
    for document in documents:
        source = document.metadata.get("source", "")
        index = 0
        for section in header_splitter.split_sections(document.page_content):
            for chunk in token_splitter.split_chunks(section.content):
                metadata = copy.deepcopy(document.metadata)
                metadata.update(section.header_metadata())
                metadata[CHUNK_INDEX] = index
                metadata[TOKENS] = chunk.tokens
                index += 1
                result = Document(page_content=chunk.content, metadata=metadata)
                if chunk.oversized:
                    logger.warning(
                        "%s: chunk %d has %d tokens (limit %d): a single line is that long",
                        source,
                        metadata[CHUNK_INDEX],
                        chunk.tokens,
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
