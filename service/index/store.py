"""Weaviate storage: the originals, their summaries (cross-referenced), and source records.

Collections (names may carry `Settings.collection_prefix`):

- `OriginalDocuments`: one object per chunk, with three named vectors: `content` (header
  path + text), `summary` (header path + its summary once attached) and `context`
  (header path + summary + text, embedded together); the last two are the content
  vector until a summary is attached, or when it was filtered out. The attached
  summary's text is also a BM25 property of the chunk.
- `SummarizedDocuments`: one object per (chunk, model, prompt version), vector = embedding
  of header path + summary, reference `originalDocument` → its chunk.
- `IngestedSources`: one object per source: content hash, status, chunk count, pending
  summaries, time.

All three are created with the store's `Replication` (service/index/replication.py), and
read and written at its consistency levels; the default is one copy and no levels.

BM25 has to work on code: prose properties use `word` tokenization (so `range()` and
`range` meet), and an `identifiers` property with `whitespace` tokenization keeps
`os.path.join` and `__init__` whole. No stopword list: "for", "if", "in", "is" are
Python keywords and must stay searchable.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import weaviate
from weaviate.classes.config import (
    Configure,
    DataType,
    Property,
    ReferenceProperty,
    StopwordsPreset,
    Tokenization,
    VectorDistances,
)
from weaviate.classes.data import DataObject
from weaviate.classes.query import Filter, HybridFusion, MetadataQuery, Sort, TargetVectors
from weaviate.collections import Collection
from weaviate.collections.classes.config import ReferencePropertyBase
from weaviate.exceptions import UnexpectedStatusCodeError

from service.errors import EmbeddingMismatchError, StoreError
from service.index.identity import NAMESPACE
from service.index.leases import LeaseStore
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
    SummaryKind,
    SummaryRecord,
    SummaryVector,
    header_path,
)
from service.index.replication import Replication
from service.index.schema import ensure_collection, keyword_property, stored_text

__all__ = [
    "CHUNK_KEYWORD_PROPERTIES",
    "ORIGINAL_HIT_PROPERTIES",
    "SCHEMA_VERSION",
    "HybridQuery",
    "Match",
    "SearchFilters",
    "SourceChunk",
    "Store",
    "SummaryUse",
    "attached_summary",
    "like_prefix",
]

#: The layout of the collections; one built with another layout is refused (re-index).
#: 2: named vectors `content`/`summary` and the summary's text on each original.
#: 3: a third named vector, `context`. A layout-2 index is still read (its `joint` search
#: uses the `summary` vector) until `synopsis reattach` adds and fills `context`.
SCHEMA_VERSION = 3
_READABLE_SCHEMAS = (2, SCHEMA_VERSION)
#: How long a process trusts a layout-2 reading before it reads the layout again.
LAYOUT_RECHECK_SECONDS = 30.0

_FETCH_LIMIT = 10_000  # Weaviate's default QUERY_MAXIMUM_RESULTS


#: What BM25 reads of a chunk itself (its summary's text may join: `SummaryUse`).
CHUNK_KEYWORD_PROPERTIES = ("content", "headers", "identifiers")

#: What a search hit shows of an original.
# "summary" is the attached summary's text (empty while pending or filtered out), with its
# kind ("llm" or "extractive") and model (empty in an index built before they were kept).
ORIGINAL_HIT_PROPERTIES = [
    "content", "source", "title", "headers", "chunk_index", "summary", "summary_kind",
    "summary_model", "page_start", "page_end", "anchor",
]  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class SearchFilters:
    """Restrictions on what a search may return (all optional; combined with AND)."""

    source: str | None = None
    source_prefix: str | None = None
    header_prefix: str | None = None  # of the header path `A > B > C`
    title: str | None = None

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
    """How a search over the chunks reads each chunk's attached summary."""

    vector: SummaryVector = "context"  # which of its vectors joins the chunk's own
    weight: float = 1.0  # that vector's share of the vector score (the rest: `content`)
    # The weight of the summary's words in BM25 against the chunk's own (0: not read).
    keyword_weight: float = 0.5

    def keyword_properties(self) -> list[str]:
        """The properties BM25 reads, with the summary's boost (`summary^0.5`)."""
        if self.keyword_weight <= 0:
            return list(CHUNK_KEYWORD_PROPERTIES)
        boost = "" if self.keyword_weight == 1.0 else f"^{self.keyword_weight:g}"
        return [*CHUNK_KEYWORD_PROPERTIES, f"summary{boost}"]


@dataclass(frozen=True, kw_only=True)
class Match:
    """One object a hybrid query returned: its id, properties, score and vectors."""

    id: str
    properties: dict[str, Any]
    score: float
    vectors: dict[str, list[float]] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class SourceChunk:
    """One stored chunk of a source as a reader browses it, with its attached summary."""

    id: str
    headers: list[str]
    chunk_index: int
    content: str
    summary: str | None  # None while pending or when filtered out
    summary_pending: bool
    page_start: int | None = None
    page_end: int | None = None
    anchor: str = ""
    # What the summary is: "generated" (by `summary_model`) or "extractive"; None with it.
    summary_kind: SummaryKind | None = None
    summary_model: str | None = None


