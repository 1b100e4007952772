"""Turns round-trip through their stored form; a conversation keeps its last turns."""

from __future__ import annotations

import datetime as dt

from service.conversations import Conversation, Turn
from service.query.answer import Answer
from service.query.hits import Hit
from service.query.rewrite import Rewrite

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


def test_a_new_conversation_is_empty_and_started_now() -> None:
    before = dt.datetime.now(dt.UTC)
    first, second = Conversation.new("key:1"), Conversation.new("key:1")
    assert (first.owner, first.turns, first.created_at) == ("key:1", (), first.updated_at)
    assert before <= first.created_at <= dt.datetime.now(dt.UTC)
    assert first.id != second.id


def test_an_answered_turn_keeps_the_query_and_cites_location_and_header_path() -> None:
    hit = Hit(
        id="1",
        source="tutorial/controlflow.html",
        anchor="the-range-function",
        title="4. More Control Flow Tools",
        headers=["4. More Control Flow Tools", "4.3. The range() Function"],
        chunk_index=3,
        content="for i in range(5): print(i)",
        summary=None,
        score=0.5,
        leg="fused",
    )
    answer = Answer(text="Use range() [1].", citations=[hit], llm_called=True, kind="generated")
    rewrite = Rewrite(query="range() backwards", method="model")
    turn = Turn.answered("and backwards?", rewrite, answer)
    assert (turn.question, turn.query, turn.rewrite, turn.answer, turn.kind) == (
        "and backwards?",
        "range() backwards",
        "model",
        "Use range() [1].",
        "generated",
    )
    assert turn.citations == [
        "tutorial/controlflow.html#the-range-function § "
        "4. More Control Flow Tools > 4.3. The range() Function"
    ]
