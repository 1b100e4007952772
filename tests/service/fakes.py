"""An in-memory store for unit tests of the ingest pipeline and the searcher.

It keeps what `service.index.store.Store` keeps, in dicts, and records the order of
writes. Searches apply the query's filters and limit and rank by a simple hybrid of word
overlap and cosine similarity (each leg scaled to 0…1, as Weaviate's relativeScore
fusion does), or return `matches` when a test sets them (canned scores and vectors for
the searcher's own logic; the filters and limit still apply).
tests/service/index/test_store_contract.py runs the same contract against this fake and
the real `Store` on Weaviate.
"""

from __future__ import annotations

import dataclasses
import math
import re
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from service.index.queries import (
    CHUNK_KEYWORD_PROPERTIES,
    HybridQuery,
    Match,
    SearchFilters,
    SummaryUse,
)
from service.index.records import (
    CONTENT_VECTOR,
    CONTEXT_VECTOR,
    SUMMARY_VECTOR,
    ChunkPlace,
    OriginalRecord,
    ShownSummary,
    SourceRecord,
    StoredOriginal,
    SummaryAttachment,
    SummaryRecord,
    header_path,
)

_WORD = re.compile(r"\w+")


class MemoryStore:
    """Implements IngestStore and SearchStore over dicts."""

    def __init__(self) -> None:
        self.originals: dict[uuid.UUID, OriginalRecord] = {}
        self.summary_vectors: dict[uuid.UUID, list[float]] = {}  # the `summary` named vector
        self.context_vectors: dict[uuid.UUID, list[float]] = {}  # the `context` named vector
        self.context_layout = True  # False: an index built before `context` vectors
        self.attached: dict[uuid.UUID, SummaryAttachment] = {}
        self.summaries: dict[uuid.UUID, SummaryRecord] = {}
        self.sources: dict[str, SourceRecord] = {}
        self.log: list[str] = []  # "originals", "summaries", "attach", "record:<status>"
        self.fail_on: str | None = None  # a log entry that raises instead
        self.matches: list[Match] = []  # what searches return
        self.queries: list[tuple[str, HybridQuery, dict[str, Any]]] = []

    def _step(self, entry: str) -> None:
        if entry == self.fail_on:
            raise RuntimeError(f"injected failure at {entry}")
        self.log.append(entry)

    # -- IngestStore ----------------------------------------------------------------------

    def ensure_schema(self, *, embedding_model: str, dimension: int) -> None:
        pass

    def has_context_vectors(self) -> bool:
        return self.context_layout

    def add_context_vector(self) -> None:
        self._step("add-context")
        self.context_vectors = {oid: r.vector for oid, r in self.originals.items()}

    def mark_context_vectors(self) -> None:
        self._step("mark-context")
        self.context_layout = True

    def source_record(self, source: str) -> SourceRecord | None:
        return self.sources.get(source)

    def put_source_record(self, record: SourceRecord) -> None:
        self._step(f"record:{record.status}")
        self.sources[record.source] = record

    def existing_originals(self, source: str) -> dict[uuid.UUID, StoredOriginal]:
        return {
            oid: StoredOriginal(
                chunk_index=record.chunk_index,
                summary_id=str(self.attached[oid].summary_id) if oid in self.attached else "",
                anchor=record.anchor,
                version=record.version,
                version_group=record.version_group,
            )
            for oid, record in self.originals.items()
            if record.source == source
        }

    def existing_summaries(self, source: str) -> dict[uuid.UUID, uuid.UUID]:
        return {sid: s.original_id for sid, s in self.summaries.items() if s.source == source}

    def cached_summaries(
        self, hashes: Iterable[str], *, model: str, prompt_version: str
    ) -> dict[str, SummaryRecord]:
        wanted = set(hashes)
        return {
            s.content_hash: s
            for s in self.summaries.values()
            if s.content_hash in wanted and (s.model, s.prompt_version) == (model, prompt_version)
        }

    def originals_by_id(
        self, ids: Iterable[uuid.UUID], *, with_vectors: bool = False
    ) -> dict[uuid.UUID, OriginalRecord]:
        found = {
            oid: dataclasses.replace(self.originals[oid], summary=self._summary_text(oid))
            for oid in ids
            if oid in self.originals
        }
        if with_vectors:
            return found
        return {oid: dataclasses.replace(r, vector=[]) for oid, r in found.items()}

    def _summary_text(self, oid: uuid.UUID) -> str:
        attached = self.attached.get(oid)
        return attached.text if attached is not None else ""

    def list_summaries(
        self, *, kind: str | None = None, with_vectors: bool = False
    ) -> list[SummaryRecord]:
        found = [
            s if with_vectors else dataclasses.replace(s, vector=[])
            for s in self.summaries.values()
            if kind is None or s.kind == kind
        ]
        return sorted(found, key=lambda record: (record.source, record.headers))

    def write_originals(self, records: Sequence[OriginalRecord]) -> int:
        if records:
            self._step("originals")
        for record in records:
            self.originals[record.id] = dataclasses.replace(record, summary="")
            self.summary_vectors[record.id] = record.vector
            self.context_vectors[record.id] = record.vector
            self.attached.pop(record.id, None)
        return len(records)

    def write_summaries(self, records: Sequence[SummaryRecord]) -> int:
        if records:
            self._step("summaries")
        for record in records:
            self.summaries[record.id] = record
        return len(records)

    def attach_summaries(self, attachments: Sequence[SummaryAttachment]) -> None:
        if attachments:
            self._step("attach")
        for item in attachments:
            self.attached[item.original_id] = item
            self.summary_vectors[item.original_id] = item.vector
            self.context_vectors[item.original_id] = item.context_vector

    def update_unchanged(self, places: dict[uuid.UUID, ChunkPlace]) -> None:
        for oid, place in places.items():
            self.originals[oid] = dataclasses.replace(
                self.originals[oid], chunk_index=place.chunk_index, anchor=place.anchor
            )

    def relabel(
        self,
        *,
        originals: Iterable[uuid.UUID],
        summaries: Iterable[uuid.UUID],
        version: str,
        version_group: str,
    ) -> None:
        self._step("relabel")
        for oid in originals:
            self.originals[oid] = dataclasses.replace(
                self.originals[oid], version=version, version_group=version_group
            )
        for sid in summaries:
            self.summaries[sid] = dataclasses.replace(
                self.summaries[sid], version=version, version_group=version_group
            )

    def delete_summaries(self, ids: Iterable[uuid.UUID]) -> int:
        wanted = list(ids)
        if wanted:
            self._step("delete:summaries")
        return sum(self.summaries.pop(sid, None) is not None for sid in wanted)

    def delete_originals(self, ids: Iterable[uuid.UUID]) -> int:
        wanted = list(ids)
        if wanted:
            self._step("delete:originals")
        deleted = 0
        for oid in wanted:
            deleted += self.originals.pop(oid, None) is not None
            self.attached.pop(oid, None)
            self.summary_vectors.pop(oid, None)
            self.context_vectors.pop(oid, None)
        return deleted

    def delete_source_record(self, source: str) -> None:
        self._step("delete:record")
        self.sources.pop(source, None)

    def sources_in_state(self, status: str) -> list[str]:
        return sorted(name for name, record in self.sources.items() if record.status == status)

    def count_originals(self, source: str) -> int:
        return sum(record.source == source for record in self.originals.values())

    def pending_summaries(self) -> int:
        return sum(oid not in self.attached for oid in self.originals)

    # -- SearchStore ----------------------------------------------------------------------

    def exists(self) -> bool:
        return True

    def search_originals(self, query: HybridQuery, *, use: SummaryUse | None) -> list[Match]:
        self.queries.append(("originals", query, {"use": use}))
        if self.matches:
            return self._canned(query)
        vectors = {CONTENT_VECTOR: 1.0}
        keywords = list(CHUNK_KEYWORD_PROPERTIES)
        if use is not None:
            vectors = {CONTENT_VECTOR: 1.0 - use.weight, use.vector: use.weight}
            keywords = [*keywords, "summary"] if use.keyword_weight > 0 else keywords
        scored = []
        for oid, record in self.originals.items():
            properties = self._hit(oid)
            if not _passes(query.filters, {**properties, "version_group": record.version_group}):
                continue
            text = {**properties, "identifiers": record.identifiers}
            words = _overlap(query.keywords, " ".join(_text(text[name]) for name in keywords))
            similarity = sum(
                weight * _cosine(query.vector, self._vector(oid, name))
                for name, weight in vectors.items()
                if weight > 0
            )
            scored.append((str(oid), properties, words, similarity))
        return _fused(query, scored)

    def search_summaries(self, query: HybridQuery) -> list[Match]:
        self.queries.append(("summaries", query, {}))
        if self.matches:
            return self._canned(query)
        scored = []
        for sid, record in self.summaries.items():
            filtered = {
                "source": record.source,
                "title": record.title,
                "headers": record.headers,
                "version": record.version,
                "version_group": record.version_group,
            }
            if not _passes(query.filters, filtered):
                continue
            text = " ".join([record.summary, *record.headers, *record.identifiers])
            properties = {
                "summary": record.summary,
                "original_id": record.original_id,
                "kind": record.kind,
                "model": record.model,
            }
            scored.append(
                (
                    str(sid),
                    properties,
                    _overlap(query.keywords, text),
                    _cosine(query.vector, record.vector),
                )
            )
        return _fused(query, scored)

    def _canned(self, query: HybridQuery) -> list[Match]:
        found = [m for m in self.matches if _passes(query.filters, m.properties)]
        return found[: query.limit]

    def _vector(self, oid: uuid.UUID, name: str) -> list[float]:
        if name == SUMMARY_VECTOR:
            return self.summary_vectors.get(oid, [])
        if name == CONTEXT_VECTOR:
            return self.context_vectors.get(oid, [])
        return self.originals[oid].vector

    def _hit(self, oid: uuid.UUID) -> dict[str, Any]:
        record = self.originals[oid]
        return {
            "content": record.content,
            "source": record.source,
            "title": record.title,
            "headers": list(record.headers),
            "chunk_index": record.chunk_index,
            "summary": self._summary_text(oid),
            "summary_kind": self.attached[oid].kind if oid in self.attached else "",
            "summary_model": self.attached[oid].model if oid in self.attached else "",
            "page_start": record.page_start,
            "page_end": record.page_end,
            "anchor": record.anchor,
            "version": record.version,
            "indexed_at": record.indexed_at,
        }

    def summaries_of(self, original_ids: Sequence[str]) -> dict[str, ShownSummary]:
        return {
            str(s.original_id): ShownSummary.of(s.summary, stored_kind=s.kind, model=s.model)
            for s in self.summaries.values()
            if str(s.original_id) in original_ids
        }

    def hit_originals(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        return {str(oid): self._hit(oid) for oid in self.originals if str(oid) in ids}


def _text(value: Any) -> str:
    return " ".join(value) if isinstance(value, list) else str(value or "")


def _passes(filters: SearchFilters, properties: dict[str, Any]) -> bool:
    """Whether an object with these properties passes the filters, as Weaviate's `equal`
    and `like "prefix*"` filters do."""
    source = str(properties.get("source") or "")
    if filters.source and source != filters.source:
        return False
    if filters.source_prefix and not source.startswith(filters.source_prefix):
        return False
    path = header_path(properties.get("headers") or [])
    if filters.header_prefix and not path.startswith(filters.header_prefix):
        return False
    if filters.title and properties.get("title") != filters.title:
        return False
    return filters.admits_version(properties)


def _overlap(keywords: str, text: str) -> float:
    """How many of the query's words the text holds (BM25's leg, without its weights)."""
    wanted = {word.lower() for word in _WORD.findall(keywords)}
    present = {word.lower() for word in _WORD.findall(text)}
    return float(len(wanted & present))


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    if not a or not b or len(a) != len(b):
        return 0.0
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


def _scaled(values: list[float]) -> list[float]:
    low, high = min(values), max(values)
    return [(value - low) / (high - low) if high > low else 1.0 for value in values]


def _fused(
    query: HybridQuery, scored: list[tuple[str, dict[str, Any], float, float]]
) -> list[Match]:
    """relativeScore fusion: BM25 finds only objects with a word of the query; the vector
    leg every object; each leg scaled to 0…1 over what it found, weighted by alpha."""
    if not scored:
        return []
    keyword_hits = [item for item in scored if item[2] > 0]
    keyword_scores = (
        dict(
            zip(
                [item[0] for item in keyword_hits],
                _scaled([item[2] for item in keyword_hits]),
                strict=True,
            )
        )
        if keyword_hits
        else {}
    )
    vector_scores = dict(
        zip([item[0] for item in scored], _scaled([item[3] for item in scored]), strict=True)
    )
    candidates = [item for item in scored if query.alpha > 0 or item[0] in keyword_scores]
    fused = [
        Match(
            id=oid,
            properties=properties,
            score=(1 - query.alpha) * keyword_scores.get(oid, 0.0)
            + query.alpha * vector_scores[oid],
        )
        for oid, properties, _, _ in candidates
    ]
    fused.sort(key=lambda match: match.score, reverse=True)
    return fused[: query.limit]
