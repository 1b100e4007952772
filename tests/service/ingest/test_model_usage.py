"""Ollama's own counts of the summary calls: summed, and their overlap measured."""

from __future__ import annotations

import asyncio

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from service.ingest.model_usage import ModelUsage
from service.ingest.report import IngestReport
from service.ingest.summarize import Summarizer, SummaryRequest

SECOND = 1_000_000_000  # Ollama reports nanoseconds


def _reply(prompt: int, output: int, prompt_s: float, output_s: float) -> dict[str, object]:
    return {
        "prompt_eval_count": prompt,
        "eval_count": output,
        "prompt_eval_duration": int(prompt_s * SECOND),
        "eval_duration": int(output_s * SECOND),
        "load_duration": int(0.25 * SECOND),
    }


def test_counts_and_seconds_are_summed_and_overlap_is_counted_once() -> None:
    usage = ModelUsage()
    usage.add(_reply(100, 20, 1.0, 2.0), ended_at=10.0)  # computing 7 → 10
    usage.add(_reply(50, 10, 0.5, 1.5), ended_at=11.0)  # 9 → 11: overlaps 1 s
    usage.add(_reply(10, 5, 0.5, 0.5), ended_at=20.0)  # 19 → 20: alone
    assert (usage.calls, usage.prompt_tokens, usage.output_tokens) == (3, 160, 35)
    assert (usage.prompt_seconds, usage.output_seconds, usage.load_seconds) == (2.0, 4.0, 0.75)
    assert usage.compute_seconds == 6.0
    assert usage.busy_seconds == 5.0  # 7 → 11 and 19 → 20


def test_a_reply_without_ollamas_counts_adds_nothing() -> None:
    usage = ModelUsage()
    usage.add({"done_reason": "stop"}, ended_at=1.0)
    assert (usage.calls, usage.busy_seconds) == (0, 0.0)


def test_since_gives_the_calls_after_a_copy() -> None:
    usage = ModelUsage()
    usage.add(_reply(100, 20, 1.0, 2.0), ended_at=10.0)
    before = usage.copy()
    usage.add(_reply(50, 10, 0.5, 1.5), ended_at=30.0)
    later = usage.since(before)
    assert (later.calls, later.prompt_tokens, later.busy_seconds) == (1, 50, 2.0)


def test_the_summarizer_records_what_the_model_reports() -> None:
    replies = [
        AIMessage(content="Shows the loop.", response_metadata=_reply(120, 8, 0.4, 0.6)),
        AIMessage(content="Shows the call.", response_metadata=_reply(80, 6, 0.2, 0.3)),
    ]
    summarizer = Summarizer(GenericFakeChatModel(messages=iter(replies)), model_name="fake")
    request = SummaryRequest(headers=["Loops"], content="for x in y: pass", label="a § Loops")
    for _ in replies:
        asyncio.run(summarizer.asummarize(request))
    usage = summarizer.usage
    assert (usage.calls, usage.prompt_tokens, usage.output_tokens) == (2, 200, 14)
    assert round(usage.compute_seconds, 6) == 1.5


def test_the_report_says_how_much_of_the_stage_the_model_computed() -> None:
    report = IngestReport()
    assert report.model_line() == ""
    report.seconds["summarize"] = 10.0
    report.model.add(_reply(300, 40, 1.0, 3.0), ended_at=5.0)
    line = report.model_line()
    assert "the model computing 4.0 s (40% of it)" in line
    assert "300 prompt tokens" in line
    assert "40 output tokens" in line
