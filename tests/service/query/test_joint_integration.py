"""The default mode on the real stack: a chunk found through its summary's words; an index
built with another embedding model or an older layout is refused with the re-index message;
an index of layout 2 is searched as before and gains its `context` vectors on reattach."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from service.errors import EmbeddingMismatchError
from service.index import layout as store_module
from service.index.records import (
    CONTENT_VECTOR,
    CONTEXT_VECTOR,
    OriginalRecord,
    SummaryAttachment,
    SummaryRecord,
    context_text,
    indexed_text,
)
from service.index.store import Store
from service.query.search import Hit, SearchRequest
from service.settings import Settings
from service.synopsis import Synopsis

pytestmark = pytest.mark.integration

HEADERS = ["Networking notes", "Sockets"]
# The chunk never says "timeout", "hang" or "unresponsive server"; its summary does.
CONTENT = (
    "Call `sock.settimeout(5.0)` before `connect()`; a blocking call then raises "
    "`TimeoutError` after five seconds."
)
SUMMARY = (
    "How to stop a program from hanging on an unresponsive server: give the socket a "
    "timeout so that connecting or reading fails after a few seconds."
)
DECOYS = {
    "Servers": "A server process listens on a port and answers each client in turn.",
    "Programs": "A program that stops responding can be inspected with a debugger.",
}
QUERY = "my program hangs forever on an unresponsive server"


@pytest.fixture
def joint_doc(core: Synopsis) -> Iterator[str]:
    """Four chunks written through the real store; the socket chunk gets a known summary."""
    source = f"joint-{uuid.uuid4().hex}.md"
    texts = {"Sockets": CONTENT, **DECOYS}
    vectors = core.embedder.embed_documents(
        [indexed_text(["Networking notes", name], text) for name, text in texts.items()]
    )
    records = [
        OriginalRecord(
            id=uuid.uuid4(),
            source=source,
            title="Networking notes",
            headers=["Networking notes", name],
            chunk_index=index,
            content=text,
            content_hash=f"{source}-{index}",
            vector=vector,
        )
        for index, ((name, text), vector) in enumerate(zip(texts.items(), vectors, strict=True))
    ]
    core.store.ensure_schema(
        embedding_model=core.embedder.model, dimension=core.embedder.dimension()
    )
    core.store.write_originals(records)
    summary_vector, context_vector = core.embedder.embed_documents(
        [indexed_text(HEADERS, SUMMARY), context_text(HEADERS, SUMMARY, CONTENT)]
    )
    core.store.attach_summaries(
        [
            SummaryAttachment(
                original_id=records[0].id,
                summary_id=uuid.uuid4(),
                text=SUMMARY,
                vector=summary_vector,
                context_vector=context_vector,
                similarity=1.0,
            )
        ]
    )
    yield source
    core.store.delete_originals([record.id for record in records])


def test_the_default_mode_finds_a_chunk_through_its_summary(core: Synopsis, joint_doc: str) -> None:
    """The summary reaches the default search through the `context` vector: the chunk
    whose summary speaks the query's words gains on the others against the same search
    with the summaries switched off; with the summary's words in BM25 too, it is first."""
    joint = core.search(SearchRequest(query=QUERY, k=4, source=joint_doc))
    assert {hit.leg for hit in joint} == {"joint"}
    alone = core.search(SearchRequest(query=QUERY, k=4, mode="originals", source=joint_doc))
    assert _margin(joint) > _margin(alone)
    words = core.search(
        SearchRequest(query=QUERY, k=4, source=joint_doc, summary_keyword_weight=0.5)
    )
    assert words[0].headers == HEADERS
    assert _margin(words) > _margin(joint)


def _margin(hits: list[Hit]) -> float:
    """How far the socket chunk's score is above the best other hit's (< 0: below it)."""
    scores = {hit.headers[-1]: hit.score for hit in hits}
    others = [score for name, score in scores.items() if name != "Sockets"]
    return scores.get("Sockets", 0.0) - max(others, default=0.0)


def test_summary_words_alone_reach_the_chunk_through_bm25(core: Synopsis, joint_doc: str) -> None:
    """With `summary_keyword_weight` above 0 (the default is 0: BM25 reads the chunk)."""
    request = SearchRequest(
        query="unresponsive", k=4, alpha=0.0, source=joint_doc, summary_keyword_weight=0.5
    )
    assert [hit.headers for hit in core.search(request)] == [HEADERS]
    off = dataclasses.replace(request, summary_keyword_weight=0.0)
    assert core.search(off) == []


def test_another_embedding_model_is_refused_with_the_reindex_message(
    core: Synopsis, joint_doc: str
) -> None:
    with pytest.raises(EmbeddingMismatchError, match="Re-index into new collections"):
        core.store.check_embedding(embedding_model="another-model")


def test_an_index_of_the_older_layout_is_refused(settings: Settings) -> None:
    synopsis = Synopsis.open(settings.with_overrides(collection_prefix="TestOldLayout"))
    try:
        store = synopsis.store
        store.drop()
        store.ensure_schema(embedding_model=synopsis.embedder.model, dimension=3)
        store.originals.config.update(
            description=f'{{"embedding_model": "{synopsis.embedder.model}", "dimension": 3}}'
        )
        fresh = Store(synopsis.client, prefix="TestOldLayout")
        with pytest.raises(EmbeddingMismatchError, match="older Synopsis"):
            fresh.check_embedding(embedding_model=synopsis.embedder.model)
    finally:
        synopsis.store.drop()
        synopsis.close()


