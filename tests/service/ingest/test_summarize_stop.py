"""A caller stops `summarize_many` while the model hangs: the call in flight is cancelled
and the caller's exception comes back at once, not after the summary timeout."""

from __future__ import annotations

import gc
import time

import pytest

from service.ingest.summarize import Summarizer, SummaryRequest
from tests.service.ingest.test_summarize import ScriptedChatModel


class _Stop(Exception):
    pass


def test_on_wait_can_stop_a_summary_the_model_never_finishes() -> None:
    model = ScriptedChatModel(script=["never seen"], delay=600)  # a hung model server
    summarizer = Summarizer(model, model_name="fake", timeout=600, retries=0)
    requests = [SummaryRequest(headers=["A"], content="chunk", label="chunk")]
    waits: list[float] = []

    def on_wait() -> None:
        waits.append(time.monotonic())
        if len(waits) == 3:
            raise _Stop

    started = time.monotonic()
    try:
        with pytest.raises(_Stop):
            summarizer.summarize_many(requests, on_wait=on_wait, wait_seconds=0.05)
        assert time.monotonic() - started < 5
        deadline = time.monotonic() + 5
        while model.in_flight and time.monotonic() < deadline:  # cancelled on its loop
            time.sleep(0.01)
        assert model.in_flight == 0
    finally:
        summarizer.close()


def test_without_on_wait_the_summaries_are_waited_for() -> None:
    model = ScriptedChatModel(script=["About {section}."], delay=0.1)
    summarizer = Summarizer(model, model_name="fake", retries=0)
    requests = [SummaryRequest(headers=["A"], content="chunk", label="chunk")]
    try:
        [result] = summarizer.summarize_many(requests, wait_seconds=0.01)
    finally:
        summarizer.close()
    assert result.text == "About Topic: A."


def test_close_right_after_a_stop_ends_every_call_first(caplog: pytest.LogCaptureFixture) -> None:
    # Closed at once after the stop: the cancel of the calls is only scheduled on the
    # summarizer's loop, and a loop closed with tasks pending destroys them.
    model = ScriptedChatModel(script=["never seen"] * 4, delay=600)
    summarizer = Summarizer(model, model_name="fake", timeout=600, retries=0, concurrency=2)
    requests = [SummaryRequest(headers=["A"], content=f"chunk {n}", label=f"{n}") for n in range(4)]

    def on_wait() -> None:
        raise _Stop

    with pytest.raises(_Stop):
        summarizer.summarize_many(requests, on_wait=on_wait, wait_seconds=0.05)
    summarizer.close()
    gc.collect()
    assert model.in_flight == 0
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []
