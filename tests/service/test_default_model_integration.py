"""The default chat model's own text, where it is the point, on a short document.

Three sections of the control-flow page (4.1 `if`, 4.2 `for`, 4.5 `pass`: three chunks,
at most six summary calls with the guard's retries) are ingested with the default
settings as a user gets them (`settings`), on collections of their own
("TestDefaultModel"). Every stored summary must pass the guard or be an extractive
fallback with its reasons; a search in `summaries` mode finds each section by its
summary; the default answer model answers from the sections with citations.

The rest of the suite reads the shared ingest of the whole page, which the smallest
local model writes whatever the default (tests/service/conftest.py), or summaries that
only need to exist (`cheap_settings`): a slower default model costs this module's few
calls, not the suite's hundreds. Nothing here asserts a wording or a ranking that
depends on what the model wrote: what each kind of summary or answer must be, exactly.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from loaders import load
from service.ingest.quality import REASONS, QualityThresholds, validate_summary
from service.ingest.report import IngestReport
from service.ingest.summarize import clean_for_prompt
from service.query.answer import DONT_KNOW
from service.query.grounding import extractive_answer
from service.query.search import SearchRequest
from service.settings import Settings
from service.synopsis import Synopsis
from tests.support.corpus import CONTROLFLOW

pytestmark = pytest.mark.integration

PREFIX = "TestDefaultModel"
SECTIONS = {
    "4.1.": "4.1. `if` Statements",
    "4.2.": "4.2. `for` Statements",
    "4.5.": "4.5. `pass` Statements",
}


def _sections(markdown: str, *titles: str) -> str:
    """The page title, then the `## ` sections whose heading starts with one of `titles`."""
    parts = markdown.split("\n## ")
    keep = [part for part in parts[1:] if part.startswith(titles)]
    return parts[0].splitlines()[0] + "\n\n" + "\n\n".join("## " + part for part in keep)


@pytest.fixture(scope="module")
def default_doc(
    settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Synopsis, str, IngestReport]]:
    """(Synopsis on the module's collections, the document's source, its ingest report)."""
    synopsis = Synopsis.open(settings.with_overrides(collection_prefix=PREFIX))
    try:
        if synopsis.store.exists():
            synopsis.store.drop()  # leftovers of an interrupted run
        [page] = load([CONTROLFLOW])
        path = tmp_path_factory.mktemp("default-model") / "controlflow.md"
        path.write_text(_sections(page.page_content, *SECTIONS), encoding="utf-8")
        report = synopsis.ingest([str(path)])
        assert (report.new_chunks, report.failed) == (3, [])
        yield synopsis, str(path), report
    finally:
        synopsis.store.drop()
        synopsis.close()


def test_every_summary_passes_the_guard_or_is_an_extractive_fallback_with_reasons(
    default_doc: tuple[Synopsis, str, IngestReport],
) -> None:
    synopsis, source, report = default_doc
    settings = synopsis.settings
    assert settings.guard.enabled  # the default: on
    store = synopsis.store
    summaries = store.list_summaries()
    originals = store.originals_by_id(record.original_id for record in summaries)
    assert sorted(o.headers[-1] for o in originals.values()) == sorted(SECTIONS.values())
    thresholds = QualityThresholds.from_settings(settings)
    for record in summaries:
        original = originals[record.original_id]
        shown = f"[{record.kind} {record.reason or '-'}] {original.headers[-1]}"
        print(f"\n{shown}: {record.summary!r}")
        assert (record.source, record.model) == (source, settings.models.chat_model)
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
    # Nothing hidden: the counts per kind match the records, and the report counts what
    # the guard did.
    kinds: dict[str, int] = {}
    for record in summaries:
        kinds[record.kind] = kinds.get(record.kind, 0) + 1
    assert store.stats()["summaries_by_kind"] == kinds
    flagged = sum(bool(record.reason) for record in summaries)
    assert (report.retried_summaries + report.extractive_summaries) == flagged
    assert report.extractive_summaries == kinds.get("extractive", 0)


def test_summaries_mode_finds_each_section_by_its_summary(
    default_doc: tuple[Synopsis, str, IngestReport],
) -> None:
    """Whatever the model wrote: its summary, as a query in `summaries` mode (which reads
    nothing else), finds the section it summarizes first."""
    synopsis, source, _ = default_doc
    summaries = synopsis.store.list_summaries()
    assert len({record.summary for record in summaries}) == len(summaries) == 3
    for record in summaries:
        [first, *_] = synopsis.search(
            SearchRequest(query=record.summary, k=3, mode="summaries", source=source)
        )
        assert first.id == str(record.original_id), (record.summary, first.headers)


def test_the_default_answer_model_answers_from_the_sections_with_citations(
    default_doc: tuple[Synopsis, str, IngestReport],
) -> None:
    """Which kind of answer the model's reply makes differs between machines; each kind
    is exactly what it must be."""
    synopsis, source, _ = default_doc
    settings = synopsis.settings
    question = "How do I loop over the items of a list?"
    # Every retrieved passage is sent (no distance gate): what the answer may cite.
    request = SearchRequest(query=question, k=3, source=source, max_vector_distance=0.0)
    passages = synopsis.search(request)
    assert [hit.source for hit in passages] == [source] * 3
    answer = synopsis.ask(question, request)
    assert answer.llm_called is True
    print(f"\n[{answer.kind} support={answer.support}] {answer.text!r}")
    if answer.kind == "refusal":
        assert (answer.text, answer.citations) == (DONT_KNOW, [])
    elif answer.kind == "generated":
        assert [hit.id for hit in answer.citations] == [hit.id for hit in passages]
        assert answer.text.strip()
        assert answer.support is not None
        assert answer.support >= settings.answers.min_support
    else:
        assert answer.kind == "extractive"
        assert [hit.id for hit in answer.citations] == [passages[0].id]
        assert answer.text == extractive_answer(passages[0].content)
        assert answer.draft is not None  # the model's reply, which it replaced
