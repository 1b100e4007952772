"""The summary guard on the real stack.

The guard's own test reads what the session's shared ingest of the control-flow page
stored (`controlflow`: 34 chunks summarized by the smallest local chat model, the guard
on as by default): every stored summary must pass validation or be an extractive
fallback with its reasons, and the ingest's report must count them as they are stored.
No model call of its own: the summaries are the ones the search tests read. The default
model's summaries go through the same check in tests/service/test_default_model_integration.py.

Then `resummarize` (with a scripted model, no LLM call) replaces every summary of a
small ingest of its own ("TestQuality" collections, three sections whose summaries only
need to exist) under a new model name: each original keeps exactly one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from loaders import load
from service.ingest.quality import REASONS, QualityThresholds, validate_summary
from service.ingest.report import IngestReport
from service.ingest.resummarize import resummarize
from service.ingest.summarize import Summarizer, clean_for_prompt
from service.settings import Settings
from service.synopsis import Synopsis
from tests.support.corpus import CONTROLFLOW, CONTROLFLOW_CHUNKS

pytestmark = pytest.mark.integration


def _sections(markdown: str, *titles: str) -> str:
    """The page title, then the `## ` sections whose heading starts with one of `titles`."""
    parts = markdown.split("\n## ")
    keep = [part for part in parts[1:] if part.startswith(titles)]
    return parts[0].splitlines()[0] + "\n\n" + "\n\n".join("## " + part for part in keep)


def test_every_stored_summary_passes_or_is_an_extractive_fallback_with_reasons(
    core: Synopsis, controlflow: IngestReport
) -> None:
    assert core.settings.guard.enabled  # the default: on
    store = core.store
    summaries = [record for record in store.list_summaries() if record.source == CONTROLFLOW]
    originals = store.originals_by_id(record.original_id for record in summaries)
    assert len(summaries) == len(originals) == CONTROLFLOW_CHUNKS
    kinds: dict[str, int] = {}
    for record in summaries:
        kinds[record.kind] = kinds.get(record.kind, 0) + 1
    print(f"\n{controlflow.summary_line()}\nstored summaries by kind: {kinds}")
    thresholds = QualityThresholds.from_settings(core.settings)
    for record in summaries:
        original = originals[record.original_id]
        assert record.model == core.settings.models.chat_model
        if record.kind == "llm":
            view = clean_for_prompt(original.content)
            reasons = validate_summary(
                record.summary, view, original.headers, thresholds, title=original.title
            )
            assert reasons == [], (original.headers[-1], record.summary)
        else:
            assert record.kind == "extractive"
            assert record.reason
            assert set(record.reason.split(",")) <= set(REASONS)
            assert record.summary.startswith(" > ".join(original.headers))
    # Nothing hidden: the counts per kind match the records (of every source the session's
    # collections hold), and the ingest's report counts what the guard did to the page.
    every_kind: dict[str, int] = {}
    for record in store.list_summaries():
        every_kind[record.kind] = every_kind.get(record.kind, 0) + 1
    assert store.stats()["summaries_by_kind"] == every_kind
    if controlflow.unchanged_sources:  # collections kept from an earlier session
        return
    flagged = sum(bool(record.reason) for record in summaries)
    assert (controlflow.retried_summaries + controlflow.extractive_summaries) == flagged
    assert controlflow.extractive_summaries == kinds.get("extractive", 0)


@pytest.fixture
def quality_synopsis(cheap_settings: Settings) -> Iterator[Synopsis]:
    """A Synopsis on throwaway "TestQuality" collections whose summaries only need to
    exist (`cheap_settings`); dropped after."""
    isolated = cheap_settings.with_overrides(collection_prefix="TestQuality")
    synopsis = Synopsis.open(isolated)
    if synopsis.store.exists():
        synopsis.store.drop()
    try:
        yield synopsis
    finally:
        synopsis.store.drop()
        synopsis.close()


def test_resummarize_replaces_every_summary_under_the_new_model(
    quality_synopsis: Synopsis, tmp_path: Path
) -> None:
    page = next(iter(load([CONTROLFLOW])))
    source = tmp_path / "controlflow.md"
    source.write_text(_sections(page.page_content, "4.1.", "4.2.", "4.5."), encoding="utf-8")
    report = quality_synopsis.ingest([str(source)])
    assert report.new_chunks == 3
    store = quality_synopsis.store
    before = store.list_summaries()
    originals = store.originals_by_id(record.original_id for record in before)
    assert sorted(o.headers[-1] for o in originals.values()) == [
        "4.1. `if` Statements",
        "4.2. `for` Statements",
        "4.5. `pass` Statements",
    ]

    # Regenerate every summary with another "model": new ids, the old ones deleted.
    scripted = Summarizer(
        FakeListChatModel(responses=["A rewritten summary of the section."]),
        model_name="scripted",
    )
    try:
        redo = resummarize(store, scripted, quality_synopsis.embedder, kind=None)
    finally:
        scripted.close()
    assert (redo.selected, redo.written, redo.deleted, redo.orphans) == (3, 3, 3, 0)
    after = store.list_summaries()
    assert sorted(record.original_id for record in after) == sorted(originals)
    assert not {record.id for record in after} & {record.id for record in before}
    assert {(record.model, record.kind, record.reason) for record in after} == {
        ("scripted", "llm", "")
    }
