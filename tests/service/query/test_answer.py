"""Grounded answers (unit): the prompt, citations, and "I don't know" without a model call."""

from __future__ import annotations

from typing import Any

import ollama
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from service.errors import ModelError
from service.query.answer import DONT_KNOW, Answer, Answerer, missing_terms, named_terms
from service.query.search import Hit


class RecordingChatModel(BaseChatModel):
    """Replies `reply` (or raises `error`) and records every prompt it was sent."""

    reply: str = ""
    error: Exception | None = None
    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "recording-fake"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.prompts.append(messages)
        if self.error is not None:
            raise self.error
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.reply))])


HITS = [
    Hit(
        id="1",
        source="tutorial/controlflow.html",
        title="4. More Control Flow Tools",
        headers=["4. More Control Flow Tools", "4.3. The `range()` Function"],
        chunk_index=3,
        content="for i in range(5):\n    print(i)",
        summary="range() generates arithmetic progressions.",
        score=0.03,
        leg="fused",
    ),
    Hit(
        id="2",
        source="tutorial/controlflow.html",
        title="4. More Control Flow Tools",
        headers=["4. More Control Flow Tools", "4.2. `for` Statements"],
        chunk_index=2,
        content="Python's for statement iterates over the items of any sequence.",
        summary=None,
        score=0.02,
        leg="fused",
    ),
]


def test_no_hits_is_dont_know_without_calling_the_model() -> None:
    model = RecordingChatModel(error=AssertionError("the model must not be called"))
    answer = Answerer(model, model_name="fake").answer("How do I print 1 to 30 in Go?", [])
    assert (answer.text, answer.citations, answer.llm_called) == (DONT_KNOW, [], False)
    assert model.prompts == []


def test_answer_cites_numbered_passages() -> None:
    model = RecordingChatModel(reply="  Use range(1, 31) [1].\n")
    answer = Answerer(model, model_name="fake").answer("How do I count to 30?", HITS)

    assert (answer.text, answer.citations, answer.llm_called) == (
        "Use range(1, 31) [1].",
        HITS,
        True,
    )
    [[system, human]] = model.prompts
    assert DONT_KNOW in str(system.content)
    assert human.content == (
        "Context:\n"
        "[1] tutorial/controlflow.html § 4. More Control Flow Tools > 4.3. The `range()` "
        "Function\nfor i in range(5):\n    print(i)\n\n"
        "[2] tutorial/controlflow.html § 4. More Control Flow Tools > 4.2. `for` Statements\n"
        "Python's for statement iterates over the items of any sequence.\n\n"
        "Question: How do I count to 30?\nAnswer:"
    )


def test_a_model_failure_is_a_model_error() -> None:
    model = RecordingChatModel(error=ollama.ResponseError("model not loaded", 500))
    with pytest.raises(ModelError) as caught:
        Answerer(model, model_name="fake").answer("How do I count to 30?", HITS)
    assert str(caught.value) == (
        "answering with 'fake' failed: model not loaded (status code: 500)"
    )


@pytest.mark.parametrize(
    ("question", "terms"),
    [
        ("I want to write a Go script that prints numbers from 1 to 30.", ["Go"]),
        ("how do goroutines communicate over channels in Go", ["Go"]),
        ("center a div with CSS grid", ["CSS"]),
        ("What does os.path.join() do? And __init__?", ["os.path.join", "__init__"]),
        ("Can I call range() from C++ or C#?", ["range", "C++", "C#"]),
        # Sentence starts and "I" are not names; lower-case words never are.
        ("Python's loops. Then I want to loop. Loops: why?", []),
        ("how do i write a for loop", []),
    ],
)
def test_named_terms(question: str, terms: list[str]) -> None:
    assert named_terms(question) == terms


def hit(content: str, *, source: str = "tutorial/controlflow.html") -> Hit:
    return Hit(
        id="h",
        source=source,
        title="4. More Control Flow Tools",
        headers=["4. More Control Flow Tools"],
        chunk_index=0,
        content=content,
        summary=None,
        score=0.1,
        leg="originals",
    )


@pytest.mark.parametrize(
    ("question", "content", "missing"),
    [
        ("a Go script that counts", "Let's go: for i in range(3): print(i)", ["Go"]),
        ("a Go script that counts", "Go has no range() like this.", []),
        ("a Python script that counts", "python3 -m venv; for i in range(3)", []),
        ("loop in Python", "for i in range(3)", []),  # the source names python3.11
        ("center a div with CSS grid", "grids of numbers", ["CSS"]),
        ("center a div with CSS grid", "the css module", []),  # acronyms in any case
        ("what is os.path.join()", "use os.path.join(a, b)", []),
        ("what is os.path.join()", "use join(a, b) from os.path", ["os.path.join"]),
        ("deploy Rust code to Kubernetes", "Rust is mentioned", ["Kubernetes"]),
    ],
)
def test_missing_terms(question: str, content: str, missing: list[str]) -> None:
    source = "/usr/share/doc/python3.11/html/tutorial/controlflow.html"
    assert missing_terms(question, [hit(content, source=source)]) == missing


def test_a_question_naming_what_no_passage_mentions_is_dont_know_without_the_model() -> None:
    model = RecordingChatModel(error=AssertionError("the model must not be called"))
    answer = Answerer(model, model_name="fake").answer(
        "I want to write a Go script that prints numbers from 1 to 30.", HITS
    )
    assert answer == Answer(text=DONT_KNOW, citations=[], llm_called=False, missing_terms=["Go"])
    assert model.prompts == []


def test_the_term_check_can_be_turned_off() -> None:
    model = RecordingChatModel(reply="for i in range(1, 31) [1]")
    answerer = Answerer(model, model_name="fake", term_check=False)
    answer = answerer.answer("I want to write a Go script that prints 1 to 30.", HITS)
    assert (answer.llm_called, answer.missing_terms) == (True, [])
