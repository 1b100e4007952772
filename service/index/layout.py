"""The index's collections: their layout, their creation, and bringing an older one up to date.

Collections (names may carry `Settings.external.collection_prefix`):

- `OriginalDocuments`: one object per chunk, with three named vectors: `content` (header
  path + text), `summary` (header path + its summary once attached) and `context`
  (header path + summary + text, embedded together); the last two are the content
  vector until a summary is attached, or when it was filtered out. The attached
  summary's text is also a BM25 property of the chunk.
- `SummarizedDocuments`: one object per (chunk, model, prompt version), vector = embedding
  of header path + summary, reference `originalDocument` → its chunk.
- `IngestedSources`: one object per source: content hash, status, chunk count, pending
  summaries, time.

All three are created with the store's `Replication` (service/index/replication.py).
The description of `OriginalDocuments` records the embedding model, its dimension and the
layout (`SCHEMA_VERSION`) the collections were built with.

BM25 has to work on code: prose properties use `word` tokenization (so `range()` and
`range` meet), and an `identifiers` property with `whitespace` tokenization keeps
`os.path.join` and `__init__` whole. No stopword list: "for", "if", "in", "is" are
Python keywords and must stay searchable.

Upgrades: `open` (run when the store is built) adds the properties newer than the existing
collections (`_ADDED_ORIGINAL_PROPERTIES`, `_ADDED_SUMMARY_PROPERTIES`,
`_ADDED_SOURCE_PROPERTIES`: the version labels and `indexed_at`), so no read or filter
asks for a property a collection lacks; layout 2 → 3 is `add_context_vector` then
`mark_context_vectors` (`synopsis reattach`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from weaviate.classes.config import (
    Configure,
    DataType,
    Property,
    ReferenceProperty,
    StopwordsPreset,
    Tokenization,
    VectorDistances,
)
from weaviate.collections.classes.config import ReferencePropertyBase
from weaviate.exceptions import UnexpectedStatusCodeError

from service.errors import EmbeddingMismatchError
from service.index.access import IndexAccess, store_errors
from service.index.records import CONTENT_VECTOR, CONTEXT_VECTOR, SUMMARY_VECTOR
from service.index.rows import vector
from service.index.schema import (
    delete_collections,
    ensure_collection,
    keyword_property,
    stored_text,
)

__all__ = ["LAYOUT_RECHECK_SECONDS", "SCHEMA_VERSION", "Layout"]

#: The layout of the collections; one built with another layout is refused (re-index).
#: 2: named vectors `content`/`summary` and the summary's text on each original.
#: 3: a third named vector, `context`. A layout-2 index is still read (its `joint` search
#: uses the `summary` vector) until `synopsis reattach` adds and fills `context`.
SCHEMA_VERSION = 3
_READABLE_SCHEMAS = (2, SCHEMA_VERSION)
#: How long a process trusts a layout-2 reading before it reads the layout again.
LAYOUT_RECHECK_SECONDS = 30.0


class Layout(IndexAccess):
    """Creates the collections, reads what they were built with, and upgrades them."""

    # What the collections were built with: read once, as searches check it every time.
    _embedding_info: dict[str, object] | None = None
    # When a layout-2 index was last seen as such (it is read again after a while, so that
    # a serving process notices another process's `synopsis reattach`).
    _legacy_seen_at: float | None = None

    def open(self) -> None:
        """Read the layout of existing collections and bring them up to date: add the
        properties newer than `OriginalDocuments` (objects written before have none: read
        as empty). Nothing to do while they do not exist (`ensure_schema` creates them
        whole). Another process doing the same at the same moment is fine."""
        with store_errors(f"opening {self.originals_name}"):
            if not self.client.collections.exists(self.originals_name):
                return
            config = self.client.collections.use(self.originals_name).config.get()
            self._add_missing_properties(
                self.originals_name,
                {prop.name for prop in config.properties},
                _ADDED_ORIGINAL_PROPERTIES,
            )
            for name, added in (
                (self.summaries_name, _ADDED_SUMMARY_PROPERTIES),
                (self.sources_name, _ADDED_SOURCE_PROPERTIES),
            ):
                if self.client.collections.exists(name):
                    present = self.client.collections.use(name).config.get().properties
                    self._add_missing_properties(name, {p.name for p in present}, added)
            self._embedding_info = _built_with(config.description)

    def exists(self) -> bool:
        """True when the collections have been created."""
        if self._embedding_info is not None:
            return True
        with store_errors(f"looking for {self.originals_name}"):
            return bool(self.client.collections.exists(self.originals_name))

    def ensure_schema(self, *, embedding_model: str, dimension: int) -> None:
        """Create the collections, or check they were built with the same embedding model.

        Safe when several processes do it at once (`service.index.schema`).
        """
        expected = json.dumps(
            {"embedding_model": embedding_model, "dimension": dimension, "schema": SCHEMA_VERSION}
        )
        with store_errors(f"creating {self.originals_name}"):
            created = self._embedding_info is None and ensure_collection(
                self.client, self.originals_name, lambda: self._create_originals(expected)
            )
        if not created:
            if self._embedding_info is None:
                self.open()  # they appeared after this store was built
            self.check_embedding(embedding_model=embedding_model, dimension=dimension)
        with store_errors(f"creating {self.summaries_name} and {self.sources_name}"):
            ensure_collection(
                self.client, self.summaries_name, lambda: self._create_summaries(expected)
            )
            ensure_collection(self.client, self.sources_name, self._create_sources)

    def embedding_info(self) -> dict[str, object] | None:
        """The embedding model and dimension the collections were built with, if known."""
        if self._embedding_info is None and self.exists():
            with store_errors(f"reading the layout of {self.originals_name}"):
                self._embedding_info = _built_with(self.originals.config.get().description)
        return self._embedding_info

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
        with store_errors(f"adding the context vector to {self.originals_name}"):
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
                    uuid=obj.uuid, vector={CONTEXT_VECTOR: vector(obj.vector, CONTENT_VECTOR)}
                )

    def mark_context_vectors(self) -> None:
        """Layout 2 → 3, last step: record the layout once every chunk has its vector."""
        info = dict(self.embedding_info() or {})
        info["schema"] = SCHEMA_VERSION
        with store_errors(f"recording the layout of {self.originals_name}"):
            self.client.collections.use(self.originals_name).config.update(
                description=json.dumps(info)
            )
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

    def drop(self) -> None:
        """Delete the three collections (tests and explicit resets only)."""
        self._embedding_info = None
        self._legacy_seen_at = None
        with store_errors("deleting the collections"):
            delete_collections(
                self.client, [self.summaries_name, self.originals_name, self.sources_name]
            )

    def _add_missing_properties(
        self, name: str, present: set[str], added: Sequence[Property]
    ) -> None:
        """Add the properties of `added` that the existing collection `name` lacks. Another
        process adding one at the same moment is fine."""
        collection = self.client.collections.use(name)
        for prop in added:
            if prop.name in present:
                continue
            try:
                collection.config.add_property(prop)
            except UnexpectedStatusCodeError:
                present = {p.name for p in collection.config.get().properties}
                if prop.name not in present:
                    raise

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
                *_ADDED_SUMMARY_PROPERTIES,
            ],
            references=[
                ReferenceProperty(name="originalDocument", target_collection=self.originals_name)
            ],
        )

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
                *_ADDED_SOURCE_PROPERTIES,
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


def _built_with(description: str | None) -> dict[str, object] | None:
    """What a collection's description says it was built with (None when it is not ours)."""
    try:
        info = json.loads(description or "")
    except json.JSONDecodeError:
        return None
    return info if isinstance(info, dict) else None


def _filter_only(name: str) -> Property:
    """An exact-match text property that takes no part in BM25."""
    return Property(
        name=name,
        data_type=DataType.TEXT,
        tokenization=Tokenization.FIELD,
        index_searchable=False,
    )


#: Its source's version label and group (`service.index.versions`), and when it was
#: written, on every chunk and summary: those written before read as no version, no time.
_VERSION_PROPERTIES = (
    _filter_only("version"),
    _filter_only("version_group"),
    Property(name="indexed_at", data_type=DataType.DATE),
)

#: Properties of OriginalDocuments added after collections were first built; an existing
#: collection gets them when a store opens it (`Layout.open`).
_ADDED_ORIGINAL_PROPERTIES = (
    stored_text("anchor"),
    # The attached summary's kind ("llm" or "extractive") and model, shown with each hit.
    stored_text("summary_kind"),
    stored_text("summary_model"),
    *_VERSION_PROPERTIES,
)
#: The same for SummarizedDocuments and IngestedSources.
_ADDED_SUMMARY_PROPERTIES = _VERSION_PROPERTIES
_ADDED_SOURCE_PROPERTIES = (keyword_property("version"), keyword_property("version_group"))


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
