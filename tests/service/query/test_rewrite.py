"""The follow-up rewrite with a scripted chat model: the prompt, a usable reply, and the
fallbacks to the previous query."""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from service.errors import ModelError
from service.query.rewrite import QueryRewriter, Rewrite, clean_rewrite, content_words

PREVIOUS = ["How do I loop over a range of numbers?"]
FOLLOW_UP = "and how do I make it count down?"


def _rewriter(reply: str, method: str = "model") -> QueryRewriter:
    return QueryRewriter(
        FakeListChatModel(responses=[reply]),
        model_name="fake",
        method=method,  # type: ignore[arg-type]
        context_turns=2,
    )


def test_content_words_drop_short_and_stop_words() -> None:
    assert content_words(FOLLOW_UP) == {"count", "down"}


@pytest.mark.parametrize(
    ("reply", "query"),
    [
        ("Query: How do I count down with range()?", "How do I count down with range()?"),
        ('"count down with range()"\nMore text.', "count down with range()"),
        ("\n\n  Rewritten query: range count down  ", "range count down"),
        ("", ""),
    ],
)
def test_clean_rewrite(reply: str, query: str) -> None:
    assert clean_rewrite(reply) == query


def test_the_first_question_is_searched_as_asked_without_a_call() -> None:
    rewriter = _rewriter("never used")
    assert rewriter.rewrite([], "How do I loop?") == Rewrite("How do I loop?", "none")


def test_a_usable_reply_is_the_query() -> None:
    rewriter = _rewriter("How do I count down with range()?")
    assert rewriter.rewrite(PREVIOUS, FOLLOW_UP) == Rewrite(
        "How do I count down with range()?", "model"
    )


@pytest.mark.parametrize(
    "reply",
    [
        "",  # nothing
        "I'm sorry, I cannot help with that request today.",  # lost the follow-up's words
        # An answer, not a query: longer than the earlier query and the follow-up together.
        "You can count down with range() by giving it a negative step, as in range(10, 0, -1), "
        "which starts at ten",
    ],
)
def test_an_unusable_reply_falls_back_to_the_previous_query(reply: str) -> None:
    assert _rewriter(reply).rewrite(PREVIOUS, FOLLOW_UP) == Rewrite(
        f"{PREVIOUS[0]} {FOLLOW_UP}", "previous"
    )


def test_previous_and_none_need_no_model() -> None:
    previous = QueryRewriter(None, model_name="-", method="previous")
    assert previous.rewrite(PREVIOUS, FOLLOW_UP).method == "previous"
    none = QueryRewriter(None, model_name="-", method="none")
    assert none.rewrite(PREVIOUS, FOLLOW_UP) == Rewrite(FOLLOW_UP, "none")
    with pytest.raises(ValueError, match="needs a chat model"):
        QueryRewriter(None, model_name="-", method="model")


def test_the_prompt_lists_the_last_turns_and_the_follow_up() -> None:
    seen: list[str] = []

    class Recording(FakeListChatModel):
        def _call(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
            seen.append(str(messages[-1].content))
            return super()._call(messages, stop, run_manager, **kwargs)

    rewriter = QueryRewriter(Recording(responses=["count down"]), model_name="f", context_turns=2)
    rewriter.rewrite(["one", "two", "three"], FOLLOW_UP)
    assert seen == [f"Earlier questions:\n1. two\n2. three\n\nFollow-up: {FOLLOW_UP}\nQuery:"]


def test_a_model_failure_names_the_model() -> None:
    class Failing(FakeListChatModel):
        def _call(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise ConnectionError("refused")

    rewriter = QueryRewriter(Failing(responses=[]), model_name="tiny")
    with pytest.raises(ModelError, match="rewriting the follow-up with 'tiny' failed: refused"):
        rewriter.rewrite(PREVIOUS, FOLLOW_UP)
