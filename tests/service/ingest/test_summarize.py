"""Summaries: the prompt's view of a chunk, preamble stripping, retries, failures, concurrency.

The chat model here is a fake (langchain_core's fake chat models and a scripted one built
the same way): these tests are about our own retry, error and concurrency logic. The real
model is exercised by the integration tests.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import httpx
import ollama
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from service.errors import ConfigurationError, ModelError
from service.ingest.prompts import PROMPT_VERSION, PROMPTS, RETRIEVAL_SYSTEM_PROMPT, SYSTEM_PROMPT
from service.ingest.quality import QualityThresholds
from service.ingest.summarize import (
    Summarizer,
    SummaryRequest,
    SummaryTimeoutError,
    clean_for_prompt,
    drop_unfinished_sentence,
    strip_preamble,
)

_T = TypeVar("_T")
_REAL_SLEEP = asyncio.sleep  # the fake model's own waits are real even when backoff is patched

LABEL = "tutorial/controlflow.html § 4. More Control Flow Tools > 4.3. The range() Function"
REQUEST = SummaryRequest(
    headers=["4. More Control Flow Tools", "4.3. The `range()` Function"],
    content="If you do need to iterate over a sequence of numbers, use [range()](#range).",
    label=LABEL,
)


class ScriptedChatModel(BaseChatModel):
    """Answers (or fails) in the order of `script`; the last entry repeats forever.

    In a reply, `{section}` becomes the prompt's section line. Records how many calls
    were in flight at once, to check the concurrency bound.
    """

    script: list[str | Exception]
    delay: float = 0.0
    calls: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        raise NotImplementedError("the summarizer only calls the model asynchronously")

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        self.calls += 1
        self.prompts.append(messages)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                await _REAL_SLEEP(self.delay)
            item = self.script[min(self.calls - 1, len(self.script) - 1)]
            if isinstance(item, Exception):
                raise item
            section = str(messages[-1].content).splitlines()[0]
            reply = item.replace("{section}", section)
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])
        finally:
            self.in_flight -= 1


def _run(coroutine: Coroutine[Any, Any, _T]) -> _T:
    return asyncio.run(coroutine)


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The backoff delays the summarizer asked for (each then sleeps for 0 s)."""
    asked: list[float] = []
    real_sleep = asyncio.sleep

    async def fake_sleep(delay: float, result: Any = None) -> Any:
        asked.append(delay)
        return await real_sleep(0, result)

    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    return asked


# -- clean_for_prompt --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        (
            'See [the docs](https://docs.python.org/3/library/os.html#os.path.join "os") now.',
            "See the docs now.",
        ),
        ("A diagram: ![flow chart](img/flow.png) here.", "A diagram: flow chart here."),
        ("Visit <https://example.com/x>.", "Visit https://example.com/x."),
        ('<div class="note">Text <span>inline</span></div>', "Text inline"),
        ("4.3. The range() Function¶", "4.3. The range() Function"),
        ("[f(x)](https://example.com/f_(x)) works", "f(x) works"),
        ("one\n\n\n\n\ntwo", "one\n\ntwo"),
        # A footnote reference is a link too; an image inside a link leaves its alt text.
        ("a claim[[1]](file:///doc/notes.html#fn1) ends", "a claim[1] ends"),
        ("[![logo](img/logo.png)](index.html)", "logo"),
        # Generic types and inline code are not HTML, and neither is a comparison.
        (
            "Returns Result<String, io::Error> or a Vec<Option<T>> of Box<dyn Error>.",
            "Returns Result<String, io::Error> or a Vec<Option<T>> of Box<dyn Error>.",
        ),
        ("Call `parse::<u32>()` on `<b>` text", "Call `parse::<u32>()` on `<b>` text"),
        ("if a < b and c > d", "if a < b and c > d"),
        ("<kbd>Ctrl</kbd>+<kbd>C</kbd><br/>", "Ctrl+C"),
    ],
)
def test_clean_for_prompt_removes_link_targets_images_and_html(
    markdown: str, expected: str
) -> None:
    assert clean_for_prompt(markdown) == expected


@pytest.mark.parametrize("fence", ["```", "~~~"])
def test_clean_for_prompt_keeps_code_byte_exact(fence: str) -> None:
    code = (
        f"{fence}python\n"
        'x = [a](https://example.com)  # <b>not html</b>\nprint("¶")\n\n\n\n'
        "y = ![i](j)\n"
        f"{fence}"
    )
    markdown = f"See [range](#range).\n\n{code}\n\nAfter <em>this</em>."
    assert clean_for_prompt(markdown) == f"See range.\n\n{code}\n\nAfter this."


