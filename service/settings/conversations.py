"""The conversation settings: how many turns are kept and read, how a follow-up becomes a query."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Literal

from service.errors import ConfigurationError
from service.settings.fields import Section, setting

__all__ = ["REWRITE_METHODS", "ConversationSettings", "RewriteMethod"]

#: How a conversation's follow-up becomes a search query (`conversation_rewrite`).
RewriteMethod = Literal["model", "previous", "none"]
REWRITE_METHODS: tuple[RewriteMethod, ...] = typing.get_args(RewriteMethod)


@dataclass(frozen=True, kw_only=True)
class ConversationSettings(Section):
    """Conversations (`SYNOPSIS_CONVERSATION_*`, `SYNOPSIS_CONVERSATIONS_PER_KEY`)."""

    TOPIC = "Conversations"
    PREFIX = "conversation_"

    max_turns: int = setting(20, "Turns kept per conversation (older ones are dropped).")
    context_turns: int = setting(3, "The last turns a `model` rewrite of a follow-up reads.")
    # Why "previous": docs/conversations.md measures the three methods.
    rewrite: RewriteMethod = setting(
        "previous",
        "How a follow-up becomes a search query: after the previous turn's query "
        "(`previous`), rewritten by the answer model (`model`), or as asked (`none`).",
    )
    per_key: int = setting(
        1_000,
        "Conversations one API key may keep (a key at its cap gets 429); 0: no cap.",
        name="conversations_per_key",
    )

    def check(self) -> None:
        names = self.variables()
        if self.max_turns < 1 or self.context_turns < 1:
            raise ConfigurationError(
                f"{names['max_turns']} and {names['context_turns']} must be at least 1"
            )
        if self.per_key < 0:
            raise ConfigurationError(f"{names['per_key']} must be at least 0 (0: off)")
