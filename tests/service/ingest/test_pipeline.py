"""The ingest pipeline's logic on an in-memory store: two phases, repair, the filter."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from service.index.records import context_text
from service.ingest.attach import reattach
from service.ingest.pipeline import Ingestor
from service.ingest.quality import QualityThresholds, extractive_summary
from service.ingest.report import IngestEvent
from service.ingest.resummarize import resummarize
from service.ingest.summarize import Summarizer, clean_for_prompt
from service.models.embed import Embedder
from tests.service.fakes import MemoryStore

SOURCE = "guide.md"
PAGE = Document(
    page_content=(
        "# Guide\n\n## Install\n\nRun `pip install thing` to install the package.\n\n"
        "## Configure\n\nSet `THING_HOME` to the directory that holds the settings.\n\n"
        "## Run\n\nStart it with `thing serve --port 8000` and open the page.\n"
    ),
    metadata={"source": SOURCE, "title": "Guide"},
)
CHUNKS = 3
REPLY = "Explains how to set this up, with the commands and names it needs."
DEFAULTS = QualityThresholds()


def _ingestor(store: MemoryStore, *, min_similarity: float = -1.0) -> Ingestor:
    summarizer = Summarizer(
        FakeListChatModel(responses=[REPLY] * 20), model_name="fake", concurrency=1
    )
    embedder = Embedder(DeterministicFakeEmbedding(size=8), model="fake-embedding")
    return Ingestor(
        store=store, summarizer=summarizer, embedder=embedder, min_similarity=min_similarity
    )


def test_chunks_are_written_before_any_summary_and_every_chunk_gets_one() -> None:
    store = MemoryStore()
    report = _ingestor(store).ingest_documents([PAGE])
    assert store.log == [
        "record:ingesting",
        "originals",
        "summaries",
        "attach",
        "record:complete",
    ]
    assert (report.new_chunks, report.llm_calls, len(store.summaries)) == (CHUNKS, CHUNKS, CHUNKS)
    assert store.pending_summaries() == 0
    assert {a.text for a in store.attached.values()} == {REPLY}
    assert store.sources[SOURCE].pending == 0


def test_every_source_is_searchable_before_the_first_summary_is_written() -> None:
    store = MemoryStore()
    other = Document(page_content="# Other\n\nText of another page.\n", metadata={"source": "o.md"})
    _ingestor(store).ingest_documents([PAGE, other])
    first_summaries = store.log.index("summaries")
    assert store.log[:first_summaries] == [
        "record:ingesting",
        "originals",
        "record:ingesting",
        "originals",
    ]


def test_an_unchanged_source_makes_no_call_and_no_write() -> None:
    store = MemoryStore()
    _ingestor(store).ingest_documents([PAGE])
    store.log.clear()
    report = _ingestor(store).ingest_documents([PAGE])
    assert (report.unchanged_sources, report.llm_calls, report.objects_written) == (1, 0, 0)
    assert store.log == []


@pytest.mark.parametrize("failing_step", ["summaries", "attach"])
def test_an_ingest_stopped_in_phase_two_is_finished_by_the_next(failing_step: str) -> None:
    store = MemoryStore()
    store.fail_on = failing_step
    with pytest.raises(RuntimeError, match="injected"):
        _ingestor(store).ingest_documents([PAGE])
    record = store.sources[SOURCE]
    assert (record.status, record.pending, store.pending_summaries()) == (
        "ingesting",
        CHUNKS,
        CHUNKS,
    )
    assert len(store.originals) == CHUNKS  # searchable by their text meanwhile

    store.fail_on = None
    report = _ingestor(store).ingest_documents([PAGE])
    assert (report.new_chunks, report.unchanged_chunks) == (0, CHUNKS)
    # Summaries written before the stop come from the cache; the rest from the model.
    assert report.llm_calls + report.cached_summaries == CHUNKS
    assert report.cached_summaries == (CHUNKS if failing_step == "attach" else 0)
    assert store.sources[SOURCE].status == "complete"
    assert store.pending_summaries() == 0
    assert {s.original_id for s in store.summaries.values()} == set(store.originals)


def test_a_summary_below_the_threshold_is_kept_but_not_attached() -> None:
    store = MemoryStore()
    report = _ingestor(store, min_similarity=1.01).ingest_documents([PAGE])
    assert (report.filtered_summaries, len(store.summaries)) == (CHUNKS, CHUNKS)
    for oid, original in store.originals.items():
        assert store.attached[oid].text == ""
        assert store.summary_vectors[oid] == original.vector  # its own vector, not the summary's
        assert store.context_vectors[oid] == original.vector
    assert all(-1.0 <= s.similarity <= 1.0 for s in store.summaries.values())


def test_each_attached_summary_gives_its_chunk_the_vector_of_both_together() -> None:
    store = MemoryStore()
    ingestor = _ingestor(store)
    ingestor.ingest_documents([PAGE])
    for oid, original in store.originals.items():
        text = context_text(original.headers, REPLY, original.content)
        assert store.context_vectors[oid] == ingestor.embedder.embed_documents([text])[0]
        assert store.context_vectors[oid] != original.vector


def test_an_index_without_context_vectors_gets_them_before_the_ingest_writes() -> None:
    store = MemoryStore()
    _ingestor(store).ingest_documents([PAGE])
    store.context_layout = False
    store.context_vectors.clear()
    store.log.clear()
    _ingestor(store).ingest_documents([PAGE])  # unchanged page: nothing else to do
    assert store.log == ["add-context", "attach", "mark-context"]
    assert store.context_layout
    assert set(store.context_vectors) == set(store.originals)


def test_reattach_applies_a_new_threshold_without_a_model_call() -> None:
    store = MemoryStore()
    _ingestor(store).ingest_documents([PAGE])
    assert all(a.text == REPLY for a in store.attached.values())
    report = reattach(store, embedder=_ingestor(store).embedder, min_similarity=1.01)
    assert (report.attached, report.filtered, report.orphans) == (0, CHUNKS, 0)
    assert all(a.text == "" for a in store.attached.values())
    report = reattach(store, embedder=_ingestor(store).embedder, min_similarity=-1.0)
    assert (report.attached, report.filtered) == (CHUNKS, 0)
    assert all(a.text == REPLY for a in store.attached.values())


def test_anchors_are_stored_and_a_page_that_gained_them_is_updated_in_place() -> None:
    store = MemoryStore()
    _ingestor(store).ingest_documents([PAGE])
    assert {record.anchor for record in store.originals.values()} == {""}
    ids = set(store.originals)

    anchored = Document(
        page_content=PAGE.page_content.replace("## Install", "## Install {#install}").replace(
            "## Run", "## Run {#run}"
        ),
        metadata=PAGE.metadata,
    )
    report = _ingestor(store).ingest_documents([anchored])
    # Same chunks (the attribute is no part of their text): no embedding, no LLM call.
    assert (report.new_chunks, report.unchanged_chunks, report.llm_calls) == (0, CHUNKS, 0)
    assert set(store.originals) == ids
    by_header = {record.headers[-1]: record.anchor for record in store.originals.values()}
    assert by_header == {"Install": "install", "Configure": "", "Run": "run"}


def test_a_source_over_the_chunk_limit_is_refused_before_anything_is_written() -> None:
    store = MemoryStore()
    ingestor = _ingestor(store)
    ingestor.max_chunks = CHUNKS - 1
    report = ingestor.ingest_documents([PAGE])
    assert report.failed == [
        f"{SOURCE}: {CHUNKS} chunks, more than SYNOPSIS_MAX_CHUNKS_PER_SOURCE ({CHUNKS - 1}); "
        "not indexed (raise the setting to index it)"
    ]
    assert (report.sources, report.llm_calls, report.objects_written) == (0, 0, 0)
    assert store.log == []
    assert store.originals == {}


# Replies for the Install, Configure and Run chunks; the second names what the page does not.
INVENTED = "Set `THING_HOME` on Windows Server 2019 with Docker."
FAITHFUL = [
    "Explains installing the package with `pip install thing`.",
    "Set the `THING_HOME` directory for the settings.",
    "Start the server with `thing serve --port 8000`.",
]


def _ingested(replies: list[str]) -> tuple[MemoryStore, Ingestor]:
    """PAGE ingested without a guard: every reply is stored as it came."""
    store = MemoryStore()
    ingestor = _ingestor(store)
    ingestor.summarizer = Summarizer(
        FakeListChatModel(responses=replies), model_name="fake", concurrency=1
    )
    ingestor.ingest_documents([PAGE])
    return store, ingestor


def _by_header(store: MemoryStore) -> dict[str, tuple[str, str, str]]:
    headers = {oid: record.headers[-1] for oid, record in store.originals.items()}
    return {headers[s.original_id]: (s.kind, s.reason, s.summary) for s in store.summaries.values()}


def test_reattach_with_the_guard_replaces_invented_summaries_without_a_model_call() -> None:
    store, ingestor = _ingested([FAITHFUL[0], INVENTED, FAITHFUL[2]])
    calls = ingestor.summarizer.calls

    report = reattach(store, embedder=ingestor.embedder, min_similarity=-1.0, guard=DEFAULTS)

    assert (report.attached, report.replaced, ingestor.summarizer.calls) == (CHUNKS, 1, calls)
    configure = next(r for r in store.originals.values() if r.headers[-1] == "Configure")
    fallback = extractive_summary(clean_for_prompt(configure.content), configure.headers)
    assert _by_header(store) == {
        "Install": ("llm", "", FAITHFUL[0]),
        "Configure": ("extractive", "invented", fallback),
        "Run": ("llm", "", FAITHFUL[2]),
    }
    assert store.attached[configure.id].text == fallback
    assert (store.attached[configure.id].kind, store.attached[configure.id].model) == (
        "extractive",
        "fake",
    )
    # Without the guard nothing is replaced.
    store, ingestor = _ingested([FAITHFUL[0], INVENTED, FAITHFUL[2]])
    assert reattach(store, embedder=ingestor.embedder, min_similarity=-1.0).replaced == 0


def test_resummarize_invented_rewrites_only_the_flagged_generated_summaries() -> None:
    store, ingestor = _ingested([FAITHFUL[0], INVENTED, FAITHFUL[2]])
    summarizer = Summarizer(
        FakeListChatModel(responses=[FAITHFUL[1]]), model_name="fake", guard=DEFAULTS
    )

    report = resummarize(store, summarizer, ingestor.embedder, kind="invented")

    assert (report.selected, report.written, report.llm_calls) == (1, 1, 1)
    assert _by_header(store) == {
        "Install": ("llm", "", FAITHFUL[0]),
        "Configure": ("llm", "", FAITHFUL[1]),
        "Run": ("llm", "", FAITHFUL[2]),
    }


class _Stop(Exception):
    """What a job's callback raises to stop an ingest."""


