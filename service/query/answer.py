"""Grounded answers: the chat model answers from the retrieved originals only, citing them.

Two checks answer "I don't know" without calling the model: no passage passed the
relevance gate, or the question names something that no retrieved passage mentions
(`missing_terms`). The second exists because embeddings place "a Go script that prints
1 to 30" as close to the Python tutorial's `range()` section as the same question about
Python, and a small chat model answers from whatever context it is given.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_ollama import ChatOllama

from service.connections import close_ollama_clients, ollama_chat
from service.errors import ModelError
from service.index.identifiers import extract_identifiers
from service.query.search import Hit
from service.settings import Settings

__all__ = ["DONT_KNOW", "Answer", "Answerer", "answer_model", "missing_terms", "named_terms"]

DONT_KNOW = "I don't know based on the provided context."

_SYSTEM = (
    "Answer the question using only the numbered context passages. Cite the passages "
    "you use as [1], [2]. If the passages do not contain the answer, reply exactly: " + DONT_KNOW
)

# Words: letters first, then letters, digits and the marks of names such as C++, C#,
# Node.js (a trailing full stop is sentence punctuation and is dropped).
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_+#.\-]*")
_SENTENCE_END = re.compile(r"[.?!:;]\s*$")
_TEMPLATE_ENDS = ("<|im_end|>", "<|im_start|>")
_PRONOUNS = frozenset({"I", "I'm", "I've", "I'd", "I'll"})


def answer_model(settings: Settings) -> ChatOllama:
    """The configured chat model set up for answers: deterministic, up to
    `answer_max_tokens`, stopped only by the chat template's end tokens."""
    return ollama_chat(settings, max_tokens=settings.answer_max_tokens, stop=_TEMPLATE_ENDS)


@dataclass(frozen=True, kw_only=True)
class Answer:
    """An answer and the originals it may cite ([1] is `citations[0]`).

    `missing_terms` lists what the question names that no retrieved passage mentions;
    when it is not empty the answer is "I don't know" and the model was not called.
    """

    text: str
    citations: list[Hit]
    llm_called: bool
    missing_terms: list[str] = field(default_factory=list)


def named_terms(question: str) -> list[str]:
    """What `question` names: code identifiers, and capitalized words after its first word.

    A capitalized word that starts a sentence, and the pronoun "I", are not names.
    """
    identifiers = extract_identifiers(question)
    # A part of a dotted name is not a name of its own: os.path.join(), not join().
    found: dict[str, None] = dict.fromkeys(
        name
        for name in identifiers
        if not any(name != other and name in other for other in identifiers)
    )
    for match in _WORD.finditer(question):
        word = match.group(0).rstrip(".-")
        before = question[: match.start()]
        starts_sentence = not before.strip() or bool(_SENTENCE_END.search(before))
        if word in _PRONOUNS or starts_sentence or word.lower() == word:
            continue
        if not any(word in name for name in found):
            found.setdefault(word, None)
    return list(found)


def _mentions(text: str, term: str) -> bool:
    """Whether `text` mentions `term` as a word (digits may follow: python3.11).

    Case is ignored, except for short mixed-case names that are also common lower-case
    words ("Go" is not "go").
    """
    name = term.removesuffix("()")
    exact_case = len(name) <= 3 and not name.isupper()
    pattern = rf"(?<![\w.]){re.escape(name)}(?![A-Za-z_+#])"
    return re.search(pattern, text, 0 if exact_case else re.IGNORECASE) is not None


def missing_terms(question: str, hits: Sequence[Hit]) -> list[str]:
    """The terms `question` names that no hit's source, title, headers or content mention."""
    context = "\n".join(
        "\n".join([hit.source, hit.title, *hit.headers, hit.content]) for hit in hits
    )
    return [term for term in named_terms(question) if not _mentions(context, term)]


class Answerer:
    """Answers questions from retrieved hits with a chat model."""

    def __init__(self, model: BaseChatModel, *, model_name: str, term_check: bool = True) -> None:
        self._model = model
        self.model_name = model_name
        self.term_check = term_check

    def close(self) -> None:
        """Close the chat model's HTTP clients."""
        close_ollama_clients(self._model)

    def answer(self, question: str, hits: Sequence[Hit]) -> Answer:
        """Answer `question` from `hits`; without relevant hits, say so without the model."""
        if not hits:
            return Answer(text=DONT_KNOW, citations=[], llm_called=False)
        missing = missing_terms(question, hits) if self.term_check else []
        if missing:
            return Answer(text=DONT_KNOW, citations=[], llm_called=False, missing_terms=missing)
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
