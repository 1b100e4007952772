"""The guard's strict retry is skipped while recent retries rarely pass, and probed."""

from __future__ import annotations

import asyncio

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from service.ingest.quality import QualityThresholds
from service.ingest.retry_rate import MIN_JUDGED, PROBE_EVERY, WINDOW, RetryRate
from service.ingest.summarize import Summarizer, SummaryRequest

CHUNK = """The `pass` statement does nothing. It can be used when a statement is required
syntactically but the program requires no action."""
HEADERS = ["4. More Control Flow Tools", "4.5. `pass` Statements"]
REQUEST = SummaryRequest(headers=HEADERS, content=CHUNK, label="pass")
INVENTED = "Django 4.2 and Flask 2.0 use this marketplace launched in 2016 at Berkeley."


def _decisions(rate: RetryRate, count: int) -> list[bool]:
    return [rate.worth_a_retry() for _ in range(count)]


def test_every_retry_is_tried_until_enough_are_judged() -> None:
    rate = RetryRate(floor=0.1)
    for _ in range(MIN_JUDGED - 1):
        assert rate.worth_a_retry()
        rate.record(passed=False)
    assert rate.worth_a_retry()


def test_retries_that_rarely_pass_are_skipped_but_one_in_ten_is_probed() -> None:
    rate = RetryRate(floor=0.1)
    for _ in range(MIN_JUDGED):
        rate.record(passed=False)
    decisions = _decisions(rate, 3 * PROBE_EVERY)
    assert decisions.count(True) == 3
    assert decisions[PROBE_EVERY - 1]
    assert not any(decisions[: PROBE_EVERY - 1])


def test_a_model_whose_retries_pass_again_gets_them_back() -> None:
    rate = RetryRate(floor=0.1)
    for _ in range(MIN_JUDGED):
        rate.record(passed=False)
    assert not rate.worth_a_retry()
    for _ in range(WINDOW // 2):  # the probes start passing
        rate.record(passed=True)
    assert rate.share is not None
    assert rate.share >= 0.1
    assert all(_decisions(rate, 5))


def test_a_floor_of_zero_always_retries() -> None:
    rate = RetryRate(floor=0.0)
    for _ in range(WINDOW):
        rate.record(passed=False)
    assert all(_decisions(rate, 20))


def test_the_summarizer_stops_paying_for_retries_that_do_not_pass() -> None:
    flagged = MIN_JUDGED + PROBE_EVERY  # every first attempt and every retry is invented
    summarizer = Summarizer(
        FakeListChatModel(responses=[INVENTED] * (2 * flagged)),
        model_name="fake",
        guard=QualityThresholds(),
        strict_retry=True,
        retry_floor=0.1,
    )

    async def run() -> list[str]:
        return [(await summarizer.asummarize_checked(REQUEST)).kind for _ in range(flagged)]

    kinds = asyncio.run(run())
    assert kinds == ["extractive"] * flagged
    # MIN_JUDGED retries, then PROBE_EVERY - 1 skipped and the probe retried.
    assert summarizer.retries_skipped == PROBE_EVERY - 1
    assert summarizer.calls == flagged + MIN_JUDGED + 1