def _long_page(sections: int) -> Document:
    """ "long.md": a title and `sections` short sections, one chunk each."""
    return Document(
        page_content="# Long\n\n"
        + "".join(f"## Part {n}\n\nStep {n} sets `option_{n}` to on.\n\n" for n in range(sections)),
        metadata={"source": "long.md", "title": "Long"},
    )


def test_a_stopped_ingest_keeps_every_summary_attached_before_the_stop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("service.ingest.pipeline.ATTACH_EVERY", 2)
    sections = 12
    page = _long_page(sections)
    store = MemoryStore()
    summarized = 0

    def stop_after_six(event: IngestEvent) -> None:
        nonlocal summarized
        if event.stage == "summarize":
            summarized = event.done
        elif event.stage == "wait" and summarized >= 6:
            raise _Stop

    slow = Summarizer(
        FakeListChatModel(responses=[REPLY] * 40, sleep=0.1), model_name="fake", concurrency=1
    )
    embedder = Embedder(DeterministicFakeEmbedding(size=8), model="fake-embedding")
    ingestor = Ingestor(
        store=store,
        summarizer=slow,
        embedder=embedder,
        min_similarity=-1.0,
        on_event=stop_after_six,
    )
    with pytest.raises(_Stop):
        ingestor.ingest_documents([page])
    slow.close()

    kept = len(store.attached)
    assert 2 <= kept < sections  # attached in batches while the model wrote
    assert store.pending_summaries() == sections - kept
    assert store.sources["long.md"].status == "ingesting"
    assert store.log.count("attach") >= 1
    assert "record:complete" not in store.log

    report = _ingestor(store).ingest_documents([page])
    assert report.llm_calls == sections - kept  # nothing attached before the stop is paid again
    assert store.pending_summaries() == 0
    assert store.sources["long.md"].status == "complete"


