"""A follow-up question as a self-contained search query.

"and how do I make it count down?" finds nothing about `range()` on its own: what "it" is
lives in the turns before. Three ways to make the query (`Settings.conversations.rewrite`):

- `previous` (the default): the previous turn's query, then the follow-up (no model call).
- `model`: the chat model rewrites the follow-up, given the last few turns' queries. Its
  reply is used only when it is usable (one line, no longer than the previous query and
  the follow-up together, keeps at least one of the follow-up's content words);
  otherwise `previous` is used.
- `none`: the follow-up as asked.

The first question of a conversation is always searched as asked. docs/conversations.md
measures the three on two-turn questions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from service.connections import close_ollama_clients
from service.errors import ModelError
from service.settings import RewriteMethod

__all__ = ["QueryRewriter", "Rewrite", "RewriteMethod", "clean_rewrite", "content_words"]


_SYSTEM = (
    "You rewrite a follow-up question into one self-contained search query for technical "
    "documentation. Use the earlier questions only to say what the follow-up refers to "
    "(it, that, this, the same, instead). Keep the follow-up's own words. Reply with the "
    "query alone, on one line."
)
_LABEL = re.compile(
    r"^\s*(?:(?:rewritten|self-contained|search)\s+)?(?:query|question)\s*:\s*", re.I
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")
_STOP_WORDS = (
    "and are but can could does for from have how into its not now one onto our out own "
    "should that the then there these they this those what when where which while who why "
    "will with would you your also just like make made instead same"
)
_STOP = frozenset(_STOP_WORDS.split())
#: A usable rewrite needs no more than the earlier query's words and the follow-up's:
#: it is at most as long as the two together, plus this many characters.
_MAX_EXTRA_CHARS = 20


@dataclass(frozen=True)
class Rewrite:
    """The query to search for a question, and how it was made."""

    query: str
    method: RewriteMethod


def content_words(text: str) -> set[str]:
    """The words of `text` that carry its topic (lower-cased; short and stop words out)."""
    return {word.lower() for word in _WORD.findall(text)} - _STOP


def clean_rewrite(reply: str) -> str:
    """The model's reply as one query: its first non-empty line, without a label such as
    "Query:" and without surrounding quotes."""
    line = next((line for line in reply.splitlines() if line.strip()), "")
    return _LABEL.sub("", line).strip().strip("\"'`“”").strip()


class QueryRewriter:
    """Makes the search query of each turn (`method`: see the module docstring)."""

    def __init__(
        self,
        model: BaseChatModel | None,
        *,
        model_name: str,
        method: RewriteMethod = "model",
        context_turns: int = 3,
    ) -> None:
        if method == "model" and model is None:
            raise ValueError("the model rewrite needs a chat model")
        self._model = model
        self.model_name = model_name
        self.method = method
        self.context_turns = context_turns

    def close(self) -> None:
        """Close the chat model's HTTP clients."""
        if self._model is not None:
            close_ollama_clients(self._model)

    def rewrite(self, previous: Sequence[str], question: str) -> Rewrite:
        """The query for `question`, asked after turns whose queries were `previous`."""
        if not previous or self.method == "none":
            return Rewrite(question, "none")
        fallback = Rewrite(f"{previous[-1]} {question}", "previous")
        if self.method == "previous":
            return fallback
        query = clean_rewrite(self._reply(previous[-self.context_turns :], question))
        usable = self.usable(query, question, previous=previous[-1])
        return Rewrite(query, "model") if usable else fallback

    @staticmethod
    def usable(query: str, question: str, *, previous: str) -> bool:
        """Whether a rewrite may be searched: not empty, no longer than the previous query
        and the question together (a longer reply is an answer, not a query), and keeping
        at least one of the question's content words (when it has any)."""
        if not query or len(query) > len(previous) + len(question) + _MAX_EXTRA_CHARS:
            return False
        own = content_words(question)
        return not own or bool(own & content_words(query))

    def _reply(self, previous: Sequence[str], question: str) -> str:
        assert self._model is not None
        earlier = "\n".join(f"{n}. {query}" for n, query in enumerate(previous, start=1))
        messages = [
            SystemMessage(content=_SYSTEM),
            HumanMessage(content=f"Earlier questions:\n{earlier}\n\nFollow-up: {question}\nQuery:"),
        ]
        try:
            return str(self._model.invoke(messages).content)
        except Exception as exc:
            raise ModelError(
                f"rewriting the follow-up with {self.model_name!r} failed: {exc}"
            ) from exc