# -- strip_preamble ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Here is a summary of the section: The range function.", "The range function."),
        ("Sure! Here's a concise summary: range() makes sequences.", "range() makes sequences."),
        ("here is a short summary of 4.3:\nRange.", "Range."),
        ("Here is the summary.\nrange() yields numbers.", "range() yields numbers."),
        ("Summary: range() yields numbers.", "range() yields numbers."),
        ("**Summary**: range() yields numbers.", "range() yields numbers."),
        ("  The range() function.  ", "The range() function."),
        # Not a preamble: the word "summary" inside the text stays.
        ("This summary covers range().", "This summary covers range()."),
        ("range() and summary: both words stay.", "range() and summary: both words stay."),
    ],
)
def test_strip_preamble(reply: str, expected: str) -> None:
    assert strip_preamble(reply) == expected


# -- Summarizer --------------------------------------------------------------------------


def test_prompt_has_header_path_and_cleaned_chunk() -> None:
    model = FakeListChatModel(responses=["Here is a summary: range() makes numbers."])
    summarizer = Summarizer(model, model_name="fake")

    assert _run(summarizer.asummarize(REQUEST)) == "range() makes numbers."
    system, human = summarizer.messages(REQUEST)
    assert system.content == SYSTEM_PROMPT
    assert human.content == (
        "Topic: 4. More Control Flow Tools › 4.3. The `range()` Function\n\n"
        "If you do need to iterate over a sequence of numbers, use range()."
    )
    assert (summarizer.calls, summarizer.prompt_version) == (1, f"{PROMPT_VERSION}+c2")


@pytest.mark.parametrize(
    "transient",
    [
        httpx.ConnectError("connection refused"),
        ConnectionResetError("reset by peer"),
        ollama.ResponseError("server busy", 503),
        ollama.ResponseError("too many requests", 429),
        ValueError("unused: an empty reply"),  # stands for "" below
    ],
    ids=["httpx", "oserror", "503", "429", "empty"],
)
def test_transient_failures_are_retried_with_backoff(
    transient: Exception, sleeps: list[float]
) -> None:
    first: str | Exception = "" if isinstance(transient, ValueError) else transient
    model = ScriptedChatModel(script=[first, first, "range() makes numbers."])
    summarizer = Summarizer(model, model_name="fake", retries=3, backoff=0.5)

    assert _run(summarizer.asummarize(REQUEST)) == "range() makes numbers."
    assert (model.calls, summarizer.calls) == (3, 3)
    assert sleeps == [0.5, 1.0]


def test_a_chunk_that_keeps_failing_raises_model_error_naming_it(sleeps: list[float]) -> None:
    model = ScriptedChatModel(script=[httpx.ConnectError("connection refused")])
    summarizer = Summarizer(model, model_name="fake", retries=2, backoff=1.0)

    with pytest.raises(ModelError) as caught:
        _run(summarizer.asummarize(REQUEST))
    assert str(caught.value) == (
        f"summarizing {LABEL} with 'fake' failed after 3 attempts: ConnectError: connection refused"
    )
    assert model.calls == 3
    assert sleeps == [1.0, 2.0]


def test_a_call_that_times_out_is_retried_then_reported(sleeps: list[float]) -> None:
    model = ScriptedChatModel(script=["too late"], delay=0.2)
    summarizer = Summarizer(model, model_name="fake", retries=1, timeout=0.01, backoff=0.25)

    with pytest.raises(SummaryTimeoutError) as caught:
        _run(summarizer.asummarize(REQUEST))
    assert str(caught.value) == (
        f"summarizing {LABEL} with 'fake' timed out 2 times after 0.01 s each (the model "
        "server is slow or busy; SYNOPSIS_SUMMARY_TIMEOUT raises the limit)"
    )
    assert isinstance(caught.value, ModelError)
    assert model.calls == 2
    assert sleeps == [0.25]


@pytest.mark.parametrize("guarded", [False, True])
def test_a_chunk_whose_calls_all_time_out_gets_the_recorded_extractive_summary(
    sleeps: list[float], guarded: bool
) -> None:
    model = ScriptedChatModel(script=["too late"], delay=0.2)
    summarizer = Summarizer(
        model,
        model_name="fake",
        retries=1,
        timeout=0.01,
        guard=QualityThresholds() if guarded else None,
    )
    result = _run(summarizer.asummarize_checked(REQUEST))
    assert (result.kind, result.reason) == ("extractive", "timeout")
    assert result.text.startswith(" > ".join(REQUEST.headers))
    assert (model.calls, summarizer.fallbacks, summarizer.timeouts) == (2, 1, 1)


