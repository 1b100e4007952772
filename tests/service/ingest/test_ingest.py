"""Ingestion on the real stack: invariants, idempotence, edits, deletes and interruptions.

Every test here works on the session's `TestCore` collections. Sources other than the
real page are its Markdown, whole or a few of its sections (the page's chunks, so their
summaries come from the cache: no LLM call), or small Markdown files written under tmp
paths; each test deletes the sources it added.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from weaviate.classes.query import Filter

from service.errors import ModelError, StoreError
from service.index.store import Store
from service.ingest.report import IngestEvent, IngestReport
from service.query.search import SearchRequest
from service.settings import Settings
from service.stack import LocalStack
from service.synopsis import Synopsis
from tests.service.holds import mentioning, ollama_gate
from tests.support.cli import cli
from tests.support.corpus import (
    CONTROLFLOW,
    CONTROLFLOW_CHUNKS,
    CONTROLFLOW_HEAD,
    CONTROLFLOW_HEAD_CHUNKS,
    write_controlflow_markdown,
)
from tests.support.documents import write_markdown
from tests.support.invariants import assert_invariants, census
from tests.support.models import cheap_model_settings, model_env
from tests.support.stacks import IsolatedSettings

pytestmark = pytest.mark.integration


def _count(store: Store, source: str | None = None) -> tuple[int, int]:
    """(originals, summaries) of `source`, or of every source."""
    where = Filter.by_property("source").equal(source) if source else None
    return (
        store.originals.aggregate.over_all(filters=where, total_count=True).total_count or 0,
        store.summaries.aggregate.over_all(filters=where, total_count=True).total_count or 0,
    )


@pytest.fixture
def remove_sources(core: Synopsis) -> Iterator[list[str]]:
    """Sources a test adds: deleted afterwards, whatever happened."""
    added: list[str] = []
    yield added
    for source in added:
        core.delete_source(source)


# -- the first ingest and a repeat ---------------------------------------------------------


def test_first_ingest_writes_every_chunk_and_its_summary(
    core: Synopsis, controlflow: IngestReport
) -> None:
    assert (controlflow.sources, controlflow.failed) == (1, [])
    if controlflow.unchanged_sources:  # collections kept from an earlier session
        pytest.skip("the page was ingested by an earlier session")
    assert (controlflow.new_chunks, controlflow.deleted_chunks) == (CONTROLFLOW_CHUNKS, 0)
    assert controlflow.llm_calls + controlflow.cached_summaries >= CONTROLFLOW_CHUNKS
    assert controlflow.objects_written == 2 * CONTROLFLOW_CHUNKS


def test_invariants_after_ingest(core: Synopsis, controlflow: IngestReport) -> None:
    found = assert_invariants(core.store)
    assert found.originals[CONTROLFLOW] == CONTROLFLOW_CHUNKS
    assert found.summaries[CONTROLFLOW] == CONTROLFLOW_CHUNKS
    record = core.store.source_record(CONTROLFLOW)
    assert record is not None
    assert (record.status, record.chunks, record.title) == (
        "complete",
        CONTROLFLOW_CHUNKS,
        "4. More Control Flow Tools",
    )


def test_summaries_record_model_and_prompt_version(
    core: Synopsis, controlflow: IngestReport
) -> None:
    result = core.store.summaries.query.fetch_objects(
        filters=Filter.by_property("source").equal(CONTROLFLOW),
        limit=100,
        return_properties=["model", "prompt_version", "kind", "summary"],
    )
    assert len(result.objects) == CONTROLFLOW_CHUNKS
    assert {
        (obj.properties["model"], obj.properties["prompt_version"]) for obj in result.objects
    } == {(core.summarizer.model_name, core.summarizer.prompt_version)}
    # "extractive": the summary guard's fallback for a model summary it rejected twice.
    assert {obj.properties["kind"] for obj in result.objects} <= {"llm", "extractive"}
    assert all(str(obj.properties["summary"]).strip() for obj in result.objects)


def test_reingest_unchanged_makes_no_llm_call_and_no_write(
    core: Synopsis, controlflow: IngestReport
) -> None:
    before = _count(core.store)
    calls = core.summarizer.calls

    report = core.ingest([CONTROLFLOW])

    assert (report.sources, report.unchanged_sources) == (1, 1)
    assert (report.new_chunks, report.unchanged_chunks, report.deleted_chunks) == (
        0,
        CONTROLFLOW_CHUNKS,
        0,
    )
    assert (report.llm_calls, report.cached_summaries, report.objects_written) == (0, 0, 0)
    assert core.summarizer.calls == calls
    assert _count(core.store) == before


# -- an edited copy of the page ------------------------------------------------------------

_EDITED_SENTENCE = (
    "This is commonly used for creating minimal classes:",
    "This is commonly used for creating minimal classes, for example placeholders:",
)
# The header line ends with the section's anchor (`{#lambda-expressions}`) since the HTML
# loader writes heading ids.
_LAMBDA_SECTION = re.compile(
    r"^### 4\.8\.6\. Lambda Expressions(?: \{#[^}]*\})?$.*?(?=^### 4\.8\.7\. )", re.M | re.S
)
_LAMBDA_HEADER = "4.8.6. Lambda Expressions"
#: The sections of the edited copy: "4.5. pass Statements" (edited), "4.8.6. Lambda
#: Expressions" (removed), their neighbours in the page, and the title's chunk.
_EDITED_COPY = ("4.5", "4.8", "4.8.6", "4.8.7")
_EDITED_COPY_CHUNKS = 5


def _edit(page: Path) -> None:
    """Change one sentence of "4.5. pass Statements" and remove "4.8.6. Lambda Expressions"."""
    markdown = page.read_text(encoding="utf-8")
    assert markdown.count(_EDITED_SENTENCE[0]) == 1
    markdown = markdown.replace(*_EDITED_SENTENCE)
    markdown, removed = _LAMBDA_SECTION.subn("", markdown)
    assert removed == 1
    page.write_text(markdown, encoding="utf-8")


def _headers_found(core: Synopsis, query: str, source: str) -> list[str]:
    hits = core.search(SearchRequest(query=query, k=10, source=source))
    return [hit.headers[-1] for hit in hits]


def test_edited_copy_summarizes_only_changed_chunks_and_drops_the_removed_section(
    core: Synopsis, controlflow: IngestReport, tmp_path: Path, remove_sources: list[str]
) -> None:
    page = write_controlflow_markdown(tmp_path / "controlflow.md", _EDITED_COPY)
    source = str(page)
    remove_sources.append(source)

    # Another source with chunks of the page: every summary comes from the cache.
    first = core.ingest([source])
    assert (first.new_chunks, first.llm_calls, first.cached_summaries) == (
        _EDITED_COPY_CHUNKS,
        0,
        _EDITED_COPY_CHUNKS,
    )
    assert first.objects_written == 2 * _EDITED_COPY_CHUNKS
    assert _LAMBDA_HEADER in _headers_found(core, "lambda expressions anonymous functions", source)

    _edit(page)
    calls = core.summarizer.calls
    second = core.ingest([source])

    # One chunk changed (new), one changed and one removed (deleted); only the new one
    # reaches the model.
    assert (second.new_chunks, second.unchanged_chunks, second.deleted_chunks) == (
        1,
        _EDITED_COPY_CHUNKS - 2,
        2,
    )
    # One call for the new chunk, and one more if the summary guard asked for a retry
    # (a flagged summary is not retried while recent retries rarely passed).
    guard_retries = (
        second.retried_summaries + second.extractive_summaries - second.unretried_summaries
    )
    assert (second.llm_calls, second.cached_summaries, second.objects_written) == (
        1 + guard_retries,
        0,
        2,
    )
    assert core.summarizer.calls - calls == second.llm_calls
    assert _count(core.store, source) == (_EDITED_COPY_CHUNKS - 1, _EDITED_COPY_CHUNKS - 1)
    found = assert_invariants(core.store)
    assert found.originals[CONTROLFLOW] == CONTROLFLOW_CHUNKS  # the real page is untouched

    assert _LAMBDA_HEADER not in _headers_found(
        core, "lambda expressions anonymous functions", source
    )
    assert _LAMBDA_HEADER in _headers_found(
        core, "lambda expressions anonymous functions", CONTROLFLOW
    )
    edited = core.search(
        SearchRequest(query="minimal classes placeholders pass", k=3, source=source)
    )
    assert any(_EDITED_SENTENCE[1] in hit.content for hit in edited)

    # Chunk indexes follow the new order: 0 … n-1 without a gap where the section was.
    indexes = sorted(s.chunk_index for s in core.store.existing_originals(source).values())
    assert indexes == list(range(_EDITED_COPY_CHUNKS - 1))


def test_delete_source_removes_originals_summaries_and_record(
    core: Synopsis, controlflow: IngestReport, tmp_path: Path
) -> None:
    page = write_controlflow_markdown(tmp_path / "controlflow.md", CONTROLFLOW_HEAD)
    source = str(page)
    core.ingest([source])
    assert _count(core.store, source) == (CONTROLFLOW_HEAD_CHUNKS, CONTROLFLOW_HEAD_CHUNKS)

    assert core.delete_source(source) == (CONTROLFLOW_HEAD_CHUNKS, CONTROLFLOW_HEAD_CHUNKS)

    assert _count(core.store, source) == (0, 0)
    assert core.store.source_record(source) is None
    assert source not in [record.source for record in core.sources()]
    assert _count(core.store, CONTROLFLOW) == (CONTROLFLOW_CHUNKS, CONTROLFLOW_CHUNKS)
    assert core.delete_source(source) == (0, 0)
    assert_invariants(core.store)


# -- interruptions ---------------------------------------------------------------------


def test_failure_between_originals_and_summaries_is_repaired_by_the_next_ingest(
    core: Synopsis,
    controlflow: IngestReport,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    remove_sources: list[str],
) -> None:
    """The worst point to stop: originals written, their summaries not yet."""
    page = write_controlflow_markdown(tmp_path / "controlflow.md", CONTROLFLOW_HEAD)
    source = str(page)
    remove_sources.append(source)

    def fail(*_args: object, **_kwargs: object) -> int:
        raise StoreError("injected: Weaviate went away")

    with monkeypatch.context() as patch:
        patch.setattr(core.store, "write_summaries", fail)
        with pytest.raises(StoreError, match=r"^injected"):
            core.ingest([source])

    interrupted = census(core.store)
    assert (interrupted.originals[source], interrupted.summaries[source]) == (
        CONTROLFLOW_HEAD_CHUNKS,
        0,
    )
    assert interrupted.dangling_summaries == []
    record = core.store.source_record(source)
    assert record is not None
    assert record.status == "ingesting"
    # Search still works and only returns originals that exist.
    summary_hits = core.search(SearchRequest(query="range()", mode="summaries", source=source))
    assert summary_hits == []

    report = core.ingest([source])

    assert (report.unchanged_sources, report.new_chunks, report.unchanged_chunks) == (
        0,
        0,
        CONTROLFLOW_HEAD_CHUNKS,
    )
    assert (report.llm_calls, report.cached_summaries, report.objects_written) == (
        0,
        CONTROLFLOW_HEAD_CHUNKS,
        CONTROLFLOW_HEAD_CHUNKS,
    )
    found = assert_invariants(core.store)
    assert (found.originals[source], found.summaries[source]) == (
        CONTROLFLOW_HEAD_CHUNKS,
        CONTROLFLOW_HEAD_CHUNKS,
    )
    record = core.store.source_record(source)
    assert record is not None
    assert record.status == "complete"


_NOTES = {
    "Virtual environments": "Create one with `python -m venv .venv`, then activate it.",
    "Formatting strings": "Use f-strings such as `f'{name}: {value:.2f}'` to format values.",
}


#: The source lease of a process the test kills (`ingest_lock_seconds`): short, so that
#: the next run takes the sources over in seconds; renewed every third of it meanwhile.
KILLED_LEASE_SECONDS = 6.0


def _synopsis_command() -> list[str]:
    return [str(Path(sys.executable).with_name("synopsis"))]


def test_killed_ingest_is_completed_by_the_next_run(
    core: Synopsis, core_settings: Settings, controlflow: IngestReport, tmp_path: Path
) -> None:
    """SIGKILL `synopsis ingest` after it wrote the first file's originals and before the
    second file's: the run is held there by a gate that holds the second file's embedding
    request (its Ollama is the gate, the real Ollama behind it)."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    # The page's first sections: cached summaries, a few embeddings.
    write_controlflow_markdown(corpus / "a_controlflow.md", CONTROLFLOW_HEAD)
    write_markdown(corpus / "b_notes.md", "Notes", _NOTES)  # needs the model
    sources = [str(corpus / "a_controlflow.md"), str(corpus / "b_notes.md")]
    with ollama_gate(core_settings.resolved_ollama_url) as gate:
        gate.hold = mentioning(_NOTES["Virtual environments"])
        env = {
            **os.environ,
            **model_env(core_settings),
            "SYNOPSIS_COLLECTION_PREFIX": core_settings.external.collection_prefix,
            "SYNOPSIS_OLLAMA_URL": gate.url,
            # The killed run's lease on the second file ends this long after its last
            # renewal; the next run waits for it (60 s by default).
            "SYNOPSIS_INGEST_LOCK_SECONDS": str(KILLED_LEASE_SECONDS),
        }
        try:
            process = subprocess.Popen(
                [*_synopsis_command(), "ingest", str(corpus)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            try:
                assert gate.held.wait(300), "the second file was never embedded"
            finally:
                process.send_signal(signal.SIGKILL)
            assert process.wait(timeout=60) == -signal.SIGKILL
            killed_at = census(core.store)
            assert killed_at.originals[sources[0]] == CONTROLFLOW_HEAD_CHUNKS
            assert killed_at.originals[sources[1]] == 0
            gate.release()

            code, stdout, stderr = cli(core_settings, "ingest", str(corpus))

            assert code == 0, stderr
            assert stdout.startswith("2 sources (")
            found = assert_invariants(core.store)
            assert [found.originals[source] for source in sources] == [CONTROLFLOW_HEAD_CHUNKS, 2]
            assert [found.summaries[source] for source in sources] == [CONTROLFLOW_HEAD_CHUNKS, 2]
            records = [core.store.source_record(source) for source in sources]
            assert [(r.status, r.chunks) for r in records if r] == [
                ("complete", CONTROLFLOW_HEAD_CHUNKS),
                ("complete", 2),
            ]
        finally:
            for source in sources:
                core.delete_source(source)


_TOPICS = {
    "Reading files": "Open a file with `open(path)` inside a `with` block to close it.",
    "Sorting lists": "`sorted(items, key=len)` returns a new list ordered by length.",
    "Exceptions": "Catch `ValueError` with `try`/`except` when parsing numbers.",
}


def test_ollama_stopped_mid_ingest_is_a_clear_error_and_a_rerun_completes(
    core: Synopsis,
    core_settings: Settings,
    controlflow: IngestReport,
    isolated_settings: IsolatedSettings,
    tmp_path: Path,
) -> None:
    """Summarize on a separate Ollama, stop it after the first summary, start it again.
    The summaries only need to exist: the smallest model writes them, briefly."""
    isolated = cheap_model_settings(isolated_settings(500, weaviate=False, ollama=True))
    ollama = LocalStack(isolated)
    assert ollama.up().ollama.running
    # The test's Synopsis sees that Ollama as external, so nothing restarts it behind our back.
    settings = cheap_model_settings(core_settings).with_overrides(
        ollama_url=ollama.ollama_url, summary_retries=1
    )
    document = str(write_markdown(tmp_path / "topics.md", "Topics", _TOPICS))
    stopped: list[str] = []

    def stop_after_first_summary(event: IngestEvent) -> None:
        if event.stage == "summarize" and event.done == 1 and not stopped:
            stopped.extend(ollama.down())

    synopsis = Synopsis.open(settings)
    try:
        with pytest.raises(ModelError) as caught:
            synopsis.ingest([document], on_event=stop_after_first_summary)
        assert stopped == ["ollama"]
        message = str(caught.value)
        assert message.startswith(f"summarizing {document} § Topics > ")
        assert f"with {settings.models.chat_model!r} failed after 2 attempts: " in message
        assert "\n" not in message
        # Two phases: the chunks were written (searchable) before the summaries failed.
        assert _count(core.store, document) == (3, 0)
        record = core.store.source_record(document)
        assert record is not None
        assert (record.status, record.pending) == ("ingesting", 3)

        # The CLI reports the stopped server in one line, without a traceback.
        code, stdout, stderr = cli(
            core_settings, "ingest", document, env={"SYNOPSIS_OLLAMA_URL": ollama.ollama_url}
        )
        assert (code, stdout, stderr) == (
            1,
            "",
            f"Error: the stack is not ready: ollama at {ollama.ollama_url} "
            "(external, not answering); see `synopsis stack status`\n",
        )

        assert ollama.up().ollama.running
        report = synopsis.ingest([document])

        guard_retries = (
            report.retried_summaries + report.extractive_summaries - report.unretried_summaries
        )
        assert (report.new_chunks, report.unchanged_chunks) == (0, 3)
        assert (report.llm_calls, report.objects_written) == (3 + guard_retries, 3)
        found = assert_invariants(core.store)
        assert (found.originals[document], found.summaries[document]) == (3, 3)
    finally:
        synopsis.close()
        core.delete_source(document)