class Store:
    """Reads and writes Synopsis's collections through one Weaviate client."""

    def __init__(
        self,
        client: weaviate.WeaviateClient,
        *,
        prefix: str = "",
        replication: Replication | None = None,
    ) -> None:
        self.client = client
        # Copies per object and consistency levels; the default: one copy, no levels.
        self.replication = replication or Replication()
        self.originals_name = f"{prefix}OriginalDocuments"
        self.summaries_name = f"{prefix}SummarizedDocuments"
        self.sources_name = f"{prefix}IngestedSources"
        # The leases ingests and deletes hold on sources (`service.ingest.locks`).
        self.leases = LeaseStore(client, prefix=prefix, replication=self.replication)
        # What the collections were built with: read once, as searches check it every time.
        self._embedding_info: dict[str, object] | None = None
        # When a layout-2 index was last seen as such (it is read again after a while,
        # so that a serving process notices another process's `synopsis reattach`).
        self._legacy_seen_at: float | None = None

    # Reads go through these, at the read consistency level; writes through `_writable`.
    @property
    def originals(self) -> Collection[Any, Any]:
        return self.replication.for_reads(self.client.collections.use(self.originals_name))

    @property
    def summaries(self) -> Collection[Any, Any]:
        return self.replication.for_reads(self.client.collections.use(self.summaries_name))

    @property
    def sources(self) -> Collection[Any, Any]:
        return self.replication.for_reads(self.client.collections.use(self.sources_name))

    # -- schema -------------------------------------------------------------------------

    def exists(self) -> bool:
        """True when the collections have been created."""
        if self._embedding_info is not None:
            return True
        return bool(self.client.collections.exists(self.originals_name))

    def ensure_schema(self, *, embedding_model: str, dimension: int) -> None:
        """Create the collections, or check they were built with the same embedding model.

        Safe when several processes do it at once (`service.index.schema`).
        """
        expected = json.dumps(
            {"embedding_model": embedding_model, "dimension": dimension, "schema": SCHEMA_VERSION}
        )
        created = self._embedding_info is None and ensure_collection(
            self.client, self.originals_name, lambda: self._create_originals(expected)
        )
        if not created:
            self.check_embedding(embedding_model=embedding_model, dimension=dimension)
        ensure_collection(
            self.client, self.summaries_name, lambda: self._create_summaries(expected)
        )
        ensure_collection(self.client, self.sources_name, self._create_sources)

    def _create_sources(self) -> None:
        self.client.collections.create(
            self.sources_name,
            description="Synopsis: one record per ingested source",
            vector_config=Configure.Vectors.self_provided(),
            replication_config=self.replication.config(),
            properties=[
                keyword_property("source"),
                Property(name="title", data_type=DataType.TEXT),
                keyword_property("content_hash"),
                keyword_property("settings_key"),
                keyword_property("status"),
                Property(name="chunks", data_type=DataType.INT),
                Property(name="pending", data_type=DataType.INT),
                Property(name="ingested_at", data_type=DataType.DATE),
            ],
        )

    def embedding_info(self) -> dict[str, object] | None:
        """The embedding model and dimension the collections were built with, if known.

        The first call of a process also adds the properties newer than the collection
        (`_ADDED_ORIGINAL_PROPERTIES`): every search checks the embedding model first, so
        no read asks for a property the collection does not have yet."""
        if self._embedding_info is not None:
            return self._embedding_info
        if not self.exists():
            return None
        config = self.originals.config.get()
        self._add_missing_properties({prop.name for prop in config.properties})
        description = config.description or ""
        try:
            info = json.loads(description)
        except json.JSONDecodeError:
            return None
        if isinstance(info, dict):
            self._embedding_info = info
            return info
        return None

    def has_context_vectors(self) -> bool:
        """False for an index of layout 2, built before chunks had a `context` vector
        (`service.ingest.attach.upgrade_context` adds them); True otherwise.

        Layout 3 is final, so it is read once; a layout-2 answer is read again after
        `LAYOUT_RECHECK_SECONDS`, since another process may upgrade the index meanwhile."""
        now = time.monotonic()
        if (
            self._legacy_seen_at is not None
            and now - self._legacy_seen_at >= LAYOUT_RECHECK_SECONDS
        ):
            self._embedding_info = None
            self._legacy_seen_at = None
        info = self.embedding_info()
        if info is None or info.get("schema") == SCHEMA_VERSION:
            return True
        if self._legacy_seen_at is None:
            self._legacy_seen_at = now
        return False

    def add_context_vector(self) -> None:
        """Layout 2 → 3, first step: add the `context` vector to OriginalDocuments and set
        it to each chunk's content vector (summaries then attach their own). Safe to repeat."""
        collection = self.client.collections.use(self.originals_name)
        if CONTEXT_VECTOR not in (collection.config.get().vector_config or {}):
            collection.config.add_vector(
                vector_config=Configure.Vectors.self_provided(
                    name=CONTEXT_VECTOR,
                    vector_index_config=Configure.VectorIndex.hnsw(
                        distance_metric=VectorDistances.COSINE
                    ),
                )
            )
        writable = self._writable(self.originals_name)
        for obj in collection.iterator(include_vector=True, return_properties=[]):
            writable.data.update(
                uuid=obj.uuid, vector={CONTEXT_VECTOR: _vector(obj.vector, CONTENT_VECTOR)}
            )

    def mark_context_vectors(self) -> None:
        """Layout 2 → 3, last step: record the layout once every chunk has its vector."""
        info = dict(self.embedding_info() or {})
        info["schema"] = SCHEMA_VERSION
        self.client.collections.use(self.originals_name).config.update(description=json.dumps(info))
        self._embedding_info = info

    def check_embedding(self, *, embedding_model: str, dimension: int | None = None) -> None:
        """Raise EmbeddingMismatchError unless the collections use this embedding model."""
        info = self.embedding_info()
        if info is None:
            return
        same_model = info.get("embedding_model") == embedding_model
        same_dimension = dimension is None or info.get("dimension") == dimension
        if not (same_model and same_dimension):
            raise EmbeddingMismatchError(
                f"collection {self.originals_name} was indexed with embedding model "
                f"{info.get('embedding_model')!r} ({info.get('dimension')} dimensions), but "
                f"{embedding_model!r} is configured. Re-index into new collections "
                "(set SYNOPSIS_COLLECTION_PREFIX, then `synopsis reindex --from-prefix "
                f"'{self.originals_name.removesuffix('OriginalDocuments')}'`, which re-embeds "
                "without any LLM call, or ingest again) or configure the original "
                "embedding model."
            )
        if info.get("schema") not in _READABLE_SCHEMAS:
            raise EmbeddingMismatchError(
                f"collection {self.originals_name} was built by an older Synopsis (schema "
                f"{info.get('schema', 1)}, this one writes {SCHEMA_VERSION}: each chunk "
                "carries its summary). Re-index into new collections (set "
                "SYNOPSIS_COLLECTION_PREFIX, then ingest again; cached summaries are not "
                "shared across collections)."
            )

    def _create_originals(self, description: str) -> None:
        self._create_vector_collection(
            self.originals_name,
            description,
            vectors=(CONTENT_VECTOR, SUMMARY_VECTOR, CONTEXT_VECTOR),
            properties=[
                *_searchable_properties("content"),
                Property(name="summary", data_type=DataType.TEXT),
                _filter_only("summary_id"),
                Property(name="summary_pending", data_type=DataType.BOOL),
                Property(name="summary_similarity", data_type=DataType.NUMBER),
                Property(name="chunk_index", data_type=DataType.INT),
                _filter_only("content_type"),
                Property(name="page_start", data_type=DataType.INT),
                Property(name="page_end", data_type=DataType.INT),
                *_ADDED_ORIGINAL_PROPERTIES,
            ],
        )

    def _add_missing_properties(self, present: set[str]) -> None:
        """Add the properties newer than an existing OriginalDocuments collection (objects
        written before have none: read as empty). Another process adding one at the same
        moment is fine."""
        collection = self.client.collections.use(self.originals_name)
        for prop in _ADDED_ORIGINAL_PROPERTIES:
            if prop.name in present:
                continue
            try:
                collection.config.add_property(prop)
            except UnexpectedStatusCodeError:
                present = {p.name for p in collection.config.get().properties}
                if prop.name not in present:
                    raise

    def _create_summaries(self, description: str) -> None:
        self._create_vector_collection(
            self.summaries_name,
            description,
            properties=[
                *_searchable_properties("summary"),
                Property(name="original_id", data_type=DataType.UUID),
                _filter_only("model"),
                _filter_only("prompt_version"),
                _filter_only("kind"),
                _filter_only("reason"),
                Property(name="similarity", data_type=DataType.NUMBER),
            ],
            references=[
                ReferenceProperty(name="originalDocument", target_collection=self.originals_name)
            ],
        )

    def _create_vector_collection(
        self,
        name: str,
        description: str,
        *,
        properties: list[Property],
        vectors: Sequence[str] = (),
        references: list[ReferencePropertyBase] | None = None,
    ) -> None:
        def vector_index() -> Any:
            return Configure.VectorIndex.hnsw(distance_metric=VectorDistances.COSINE)

        self.client.collections.create(
            name,
            description=description,
            vector_config=(
                [
                    Configure.Vectors.self_provided(name=v, vector_index_config=vector_index())
                    for v in vectors
                ]
                if vectors
                else Configure.Vectors.self_provided(vector_index_config=vector_index())
            ),
            inverted_index_config=Configure.inverted_index(stopwords_preset=StopwordsPreset.NONE),
            replication_config=self.replication.config(),
            properties=properties,
            references=references,
        )

    def drop(self) -> None:
        """Delete all three collections and the leases (tests and explicit resets only)."""
        self._embedding_info = None
        self._legacy_seen_at = None
        for name in (self.summaries_name, self.originals_name, self.sources_name):
            self.client.collections.delete(name)
        self.leases.drop()

    # -- reads --------------------------------------------------------------------------

    def existing_originals(self, source: str) -> dict[uuid.UUID, StoredOriginal]:
        """The stored chunks of `source` by id: chunk index and attached summary id."""
        found = self._fetch(self.originals, source, ["chunk_index", "summary_id", "anchor"])
        return {
            obj.uuid: StoredOriginal(
                chunk_index=_int(obj.properties.get("chunk_index")),
                summary_id=str(obj.properties.get("summary_id") or ""),
                anchor=str(obj.properties.get("anchor") or ""),
            )
            for obj in found
        }

    def existing_summaries(self, source: str) -> dict[uuid.UUID, uuid.UUID]:
        """Ids of the stored summaries of `source`, with the id of the original each refers to."""
        found = self._fetch(self.summaries, source, ["original_id"])
        return {obj.uuid: uuid.UUID(str(obj.properties["original_id"])) for obj in found}

    def cached_summaries(
        self, hashes: Iterable[str], *, model: str, prompt_version: str
    ) -> dict[str, SummaryRecord]:
        """Summaries already written for chunks with these content hashes, by hash (any source)."""
        wanted = sorted(set(hashes))
        cached: dict[str, SummaryRecord] = {}
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            result = self.summaries.query.fetch_objects(
                filters=(
                    Filter.by_property("content_hash").contains_any(batch)
                    & Filter.by_property("model").equal(model)
                    & Filter.by_property("prompt_version").equal(prompt_version)
                ),
                limit=_FETCH_LIMIT,
                return_properties=["summary", "content_hash", "kind", "reason", "similarity"],
                include_vector=True,
            )
            for obj in result.objects:
                props = obj.properties
                cached.setdefault(
                    str(props["content_hash"]),
                    SummaryRecord(
                        id=obj.uuid,
                        original_id=obj.uuid,
                        source="",
                        title="",
                        headers=[],
                        summary=str(props["summary"]),
                        content_hash=str(props["content_hash"]),
                        model=model,
                        prompt_version=prompt_version,
                        kind=str(props.get("kind") or "llm"),
                        reason=str(props.get("reason") or ""),
                        vector=_vector(obj.vector, "default"),
                        similarity=_float(props.get("similarity")),
                    ),
                )
        return cached

    def list_summaries(
        self, *, kind: str | None = None, with_vectors: bool = False
    ) -> list[SummaryRecord]:
        """Every stored summary (of one kind if given), by source and header; with their
        vectors only when asked."""
        records = [
            SummaryRecord(
                id=obj.uuid,
                original_id=uuid.UUID(str(obj.properties["original_id"])),
                source=str(obj.properties["source"]),
                title=str(obj.properties.get("title") or ""),
                headers=[str(h) for h in obj.properties.get("headers") or []],
                summary=str(obj.properties.get("summary") or ""),
                content_hash=str(obj.properties.get("content_hash") or ""),
                model=str(obj.properties.get("model") or ""),
                prompt_version=str(obj.properties.get("prompt_version") or ""),
                kind=str(obj.properties.get("kind") or "llm"),
                reason=str(obj.properties.get("reason") or ""),
                identifiers=[str(i) for i in obj.properties.get("identifiers") or []],
                similarity=_float(obj.properties.get("similarity")),
                vector=_vector(obj.vector, "default"),
            )
            for obj in self.summaries.iterator(include_vector=with_vectors)
            if kind is None or (obj.properties.get("kind") or "llm") == kind
        ]
        return sorted(records, key=lambda record: (record.source, record.headers))

    def originals_by_id(
        self, ids: Iterable[uuid.UUID], *, with_vectors: bool = False
    ) -> dict[uuid.UUID, OriginalRecord]:
        """The stored chunks with these ids (missing ones are left out); `vector` is their
        `content` vector when `with_vectors`, else empty."""
        wanted = list(dict.fromkeys(ids))
        found: dict[uuid.UUID, OriginalRecord] = {}
        for start in range(0, len(wanted), 500):
            result = self.originals.query.fetch_objects(
                filters=Filter.by_id().contains_any(wanted[start : start + 500]),
                limit=_FETCH_LIMIT,
                include_vector=[CONTENT_VECTOR] if with_vectors else False,
            )
            for obj in result.objects:
                props = obj.properties
                found[obj.uuid] = OriginalRecord(
                    id=obj.uuid,
                    source=str(props["source"]),
                    title=str(props.get("title") or ""),
                    headers=[str(h) for h in props.get("headers") or []],
                    chunk_index=_int(props.get("chunk_index")),
                    content=str(props.get("content") or ""),
                    content_hash=str(props.get("content_hash") or ""),
                    content_type=str(props.get("content_type") or ""),
                    identifiers=[str(i) for i in props.get("identifiers") or []],
                    page_start=_optional_int(props.get("page_start")),
                    page_end=_optional_int(props.get("page_end")),
                    anchor=str(props.get("anchor") or ""),
                    summary=str(props.get("summary") or ""),
                    vector=_vector(obj.vector, CONTENT_VECTOR),
                )
        return found

    # -- queries ------------------------------------------------------------------------

    def search_originals(self, query: HybridQuery, *, use: SummaryUse | None) -> list[Match]:
        """Hybrid over the chunks: by their own text and vector alone (`use` None), or
        with their summaries as `use` says: one of the summary's vectors joins the chunk's
        (`TargetVectors.manual_weights`), and its text joins BM25 at its boost."""
        target: Any = CONTENT_VECTOR
        keywords = list(CHUNK_KEYWORD_PROPERTIES)
        if use is not None:
            if use.weight >= 1.0:
                target = use.vector
            elif use.weight > 0:
                target = TargetVectors.manual_weights(
                    {CONTENT_VECTOR: 1.0 - use.weight, use.vector: use.weight}
                )
            keywords = use.keyword_properties()
        return self._hybrid(
            self.originals,
            query,
            target=target,
            query_properties=keywords,
            return_properties=ORIGINAL_HIT_PROPERTIES,
        )

    def search_summaries(self, query: HybridQuery) -> list[Match]:
        """Hybrid over the summaries (each match's properties name its `original_id`)."""
        return self._hybrid(
            self.summaries,
            query,
            target=None,
            query_properties=["summary", "headers", "identifiers"],
            # source and headers: for `SearchFilters.admits`
            return_properties=["summary", "original_id", "kind", "model", "source", "headers"],
        )

    def summaries_of(self, original_ids: Sequence[str]) -> dict[str, ShownSummary]:
        """The stored summary of each of these originals (those that have one), with its
        kind and model."""
        if not original_ids:
            return {}
        try:
            result = self.summaries.query.fetch_objects(
                filters=Filter.by_property("original_id").contains_any(list(original_ids)),
                limit=len(original_ids) * 2,
                return_properties=["summary", "original_id", "kind", "model"],
            )
        except Exception as exc:
            raise StoreError(f"reading the summaries of the hits failed: {exc}") from exc
        return {
            str(obj.properties["original_id"]): ShownSummary.of(
                str(obj.properties.get("summary") or ""),
                stored_kind=str(obj.properties.get("kind") or "llm"),
                model=str(obj.properties.get("model") or ""),
            )
            for obj in result.objects
        }

    def hit_originals(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The properties a hit shows of the originals with these ids (missing: absent)."""
        if not ids:
            return {}
        try:
            result = self.originals.query.fetch_objects(
                filters=Filter.by_id().contains_any(list(ids)),
                limit=len(ids),
                return_properties=ORIGINAL_HIT_PROPERTIES,
            )
        except Exception as exc:
            raise StoreError(f"reading the originals of the hits failed: {exc}") from exc
        return {str(obj.uuid): dict(obj.properties) for obj in result.objects}

    def _hybrid(
        self,
        collection: Collection[Any, Any],
        query: HybridQuery,
        *,
        target: Any,
        query_properties: list[str],
        return_properties: list[str],
    ) -> list[Match]:
        if query.filters.matches_nothing():
            return []
        exact = query.filters.needs_exact_check()
        try:
            result = collection.query.hybrid(
                query.keywords,
                vector=query.vector,
                alpha=query.alpha,
                fusion_type=HybridFusion.RANKED if query.ranked else HybridFusion.RELATIVE_SCORE,
                target_vector=target,
                query_properties=query_properties,
                filters=_filters(query.filters),
                limit=query.limit,
                include_vector=query.with_vectors,
                return_properties=return_properties,
                return_metadata=MetadataQuery(score=True, explain_score=query.explain),
            )
        except Exception as exc:
            raise StoreError(f"search in {collection.name} failed: {exc}") from exc
        return [
            Match(
                id=str(obj.uuid),
                properties=dict(obj.properties),
                score=float(obj.metadata.score or 0.0),
                vectors={name: _vector(obj.vector, name) for name in obj.vector or {}},
            )
            for obj in result.objects
            if not exact or query.filters.admits(obj.properties)
        ]

    def source_record(self, source: str) -> SourceRecord | None:
        """The record of the last ingest of `source`, if any."""
        obj = self.sources.query.fetch_object_by_id(_source_uuid(source))
        if obj is None:
            return None
        props = obj.properties
        return SourceRecord(
            source=str(props["source"]),
            title=str(props.get("title") or ""),
            content_hash=str(props["content_hash"]),
            settings_key=str(props.get("settings_key") or ""),
            status=str(props["status"]),
            chunks=_int(props.get("chunks")),
            pending=_int(props.get("pending")),
            ingested_at=props["ingested_at"],
        )

    def source_chunks(
        self, source: str, *, limit: int, offset: int = 0
    ) -> tuple[list[SourceChunk], int]:
        """A page of `source`'s chunks in document order, and how many it has."""
        where = Filter.by_property("source").equal(source)
        total = self.originals.aggregate.over_all(filters=where, total_count=True).total_count
        result = self.originals.query.fetch_objects(
            filters=where,
            sort=Sort.by_property("chunk_index"),
            limit=limit,
            offset=offset,
            return_properties=_SOURCE_CHUNK_PROPERTIES,
        )
        chunks = [_source_chunk(obj) for obj in result.objects]
        # Chunks of an index built before they kept their summary's kind: read it there.
        legacy = [chunk.id for chunk in chunks if chunk.summary and chunk.summary_kind is None]
        known = self.summaries_of(legacy) if legacy else {}
        chunks = [
            dataclasses.replace(
                chunk, summary_kind=known[chunk.id].kind, summary_model=known[chunk.id].model
            )
            if chunk.id in known
            else chunk
            for chunk in chunks
        ]
        return chunks, total or 0

    def section_chunks(
        self, keys: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], list[SourceChunk]]:
        """The chunks under each (source, header path) of `keys`, in document order, in
        one query (a header path is `A > B > C`, matched whole)."""
        if not keys:
            return {}
        where = Filter.any_of(
            [
                Filter.all_of(
                    [
                        Filter.by_property("source").equal(source),
                        Filter.by_property("header_path").equal(path),
                    ]
                )
                for source, path in keys
            ]
        )
        try:
            result = self.originals.query.fetch_objects(
                filters=where,
                sort=Sort.by_property("chunk_index"),
                limit=_FETCH_LIMIT,
                return_properties=["source", *_SOURCE_CHUNK_PROPERTIES],
            )
        except Exception as exc:
            raise StoreError(f"reading the sections of the hits failed: {exc}") from exc
        found: dict[tuple[str, str], list[SourceChunk]] = {key: [] for key in keys}
        for obj in result.objects:
            chunk = _source_chunk(obj)
            key = (str(obj.properties.get("source") or ""), header_path(chunk.headers))
            if key in found:
                found[key].append(chunk)
        return found

    def sources_in_state(self, status: str) -> list[str]:
        """The sources whose record has `status` (at most 10,000 per call)."""
        result = self.sources.query.fetch_objects(
            filters=Filter.by_property("status").equal(status),
            limit=_FETCH_LIMIT,
            return_properties=["source"],
        )
        return sorted(str(obj.properties["source"]) for obj in result.objects)

    def count_originals(self, source: str) -> int:
        """How many chunks of `source` are stored."""
        result = self.originals.aggregate.over_all(
            filters=Filter.by_property("source").equal(source), total_count=True
        )
        return result.total_count or 0

    def list_sources(self) -> list[SourceRecord]:
        """Every ingested source, sorted by name."""
        records = [
            SourceRecord(
                source=str(obj.properties["source"]),
                title=str(obj.properties.get("title") or ""),
                content_hash=str(obj.properties["content_hash"]),
                settings_key=str(obj.properties.get("settings_key") or ""),
                status=str(obj.properties["status"]),
                chunks=_int(obj.properties.get("chunks")),
                pending=_int(obj.properties.get("pending")),
                ingested_at=obj.properties["ingested_at"],
            )
            for obj in self.sources.iterator()
        ]
        return sorted(records, key=lambda record: record.source)

    def stats(self) -> dict[str, object]:
        """Object counts per collection, summaries per kind and per guard reason.

        `summaries_by_reason` counts "kind:reason" (e.g. "extractive:drift",
        "llm:verbatim" = flagged, retried, retry accepted); a summary flagged for two
        reasons counts under both.
        """
        kinds: dict[str, int] = {}
        grouped = self.summaries.aggregate.over_all(group_by="kind", total_count=True)
        for group in grouped.groups:
            kinds[str(group.grouped_by.value)] = group.total_count or 0
        reasons: dict[str, int] = {}
        for kind in sorted(kinds):
            by_reason = self.summaries.aggregate.over_all(
                filters=Filter.by_property("kind").equal(kind),
                group_by="reason",
                total_count=True,
            )
            for group in by_reason.groups:
                for reason in str(group.grouped_by.value or "").split(","):
                    if reason:
                        key = f"{kind}:{reason}"
                        reasons[key] = reasons.get(key, 0) + (group.total_count or 0)
        return {
            "originals": self.originals.aggregate.over_all(total_count=True).total_count,
            "summaries": self.summaries.aggregate.over_all(total_count=True).total_count,
            "sources": self.sources.aggregate.over_all(total_count=True).total_count,
            "summaries_by_kind": kinds,
            "summaries_by_reason": dict(sorted(reasons.items())),
            "pending_summaries": self.pending_summaries(),
            "embedding": self.embedding_info(),
        }

    def _fetch(
        self, collection: Collection[Any, Any], source: str, properties: list[str]
    ) -> list[Any]:
        result = collection.query.fetch_objects(
            filters=Filter.by_property("source").equal(source),
            limit=_FETCH_LIMIT,
            return_properties=properties,
        )
        if len(result.objects) >= _FETCH_LIMIT:
            raise StoreError(f"{source} has more than {_FETCH_LIMIT} objects in {collection.name}")
        return list(result.objects)

    # -- writes -------------------------------------------------------------------------

    def write_originals(self, records: Sequence[OriginalRecord]) -> int:
        """Upsert chunks; every failed object is reported. Returns the number written."""
        objects: list[DataObject[Any, Any]] = [
            DataObject(
                uuid=record.id,
                # Until its summary is attached, a chunk's summary vector is its own.
                vector={
                    CONTENT_VECTOR: record.vector,
                    SUMMARY_VECTOR: record.vector,
                    CONTEXT_VECTOR: record.vector,
                },
                properties={
                    **_shared_properties(record),
                    "content": record.content,
                    "summary": "",
                    "summary_id": "",
                    "summary_pending": True,
                    "summary_similarity": 0.0,
                    "summary_kind": "",
                    "summary_model": "",
                    "chunk_index": record.chunk_index,
                    "content_hash": record.content_hash,
                    "content_type": record.content_type,
                    "page_start": record.page_start,
                    "page_end": record.page_end,
                    "anchor": record.anchor,
                },
            )
            for record in records
        ]
        return self._insert(self.originals_name, objects)

    def write_summaries(self, records: Sequence[SummaryRecord]) -> int:
        """Upsert summaries with their reference to the original. Returns the number written."""
        objects: list[DataObject[Any, Any]] = [
            DataObject(
                uuid=record.id,
                vector=record.vector,
                properties={
                    **_shared_properties(record),
                    "summary": record.summary,
                    "original_id": record.original_id,
                    "content_hash": record.content_hash,
                    "model": record.model,
                    "prompt_version": record.prompt_version,
                    "kind": record.kind,
                    "reason": record.reason,
                    "similarity": record.similarity,
                },
                references={"originalDocument": record.original_id},
            )
            for record in records
        ]
        return self._insert(self.summaries_name, objects)

    def attach_summaries(self, attachments: Sequence[SummaryAttachment]) -> None:
        """Give each original its summary: BM25 text, `summary` and `context` vectors and
        provenance."""
        originals = self._writable(self.originals_name)
        for item in attachments:
            try:
                originals.data.update(
                    uuid=item.original_id,
                    properties={
                        "summary": item.text,
                        "summary_id": str(item.summary_id),
                        "summary_pending": False,
                        "summary_similarity": item.similarity,
                        "summary_kind": item.kind,
                        "summary_model": item.model,
                    },
                    vector={SUMMARY_VECTOR: item.vector, CONTEXT_VECTOR: item.context_vector},
                )
            except Exception as exc:
                raise StoreError(
                    f"attaching a summary to {item.original_id} failed: {exc}"
                ) from exc

    def pending_summaries(self) -> int:
        """How many stored chunks are still waiting for their summary."""
        result = self.originals.aggregate.over_all(
            filters=Filter.by_property("summary_pending").equal(True), total_count=True
        )
        return result.total_count or 0

    def update_unchanged(self, places: dict[uuid.UUID, ChunkPlace]) -> None:
        """Give unchanged chunks their new position and section anchor (no re-embedding,
        no LLM)."""
        originals = self._writable(self.originals_name)
        for object_id, place in places.items():
            originals.data.update(
                uuid=object_id,
                properties={"chunk_index": place.chunk_index, "anchor": place.anchor},
            )

    def put_source_record(self, record: SourceRecord) -> None:
        """Create or replace the record of `record.source`."""
        properties: dict[str, Any] = {
            "source": record.source,
            "title": record.title,
            "content_hash": record.content_hash,
            "settings_key": record.settings_key,
            "status": record.status,
            "chunks": record.chunks,
            "pending": record.pending,
            "ingested_at": record.ingested_at,
        }
        object_id = _source_uuid(record.source)
        sources = self._writable(self.sources_name)
        if sources.data.exists(object_id):
            sources.data.replace(uuid=object_id, properties=properties)
        else:
            sources.data.insert(uuid=object_id, properties=properties)

    def delete_summaries(self, ids: Iterable[uuid.UUID]) -> int:
        return self._delete(self.summaries_name, ids)

    def delete_originals(self, ids: Iterable[uuid.UUID]) -> int:
        return self._delete(self.originals_name, ids)

    def delete_source_record(self, source: str) -> None:
        """Remove the record of `source` (its chunks and summaries: `delete_source` in
        `service.ingest.delete`, which orders the steps)."""
        self._writable(self.sources_name).data.delete_by_id(_source_uuid(source))

    def _writable(self, name: str) -> Collection[Any, Any]:
        return self.replication.for_writes(self.client.collections.use(name))

    def _insert(self, name: str, objects: list[DataObject[Any, Any]]) -> int:
        collection = self._writable(name)
        written = 0
        for start in range(0, len(objects), 200):
            batch = objects[start : start + 200]
            result = collection.data.insert_many(batch)
            if result.errors:
                first = next(iter(result.errors.values()))
                raise StoreError(
                    f"{len(result.errors)} of {len(batch)} objects were rejected by "
                    f"{collection.name}: {first.message}"
                )
            written += len(batch)
        return written

    def _delete(self, name: str, ids: Iterable[uuid.UUID]) -> int:
        collection = self._writable(name)
        wanted = list(ids)
        deleted = 0
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            result = collection.data.delete_many(where=Filter.by_id().contains_any(batch))
            if result.failed:
                raise StoreError(f"{result.failed} deletions failed in {collection.name}")
            deleted += result.successful
        return deleted


