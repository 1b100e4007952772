"""Document summaries: the outline, the reduce over groups, the grounding check and the
cache, with a scripted chat model (the real model: tests/service/cli/test_cli_docs_summary.py)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from service.errors import ModelError
from service.index.records import SourceChunk, SourceRecord
from service.query.document_summary import DocumentSummarizer, outline_lines, reduce_groups

RECORD = SourceRecord(
    source="docs/kettle.md",
    title="Kettle manual",
    content_hash="hash-1",
    settings_key="settings-1",
    status="complete",
    chunks=3,
    ingested_at=dt.datetime(2026, 1, 2, tzinfo=dt.UTC),
)


def _chunk(index: int, headers: list[str], content: str, summary: str | None) -> SourceChunk:
    return SourceChunk(
        id=str(index),
        headers=headers,
        chunk_index=index,
        content=content,
        summary=summary,
        summary_pending=summary is None,
    )


CHUNKS = [
    _chunk(0, ["Kettle manual", "Filling"], "Fill to the line.", "How to fill the kettle."),
    _chunk(1, ["Kettle manual", "Descaling"], "Use vinegar.", "How to descale with vinegar."),
    _chunk(
        2,
        ["Kettle manual", "Descaling", "Often"],
        "Descale the kettle every month when the water is hard. Rinse it twice after.",
        None,
    ),
]
OUTLINE = [
    "- Filling: How to fill the kettle.",
    "- Descaling: How to descale with vinegar.",
    "- Descaling > Often: Descale the kettle every month when the water is hard. Rinse it "
    "twice after.",
]
GROUNDED = "How to fill the kettle, and how to descale it with vinegar every month."
INVENTED = "The manual explains the turbo boiling mode and its warranty terms in detail."


class Counting(FakeListChatModel):
    """Replies from the list, and remembers each prompt (the last message) and message."""

    prompts: list[str] = []  # noqa: RUF012 (a pydantic field, copied per instance)
    messages: list[Any] = []  # noqa: RUF012

    def _call(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        self.prompts.append(str(messages[-1].content))
        self.messages.extend(messages)
        return super()._call(messages, stop, run_manager, **kwargs)


def _summarizer(tmp_path: Path, replies: list[str], *, budget: int = 1500) -> DocumentSummarizer:
    return DocumentSummarizer(
        Counting(responses=replies, prompts=[], messages=[]),
        model_name="fake",
        cache_dir=tmp_path / "cache",
        min_support=0.7,
        budget_tokens=budget,
    )


def test_the_outline_has_one_line_per_chunk_below_the_title() -> None:
    assert outline_lines("Kettle manual", CHUNKS) == OUTLINE
    # A chunk outside any section is named by the title.
    lone = _chunk(0, [], "", "Overview of the kettle.")
    assert outline_lines("Kettle manual", [lone]) == ["- Kettle manual: Overview of the kettle."]


@pytest.mark.parametrize(
    ("sizes", "budget", "groups"),
    [
        ([], 10, []),
        ([3, 3, 3], 10, [(0, 3)]),
        ([4, 4, 4], 10, [(0, 2), (2, 3)]),
        ([12, 1, 1], 10, [(0, 1), (1, 3)]),  # over the budget alone: a group of its own
        ([5, 5, 5, 5], 10, [(0, 2), (2, 4)]),
    ],
)
def test_reduce_groups(sizes: list[int], budget: int, groups: list[tuple[int, int]]) -> None:
    assert reduce_groups(sizes, budget) == groups


def test_a_short_document_is_one_call_and_a_grounded_reply_is_the_summary(
    tmp_path: Path,
) -> None:
    summarizer = _summarizer(tmp_path, [GROUNDED])
    summary = summarizer.summarize(RECORD, CHUNKS)
    assert (summary.text, summary.kind, summary.llm_calls, summary.cached) == (
        GROUNDED,
        "generated",
        1,
        False,
    )
    assert summary.sections == 3
    assert summary.support is not None
    assert summary.support >= 0.7
    [prompt] = summarizer._model.prompts  # type: ignore[attr-defined]
    assert prompt == "Document: Kettle manual\n\nSections:\n" + "\n".join(OUTLINE) + "\n\nSummary:"


def test_an_ungrounded_reply_is_replaced_by_the_outline(tmp_path: Path) -> None:
    summary = _summarizer(tmp_path, [INVENTED]).summarize(RECORD, CHUNKS)
    assert summary.kind == "extractive"
    assert summary.text == "Kettle manual:\n" + "\n".join(OUTLINE)
    assert summary.llm_calls == 1


def test_a_long_document_is_reduced_in_levels(tmp_path: Path) -> None:
    # A budget of 25 tokens holds two outline lines: 3 lines → 2 groups → 1.
    summarizer = _summarizer(
        tmp_path, ["Filling and descaling.", "Descaling often.", GROUNDED], budget=25
    )
    summary = summarizer.summarize(RECORD, CHUNKS)
    assert (summary.llm_calls, summary.text) == (3, GROUNDED)
    prompts = summarizer._model.prompts  # type: ignore[attr-defined]
    assert prompts[2].endswith(
        "Sections:\n- Filling and descaling.\n- Descaling often.\n\nSummary:"
    )


def test_the_cache_answers_an_unchanged_document_and_misses_a_changed_one(tmp_path: Path) -> None:
    first = _summarizer(tmp_path, [GROUNDED]).summarize(RECORD, CHUNKS)
    again = _summarizer(tmp_path, []).summarize(RECORD, CHUNKS)  # no reply left: no call
    assert again == dataclasses.replace(first, cached=True, llm_calls=0)

    changed = dataclasses.replace(RECORD, content_hash="hash-2")
    assert _summarizer(tmp_path, [GROUNDED]).summarize(changed, CHUNKS).cached is False


def test_a_damaged_cache_entry_is_written_again(tmp_path: Path) -> None:
    _summarizer(tmp_path, [GROUNDED]).summarize(RECORD, CHUNKS)
    [entry] = (tmp_path / "cache").glob("*.json")
    entry.write_text("{not json")
    summary = _summarizer(tmp_path, [GROUNDED]).summarize(RECORD, CHUNKS)
    assert summary.cached is False
    assert json.loads(entry.read_text())["text"] == GROUNDED


def test_a_document_without_chunks_needs_no_call(tmp_path: Path) -> None:
    summary = _summarizer(tmp_path, []).summarize(dataclasses.replace(RECORD, chunks=0), [])
    assert (summary.kind, summary.llm_calls, summary.text) == (
        "extractive",
        0,
        "Kettle manual: no indexed sections.",
    )


def test_a_model_failure_is_a_model_error_naming_the_model(tmp_path: Path) -> None:
    class Failing(FakeListChatModel):
        def _call(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise ConnectionError("refused")

    summarizer = DocumentSummarizer(
        Failing(responses=[]), model_name="tiny", cache_dir=tmp_path, min_support=0.7
    )
    with pytest.raises(ModelError, match="summarizing the document with 'tiny' failed: refused"):
        summarizer.summarize(RECORD, CHUNKS)
    assert list(tmp_path.glob("*.json")) == []  # nothing cached


def test_each_style_asks_for_its_length_and_is_cached_apart(tmp_path: Path) -> None:
    brief = _summarizer(tmp_path, [GROUNDED])
    assert brief.summarize(RECORD, CHUNKS).style == "brief"
    detailed = _summarizer(tmp_path, [GROUNDED])
    summary = detailed.summarize(RECORD, CHUNKS, style="detailed")
    assert (summary.style, summary.cached, summary.llm_calls) == ("detailed", False, 1)
    assert len(list((tmp_path / "cache").glob("*.json"))) == 2
    [system] = [m for m in detailed._model.messages if m.type == "system"]  # type: ignore[attr-defined]
    assert "one or two for each main part" in str(system.content)
