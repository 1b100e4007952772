"""`ModelTurns`: summary calls held while paused, the calls in flight waited for."""

from __future__ import annotations

import asyncio
import threading

import pytest

from service.ingest.turns import ModelTurns


def test_a_call_enters_at_once_when_nothing_pauses_and_idle_follows_its_leave() -> None:
    turns = ModelTurns()
    asyncio.run(turns.enter())
    assert not turns.wait_idle(timeout=0.05)
    turns.leave()
    assert turns.wait_idle(timeout=0.0)


def test_a_pause_holds_new_calls_until_every_pause_is_resumed() -> None:
    turns = ModelTurns()
    entered = threading.Event()
    turns.pause()
    turns.pause()  # a second ingest on the same summarizer

    def call() -> None:
        asyncio.run(turns.enter())
        entered.set()

    caller = threading.Thread(target=call)
    caller.start()
    assert not entered.wait(0.3)
    assert turns.wait_idle(timeout=0.0)  # the held call is not in flight
    turns.resume()
    assert not entered.wait(0.3)
    turns.resume()
    assert entered.wait(5)
    caller.join()
    assert turns.paused is False
    assert not turns.wait_idle(timeout=0.0)


def test_wait_idle_returns_when_the_call_in_flight_ends() -> None:
    turns = ModelTurns()
    asyncio.run(turns.enter())
    turns.pause()
    timer = threading.Timer(0.2, turns.leave)
    timer.start()
    assert turns.wait_idle(timeout=5)
    timer.join()


def test_a_resume_without_a_pause_is_a_bug() -> None:
    with pytest.raises(RuntimeError):
        ModelTurns().resume()