class _WatchedEmbedder(Embedder):
    """Records whether a summary call was in flight whenever the ingest embedded texts."""

    def __init__(self, summarizer: Summarizer) -> None:
        super().__init__(DeterministicFakeEmbedding(size=8), model="fake-embedding")
        self.summarizer = summarizer
        self.during_calls: list[bool] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.during_calls.append(not self.summarizer.turns.wait_idle(timeout=0.0))
        return super().embed_documents(texts)


@pytest.mark.parametrize("exclusive", [True, False])
def test_batches_are_embedded_while_no_summary_call_runs_unless_switched_off(
    monkeypatch: pytest.MonkeyPatch, exclusive: bool
) -> None:
    monkeypatch.setattr("service.ingest.pipeline.ATTACH_EVERY", 2)
    sections = 10
    page = _long_page(sections)
    store = MemoryStore()
    slow = Summarizer(
        FakeListChatModel(responses=[REPLY] * 40, sleep=0.3), model_name="fake", concurrency=2
    )
    embedder = _WatchedEmbedder(slow)
    ingestor = Ingestor(
        store=store,
        summarizer=slow,
        embedder=embedder,
        min_similarity=-1.0,
        exclusive_model_calls=exclusive,
    )
    try:
        report = ingestor.ingest_documents([page])
    finally:
        slow.close()
    assert (report.llm_calls, store.pending_summaries()) == (sections, 0)
    assert store.log.count("attach") >= 2  # batches attached while the model wrote
    assert any(embedder.during_calls) is not exclusive
    assert slow.turns.paused is False