_SOURCE_CHUNK_PROPERTIES = [
    "headers", "chunk_index", "content", "summary", "summary_pending", "summary_kind",
    "summary_model", "page_start", "page_end", "anchor",
]  # fmt: skip


def _source_chunk(obj: Any) -> SourceChunk:
    """A stored original as a reader browses it (`_SOURCE_CHUNK_PROPERTIES` returned);
    its summary's kind is None when the index did not keep it on the chunk."""
    shown = attached_summary(obj.properties)
    return SourceChunk(
        id=str(obj.uuid),
        headers=list(obj.properties.get("headers") or []),
        chunk_index=_int(obj.properties.get("chunk_index")),
        content=str(obj.properties.get("content") or ""),
        summary=str(obj.properties.get("summary") or "") or None,
        summary_pending=bool(obj.properties.get("summary_pending")),
        page_start=_optional_int(obj.properties.get("page_start")),
        page_end=_optional_int(obj.properties.get("page_end")),
        anchor=str(obj.properties.get("anchor") or ""),
        summary_kind=shown.kind if shown else None,
        summary_model=shown.model if shown else None,
    )


def attached_summary(properties: Mapping[str, Any]) -> ShownSummary | None:
    """The summary attached to an original, from the original's properties: None when it
    has none (pending or filtered out), and when its index was built before chunks kept
    their summary's kind (`summaries_of` reads it from the summary then)."""
    text = str(properties.get("summary") or "")
    kind = str(properties.get("summary_kind") or "")
    if not text or not kind:
        return None
    return ShownSummary.of(text, stored_kind=kind, model=str(properties.get("summary_model") or ""))