def test_a_slow_call_is_warned_about_and_counted(
    sleeps: list[float], caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedChatModel(script=["range() makes numbers."], delay=0.05)
    summarizer = Summarizer(model, model_name="fake", slow_seconds=0.01)
    with caplog.at_level("WARNING"):
        assert _run(summarizer.asummarize(REQUEST)) == "range() makes numbers."
    assert summarizer.slow_calls == 1
    assert summarizer.last_call_seconds >= 0.05
    [warning] = [record.getMessage() for record in caplog.records]
    assert warning.startswith(f"summarizing {LABEL} with 'fake' took ")
    assert warning.endswith(
        "(over SYNOPSIS_SUMMARY_SLOW_SECONDS=0.01): the model server is slow or busy"
    )
    fast = Summarizer(model, model_name="fake", slow_seconds=10)
    _run(fast.asummarize(REQUEST))
    assert fast.slow_calls == 0


def test_a_permanent_failure_is_not_retried(sleeps: list[float]) -> None:
    model = ScriptedChatModel(script=[ollama.ResponseError('model "nope" not found', 404)])
    summarizer = Summarizer(model, model_name="nope", retries=3)

    with pytest.raises(ModelError) as caught:
        _run(summarizer.asummarize(REQUEST))
    assert str(caught.value) == (
        f"summarizing {LABEL} with 'nope' failed: model \"nope\" not found (status code: 404)"
    )
    assert (model.calls, sleeps) == (1, [])


def test_empty_replies_exhaust_the_retries() -> None:
    model = ScriptedChatModel(script=["Here is a summary:"])
    summarizer = Summarizer(model, model_name="fake", retries=1, backoff=0.0)

    with pytest.raises(ModelError) as caught:
        _run(summarizer.asummarize(REQUEST))
    assert str(caught.value) == (
        f"summarizing {LABEL} with 'fake' failed after 2 attempts: "
        "ValueError: the model returned an empty summary"
    )


@pytest.mark.parametrize("concurrency", [1, 2, 3])
def test_summarize_many_respects_the_concurrency_bound(concurrency: int) -> None:
    model = ScriptedChatModel(script=["About {section}."], delay=0.02)
    summarizer = Summarizer(model, model_name="fake", concurrency=concurrency)
    requests = [
        SummaryRequest(headers=[f"H{index}"], content=f"chunk {index}", label=f"chunk {index}")
        for index in range(7)
    ]
    finished: list[int] = []

    results = _run(
        summarizer.asummarize_many(requests, on_done=lambda index, _text: finished.append(index))
    )

    assert [result.text for result in results] == [f"About Topic: H{index}." for index in range(7)]
    assert {(result.kind, result.reason) for result in results} == {("llm", "")}
    assert sorted(finished) == list(range(7))
    assert model.max_in_flight == concurrency
    assert summarizer.calls == 7


def test_summarize_many_fails_fast_and_cancels_the_rest(sleeps: list[float]) -> None:
    model = ScriptedChatModel(
        script=["ok", ollama.ResponseError("bad request", 400), "ok"], delay=0.01
    )
    summarizer = Summarizer(model, model_name="fake", concurrency=1)
    requests = [
        SummaryRequest(headers=[], content=f"chunk {index}", label=f"chunk {index}")
        for index in range(5)
    ]

    with pytest.raises(ModelError) as caught:
        _run(summarizer.asummarize_many(requests))
    assert str(caught.value) == (
        "summarizing chunk 1 with 'fake' failed: bad request (status code: 400)"
    )
    # The requests still waiting for the semaphore are cancelled, not sent.
    assert model.calls < len(requests)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            "The range() function makes sequences. It takes start, stop and",
            "The range() function makes sequences.",
        ),
        ("It calls os.path.join() on parts! Then it", "It calls os.path.join() on parts!"),
        ('Ends with a quote "like this." And then', 'Ends with a quote "like this."'),
        ("no sentence end here", "no sentence end here"),
        ("Version 3.11 adds it. Then", "Version 3.11 adds it."),
    ],
)
def test_a_reply_cut_by_the_token_limit_loses_its_unfinished_sentence(
    reply: str, expected: str
) -> None:
    assert drop_unfinished_sentence(reply) == expected


def test_the_prompt_version_chooses_the_system_prompt() -> None:
    summarizer = Summarizer(
        FakeListChatModel(responses=["x"]), model_name="fake", prompt_version="v3-retrieval"
    )
    [system, _human] = summarizer.messages(SummaryRequest(headers=["A"], content="text", label="a"))
    assert system.content == RETRIEVAL_SYSTEM_PROMPT
    assert summarizer.prompt_version == "v3-retrieval+c2"  # the prompt and the cleaning
    assert set(PROMPTS) == {"v2", "v3-retrieval", "v4-questions", "v5-summary-questions"}


def test_an_unknown_prompt_version_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="unknown summary prompt version 'v9'"):
        Summarizer(FakeListChatModel(responses=["x"]), model_name="fake", prompt_version="v9")
