"""Turns round-trip through their stored form; a conversation keeps its last turns."""

from __future__ import annotations

import datetime as dt

from service.conversations import Conversation, Turn

AT = dt.datetime(2026, 3, 4, 5, 6, 7, tzinfo=dt.UTC)


def _turn(number: int) -> Turn:
    return Turn(
        question=f"q{number}",
        query=f"query {number}",
        rewrite="model",
        answer="a",
        kind="generated",
        citations=["a.md § A"],
        asked_at=AT + dt.timedelta(minutes=number),
    )


def test_a_turn_round_trips() -> None:
    assert Turn.from_dict(_turn(1).to_dict()) == _turn(1)


def test_a_conversation_keeps_the_last_turns_and_their_queries() -> None:
    conversation = Conversation(id="c", owner="key:1", created_at=AT, updated_at=AT)
    for number in range(1, 5):
        conversation = conversation.with_turn(_turn(number), max_turns=3)
    assert [turn.question for turn in conversation.turns] == ["q2", "q3", "q4"]
    assert conversation.queries == ["query 2", "query 3", "query 4"]
    assert conversation.updated_at == _turn(4).asked_at
    assert conversation.created_at == AT