def _source_uuid(source: str) -> uuid.UUID:
    return uuid.uuid5(NAMESPACE, f"source\n{source}")


def _searchable_properties(text_name: str) -> list[Property]:
    """What originals and summaries share: the BM25 text, header path, identifiers, source."""
    return [
        Property(name=text_name, data_type=DataType.TEXT),
        Property(name="headers", data_type=DataType.TEXT_ARRAY),
        Property(
            name="identifiers", data_type=DataType.TEXT_ARRAY, tokenization=Tokenization.WHITESPACE
        ),
        Property(name="title", data_type=DataType.TEXT),
        Property(name="source", data_type=DataType.TEXT, tokenization=Tokenization.FIELD),
        _filter_only("header_path"),
        _filter_only("content_hash"),
    ]


def _filters(filters: SearchFilters) -> Any:
    parts: list[Any] = []
    if filters.source:
        parts.append(Filter.by_property("source").equal(filters.source))
    if filters.source_prefix:
        parts.append(Filter.by_property("source").like(like_prefix(filters.source_prefix)))
    if filters.header_prefix:
        parts.append(Filter.by_property("header_path").like(like_prefix(filters.header_prefix)))
    if filters.title:
        parts.append(Filter.by_property("title").equal(filters.title))
    return Filter.all_of(parts) if parts else None


#: Properties of OriginalDocuments added after collections were first built; an existing
#: collection gets them when it is next opened for writing (`ensure_schema`).
_ADDED_ORIGINAL_PROPERTIES = (
    stored_text("anchor"),
    # The attached summary's kind ("llm" or "extractive") and model, shown with each hit.
    stored_text("summary_kind"),
    stored_text("summary_model"),
)


def _filter_only(name: str) -> Property:
    """An exact-match text property that takes no part in BM25."""
    return Property(
        name=name,
        data_type=DataType.TEXT,
        tokenization=Tokenization.FIELD,
        index_searchable=False,
    )


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def _optional_int(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _float(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _shared_properties(record: OriginalRecord | SummaryRecord) -> dict[str, Any]:
    """The properties an original and its summary both carry, for filters and BM25."""
    return {
        "headers": record.headers,
        "identifiers": record.identifiers,
        "title": record.title,
        "source": record.source,
        "header_path": header_path(record.headers),
    }


def _vector(vectors: Any, name: str) -> list[float]:
    """One named single vector of an object (empty when absent)."""
    value = (vectors or {}).get(name) or []
    return [float(x) for x in value]
