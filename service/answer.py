"""Grounded answers: the chat model answers from the retrieved originals only, citing them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from service.errors import ModelError
from service.search import Hit

__all__ = ["DONT_KNOW", "Answer", "Answerer"]

DONT_KNOW = "I don't know based on the provided context."

_SYSTEM = (
    "Answer the question using only the numbered context passages. Cite the passages "
    "you use as [1], [2]. If the passages do not contain the answer, reply exactly: " + DONT_KNOW
)


@dataclass(frozen=True, kw_only=True)
class Answer:
    """An answer and the originals it may cite ([1] is `citations[0]`)."""

    text: str
    citations: list[Hit]
    llm_called: bool


class Answerer:
    """Answers questions from retrieved hits with a chat model."""

    def __init__(self, model: BaseChatModel, *, model_name: str) -> None:
        self._model = model
        self.model_name = model_name

    def answer(self, question: str, hits: Sequence[Hit]) -> Answer:
        """Answer `question` from `hits`; with no hits, say so without calling the model."""
        if not hits:
            return Answer(text=DONT_KNOW, citations=[], llm_called=False)
        context = "\n\n".join(
            f"[{number}] {hit.source} § {' > '.join(hit.headers)}\n{hit.content}"
            for number, hit in enumerate(hits, start=1)
        )
        messages = [
            SystemMessage(content=_SYSTEM),
            HumanMessage(content=f"Context:\n{context}\n\nQuestion: {question}\nAnswer:"),
        ]
        try:
            reply = self._model.invoke(messages)
        except Exception as exc:
            raise ModelError(f"answering with {self.model_name!r} failed: {exc}") from exc
        return Answer(text=str(reply.content).strip(), citations=list(hits), llm_called=True)
