"""A whole document's summary, on request: a reduce over its chunks' own summaries.

Ingest already wrote one summary per chunk (the map step), so a document costs one model
call per group of section lines that fits `budget_tokens`, then one per level above: a
page of 30 chunks is one call. Each section line is the chunk's header path below the
title and its summary (its lead sentences while it has none).

The reply is checked like an answer (`service.query.grounding`) against the section
lines it was written from; a reply that fails is not shown: the summary is then
`extractive`, the title and the first lines of the outline, which only quote the index.

Results are cached on disk under the data directory, keyed by the source, its content
hash and settings key (what decided its chunks and summaries), the model and this
module's prompt version: asking again for an unchanged document costs no call, and a
re-ingest with other content or settings makes a new key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from service.connections import close_ollama_clients
from service.errors import ModelError, SourceNotFoundError, SourceNotReadyError
from service.index.records import SourceChunk, SourceRecord, header_path
from service.ingest.quality import lead_sentences
from service.query.grounding import check_grounding
from service.query.reading import CHUNK_PAGE
from splitters.encoding import count_tokens

if TYPE_CHECKING:
    from service.index.store import Store

__all__ = [
    "DOCUMENT_PROMPT_VERSION",
    "STYLES",
    "DocumentSummarizer",
    "DocumentSummary",
    "SummaryStyle",
    "indexed_document",
    "outline_lines",
    "reduce_groups",
]

_log = logging.getLogger(__name__)

#: Part of the cache key: bump it when the prompt or the outline changes.
DOCUMENT_PROMPT_VERSION = "d1"

_SYSTEM = (
    "You summarize a whole technical document for a reader deciding whether to read it. "
    "You are given its title and one line per section: the section's path and what the "
    "section covers. {length} Use only what the lines say. No preamble, no list, no heading."
)
#: What each style asks of the model.
_LENGTHS = {
    "brief": "Write one paragraph of at most four sentences: what the document covers and "
    "what a reader can do with it, naming its main topics.",
    "detailed": "Write at most eight sentences, one or two for each main part of the "
    "document in its order, saying what that part lets a reader do and the names it covers.",
}
SummaryStyle = Literal["brief", "detailed"]
#: The styles a summary can be asked in; the first is the default.
STYLES: tuple[SummaryStyle, ...] = ("brief", "detailed")

#: Lines of the outline an extractive summary quotes.
_EXTRACTIVE_LINES = 8

SummaryKind = Literal["generated", "extractive"]


@dataclass(frozen=True, kw_only=True)
class DocumentSummary:
    """One document's summary; `kind` says whether the model wrote it (and it passed the
    grounding check) or it quotes the outline."""

    source: str
    title: str
    text: str
    kind: SummaryKind
    sections: int  # chunks it was made from
    llm_calls: int  # model calls it took (0 when it came from the cache)
    cached: bool
    model: str
    style: SummaryStyle = "brief"
    support: float | None = None  # the grounding support of the model's reply


def outline_lines(title: str, chunks: Sequence[SourceChunk]) -> list[str]:
    """One line per chunk, in document order: its header path below the title, then its
    summary (its lead sentences while it has none). Consecutive chunks of one section
    share its path."""
    lines: list[str] = []
    for chunk in chunks:
        headers = (
            chunk.headers[1:] if chunk.headers and chunk.headers[0] == title else chunk.headers
        )
        text = " ".join((chunk.summary or lead_sentences(chunk.content)).split())
        path = header_path(headers) or title
        lines.append(f"- {path}: {text}" if text else f"- {path}")
    return lines


def reduce_groups(sizes: Sequence[int], budget: int) -> list[tuple[int, int]]:
    """Consecutive `(start, stop)` groups whose sizes sum to at most `budget` (greedy; an
    item over the budget alone is a group of its own)."""
    groups: list[tuple[int, int]] = []
    start, total = 0, 0
    for index, size in enumerate(sizes):
        if index > start and total + size > budget:
            groups.append((start, index))
            start, total = index, 0
        total += size
    if sizes:
        groups.append((start, len(sizes)))
    return groups


class DocumentSummarizer:
    """Summarizes documents from their chunk summaries with a chat model, cached in
    `cache_dir`; `min_support` is the grounding threshold answers use."""

    def __init__(
        self,
        model: BaseChatModel,
        *,
        model_name: str,
        cache_dir: Path,
        min_support: float,
        budget_tokens: int = 1500,
    ) -> None:
        self._model = model
        self.model_name = model_name
        self.cache_dir = cache_dir
        self.min_support = min_support
        self.budget_tokens = budget_tokens

    def close(self) -> None:
        """Close the chat model's HTTP clients."""
        close_ollama_clients(self._model)

    def summarize(
        self,
        record: SourceRecord,
        chunks: Sequence[SourceChunk],
        *,
        style: SummaryStyle = "brief",
    ) -> DocumentSummary:
        """The summary of `record`'s document from its `chunks` (all of them, in order)."""
        path = self.cache_dir / f"{self._key(record, style)}.json"
        cached = _read(path)
        if cached is not None:
            return cached
        lines = outline_lines(record.title, chunks)
        if not lines:  # nothing was indexed from it (an empty page): nothing to ask
            return DocumentSummary(
                source=record.source,
                title=record.title,
                text=f"{record.title}: no indexed sections.",
                kind="extractive",
                sections=0,
                llm_calls=0,
                cached=False,
                model=self.model_name,
                style=style,
            )
        calls = 0

        def call(group: Sequence[str]) -> str:
            nonlocal calls
            calls += 1
            return self._reply(record.title, group, style)

        reply = self._reduce(lines, call)
        grounding = check_grounding(reply, ["\n".join(lines)], min_support=self.min_support)
        kind: SummaryKind = "generated" if grounding.passed else "extractive"
        text = reply if grounding.passed else _extractive(record.title, lines)
        summary = DocumentSummary(
            source=record.source,
            title=record.title,
            text=text,
            kind=kind,
            sections=len(chunks),
            llm_calls=calls,
            cached=False,
            model=self.model_name,
            style=style,
            support=grounding.support,
        )
        _write(path, summary)
        return summary

    def _reduce(self, lines: Sequence[str], call: Callable[[Sequence[str]], str]) -> str:
        """Summaries of groups of `lines`, then of groups of those, until one is left."""
        texts = list(lines)
        while True:
            groups = reduce_groups([count_tokens(text) for text in texts], self.budget_tokens)
            if 1 < len(texts) == len(groups):  # every text over the budget: pair them
                groups = [(start, min(start + 2, len(texts))) for start in range(0, len(texts), 2)]
            texts = [call(texts[start:stop]) for start, stop in groups]
            if len(texts) == 1:
                return texts[0]
            texts = [f"- {text}" for text in texts]

    def _reply(self, title: str, lines: Sequence[str], style: SummaryStyle) -> str:
        outline = "\n".join(lines)
        messages = [
            SystemMessage(content=_SYSTEM.format(length=_LENGTHS[style])),
            HumanMessage(content=f"Document: {title}\n\nSections:\n{outline}\n\nSummary:"),
        ]
        try:
            message = self._model.invoke(messages)
        except Exception as exc:
            raise ModelError(
                f"summarizing the document with {self.model_name!r} failed: {exc}"
            ) from exc
        return " ".join(str(message.content).split())

    def _key(self, record: SourceRecord, style: SummaryStyle) -> str:
        parts = [
            style,
            record.source,
            record.content_hash,
            record.settings_key,
            self.model_name,
            DOCUMENT_PROMPT_VERSION,
            str(self.budget_tokens),
            str(self.min_support),
        ]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def indexed_document(store: Store, source: str) -> tuple[SourceRecord, list[SourceChunk]]:
    """The record of the indexed document `source` and all its chunks, in order: what
    `DocumentSummarizer.summarize` reads. SourceNotFoundError when it is not indexed,
    SourceNotReadyError while its ingest is still writing summaries."""
    record = store.source_record(source) if store.exists() else None
    if record is None:
        raise SourceNotFoundError(f"{source} is not indexed (see `synopsis docs list`)")
    if record.status != "complete":
        raise SourceNotReadyError(
            f"{source} is still being ingested ({record.pending} of its {record.chunks} "
            "summaries pending); ask again once its ingest is done"
        )
    chunks: list[SourceChunk] = []
    while len(chunks) < record.chunks:
        page, _ = store.source_chunks(source, limit=CHUNK_PAGE, offset=len(chunks))
        if not page:
            break
        chunks.extend(page)
    return record, chunks


def _extractive(title: str, lines: Sequence[str]) -> str:
    shown = list(lines[:_EXTRACTIVE_LINES])
    more = len(lines) - len(shown)
    tail = [f"… and {more} more sections."] if more > 0 else []
    return "\n".join([f"{title}:", *shown, *tail])


def _read(path: Path) -> DocumentSummary | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return dataclasses.replace(DocumentSummary(**data), cached=True, llm_calls=0)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError) as exc:  # a damaged entry is written again
        _log.warning("ignoring the cached document summary %s: %s", path, exc)
        return None


def _write(path: Path, summary: DocumentSummary) -> None:
    """Atomically: a reader sees the old entry or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, suffix=".partial")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(dataclasses.asdict(summary), out)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
