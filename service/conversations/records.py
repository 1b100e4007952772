"""A conversation and its turns, as stored and shown.

A turn keeps the question as asked, the self-contained query that was searched for it
(`query`, and how it was made: `rewrite`), the answer and what it cited. A conversation
keeps its last `Settings.conversations.max_turns` turns.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from service.index.records import header_path, now

if TYPE_CHECKING:
    from service.query.answer import Answer
    from service.query.rewrite import Rewrite

__all__ = ["Conversation", "Turn"]


@dataclass(frozen=True, kw_only=True)
class Turn:
    """One question of a conversation and its answer."""

    question: str
    query: str  # what was searched: the question, or its rewrite
    rewrite: str  # how `query` was made: none, model or previous (service/query/rewrite.py)
    answer: str
    kind: str  # the answer's kind: generated, extractive or refusal
    citations: list[str]  # "source § header path" of each cited passage, [1] first
    asked_at: dt.datetime

    def to_dict(self) -> dict[str, Any]:
        """The turn as stored (JSON: the time as ISO 8601)."""
        return {**dataclasses.asdict(self), "asked_at": self.asked_at.isoformat()}

    @classmethod
    def answered(cls, question: str, rewrite: Rewrite, answer: Answer) -> Turn:
        """The turn of `question`, searched as `rewrite.query` and answered by `answer`, now."""
        return cls(
            question=question,
            query=rewrite.query,
            rewrite=rewrite.method,
            answer=answer.text,
            kind=answer.kind,
            citations=[f"{hit.location} § {header_path(hit.headers)}" for hit in answer.citations],
            asked_at=now(),
        )

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Turn:
        """The turn stored by `to_dict`."""
        return cls(**{**raw, "asked_at": dt.datetime.fromisoformat(raw["asked_at"])})


@dataclass(frozen=True, kw_only=True)
class Conversation:
    """A conversation: whose it is (the API key's id) and its last turns, oldest first."""

    id: str
    owner: str
    created_at: dt.datetime
    updated_at: dt.datetime
    turns: tuple[Turn, ...] = ()

    @classmethod
    def new(cls, owner: str) -> Conversation:
        """A new, empty conversation of `owner`, started now, with a random id."""
        started = now()
        return cls(id=str(uuid.uuid4()), owner=owner, created_at=started, updated_at=started)

    def with_turn(self, turn: Turn, *, max_turns: int) -> Conversation:
        """This conversation with `turn` added, keeping the last `max_turns`."""
        turns = (*self.turns, turn)[-max_turns:]
        return dataclasses.replace(self, turns=turns, updated_at=turn.asked_at)

    @property
    def queries(self) -> list[str]:
        """The self-contained queries of its turns, oldest first (what a rewrite reads)."""
        return [turn.query for turn in self.turns]