def test_an_index_of_layout_2_is_searched_as_before_and_reattach_gives_it_context_vectors(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = "TestLayoutTwo"
    # The guard off: SUMMARY speaks a reader's words on purpose ("hanging", "unresponsive
    # server"), which `reattach`'s faithfulness check would replace by the chunk's own.
    synopsis = Synopsis.open(settings.with_overrides(collection_prefix=prefix, summary_guard=False))
    store = synopsis.store
    try:
        store.drop()
        _create_layout_2(
            store,
            monkeypatch,
            model=synopsis.embedder.model,
            dimension=synopsis.embedder.dimension(),
        )
        source = "layout-2.md"
        texts = {"Sockets": CONTENT, **DECOYS}
        vectors = synopsis.embedder.embed_documents(
            [indexed_text(["Networking notes", name], text) for name, text in texts.items()]
        )
        ids = [uuid.uuid4() for _ in texts]
        [summary_vector] = synopsis.embedder.embed_documents([indexed_text(HEADERS, SUMMARY)])
        originals = store.client.collections.use(store.originals_name)
        for index, ((name, text), vector) in enumerate(zip(texts.items(), vectors, strict=True)):
            attached = index == 0  # the socket chunk has its summary; the others pending
            originals.data.insert(
                uuid=ids[index],
                properties={
                    "source": source,
                    "title": "Networking notes",
                    "headers": ["Networking notes", name],
                    "chunk_index": index,
                    "content": text,
                    "content_hash": f"h{index}",
                    "summary": SUMMARY if attached else "",
                    "summary_id": str(uuid.uuid4()) if attached else "",
                    "summary_pending": not attached,
                    "summary_similarity": 0.9 if attached else 0.0,
                },
                vector={CONTENT_VECTOR: vector, "summary": summary_vector if attached else vector},
            )
        store.write_summaries([_summary_of(ids[0], source, summary_vector)])

        # Layout 2 is read, and `joint` reads it as it was built (the summary's vector).
        serving = Synopsis.open(settings.with_overrides(collection_prefix=prefix))
        try:
            assert not serving.store.has_context_vectors()
            hits = serving.search(SearchRequest(query=QUERY, k=4, source=source))
            assert hits[0].headers == HEADERS
            # The chunk did not keep its summary's kind then: it is read from the summary.
            assert (hits[0].summary, hits[0].summary_kind, hits[0].summary_model) == (
                SUMMARY, "generated", "m",
            )  # fmt: skip

            report = synopsis.reattach()
            assert (report.attached, report.filtered, report.orphans) == (1, 0, 0)
            assert Store(store.client, prefix=prefix).has_context_vectors()
            # A process that read layout 2 trusts it for a while, then reads it again.
            assert not serving.store.has_context_vectors()
            monkeypatch.setattr(store_module, "LAYOUT_RECHECK_SECONDS", 0.0)
            assert serving.store.has_context_vectors()
        finally:
            serving.close()
        stored = {
            obj.uuid: obj.vector
            for obj in originals.iterator(include_vector=True, return_properties=[])
        }
        [context_vector] = synopsis.embedder.embed_documents(
            [context_text(HEADERS, SUMMARY, CONTENT)]
        )
        assert stored[ids[0]][CONTEXT_VECTOR] == pytest.approx(context_vector, abs=1e-6)
        for object_id, vector in zip(ids[1:], vectors[1:], strict=True):
            assert stored[object_id][CONTEXT_VECTOR] == pytest.approx(vector, abs=1e-6)
        # The context vector and the summary's words (as `joint` read them when layout 3
        # was new; the default now leaves the words out of BM25).
        hits = synopsis.search(
            SearchRequest(query=QUERY, k=4, source=source, summary_keyword_weight=0.5)
        )
        assert hits[0].headers == HEADERS
        # `reattach` wrote it on the chunk.
        props = originals.query.fetch_object_by_id(ids[0]).properties
        assert (props["summary_kind"], props["summary_model"]) == ("llm", "m")
        assert (hits[0].summary_kind, hits[0].summary_model) == ("generated", "m")
    finally:
        store.drop()
        synopsis.close()


def _create_layout_2(
    store: Store, monkeypatch: pytest.MonkeyPatch, *, model: str, dimension: int
) -> None:
    """The collections as Synopsis built them before `context` vectors: two named vectors
    on OriginalDocuments and layout 2 in the description."""
    create = Store._create_vector_collection

    def without_context(
        self: Store, name: str, description: str, *, vectors: Sequence[str] = (), **options: Any
    ) -> None:
        kept = tuple(v for v in vectors if v != CONTEXT_VECTOR)
        create(self, name, description, vectors=kept, **options)

    with monkeypatch.context() as patch:
        patch.setattr(Store, "_create_vector_collection", without_context)
        store.ensure_schema(embedding_model=model, dimension=dimension)
    description = json.loads(store.originals.config.get().description or "{}")
    store.originals.config.update(description=json.dumps({**description, "schema": 2}))


def _summary_of(original_id: uuid.UUID, source: str, vector: list[float]) -> SummaryRecord:
    return SummaryRecord(
        id=uuid.uuid4(),
        original_id=original_id,
        source=source,
        title="Networking notes",
        headers=HEADERS,
        summary=SUMMARY,
        content_hash="h0",
        model="m",
        prompt_version="v",
        vector=vector,
        similarity=0.9,
    )
