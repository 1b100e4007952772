"""The summary guard on the real stack: a small part of the control-flow page, summarized
by the local chat model, stored in Weaviate under the "TestQuality" prefix.

Three sections (4.1 `if`, 4.2 `for`, 4.5 `pass`) make three chunks: at most six LLM
calls (one retry each). Every stored summary must pass validation or be an extractive
fallback with its reasons. Then `resummarize` (with a scripted model, no LLM call)
replaces every summary under a new model name: each original keeps exactly one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from loaders import load
from service.ingest.quality import REASONS, QualityThresholds, validate_summary
from service.ingest.resummarize import resummarize
from service.ingest.summarize import Summarizer, clean_for_prompt
from service.settings import Settings
from service.synopsis import Synopsis

pytestmark = pytest.mark.integration

CONTROLFLOW = "/usr/share/doc/python3.11/html/tutorial/controlflow.html"


def _sections(markdown: str, *titles: str) -> str:
    """The page title, then the `## ` sections whose heading starts with one of `titles`."""
    parts = markdown.split("\n## ")
    keep = [part for part in parts[1:] if part.startswith(titles)]
    return parts[0].splitlines()[0] + "\n\n" + "\n\n".join("## " + part for part in keep)


@pytest.fixture
def quality_synopsis(settings: Settings) -> Iterator[Synopsis]:
    """A Synopsis on throwaway "TestQuality" collections, with the guard on; dropped after."""
    isolated = dataclasses.replace(settings, collection_prefix="TestQuality", summary_guard=True)
    synopsis = Synopsis.open(isolated)
    if synopsis.store.exists():
        synopsis.store.drop()
    try:
        yield synopsis
    finally:
        synopsis.store.drop()
        synopsis.close()


def test_every_stored_summary_passes_or_is_an_extractive_fallback_with_reasons(
    quality_synopsis: Synopsis, tmp_path: Path
) -> None:
    page = next(iter(load([CONTROLFLOW])))
    source = tmp_path / "controlflow.md"
    source.write_text(_sections(page.page_content, "4.1.", "4.2.", "4.5."), encoding="utf-8")

    report = quality_synopsis.ingest([str(source)])

    summarizer = quality_synopsis.summarizer
    print(  # the figures quoted in docs/summary-quality.md
        f"\n{report.summary_line()}\nflagged first attempts: {summarizer.flagged}, "
        f"retries passed: {summarizer.retries_passed}, fallbacks: {summarizer.fallbacks}"
    )
    assert report.new_chunks == 3
    # One call per chunk, one retry per flagged chunk (`llm_calls` also counts transport
    # retries of timed-out calls, which depend on the load of the shared stack).
    assert summarizer.retries_passed + summarizer.fallbacks <= 3
    store = quality_synopsis.store
    summaries = store.list_summaries()
    originals = store.originals_by_id(record.original_id for record in summaries)
    assert sorted(o.headers[-1] for o in originals.values()) == [
        "4.1. `if` Statements",
        "4.2. `for` Statements",
        "4.5. `pass` Statements",
    ]
    thresholds = QualityThresholds.from_settings(quality_synopsis.settings)
    for record in summaries:
        original = originals[record.original_id]
        print(f"[{record.kind} {record.reason or '-'}] {original.headers[-1]}: {record.summary!r}")
        if record.kind == "llm":
            view = clean_for_prompt(original.content)
            reasons = validate_summary(
                record.summary, view, original.headers, thresholds, title=original.title
            )
            assert reasons == []
        else:
            assert record.kind == "extractive"
            assert record.reason
            assert set(record.reason.split(",")) <= set(REASONS)
            assert record.summary.startswith(" > ".join(original.headers))
    # Nothing hidden: the counts per kind and reason match the records.
    stats = store.stats()
    kinds: dict[str, int] = {}
    for record in summaries:
        kinds[record.kind] = kinds.get(record.kind, 0) + 1
    assert stats["summaries_by_kind"] == kinds
    flagged = sum(bool(record.reason) for record in summaries)
    assert (report.retried_summaries + report.extractive_summaries) == flagged

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
    assert {(record.model, record.kind, record.reason) for record in after} == {
        ("scripted", "llm", "")
    }
