"""The summary guard: each detector on hand-written good and bad summaries, the extractive
fallback, and the retry-then-fallback logic of the summarizer with fake chat models.

The bad summaries include the three failures measured with SmolLM2-135M in issue 6:
an echoed "Header 3: …" with the chunk's first lines copied, a repeated sentence, and a
"4.5. pass Statements" summary about `def` and `return` instead.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Coroutine
from typing import Any, TypeVar, cast

import pytest
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from service.index.records import SummaryRecord
from service.ingest.attach import summary_record
from service.ingest.chunk_records import original_record
from service.ingest.pipeline import Ingestor
from service.ingest.prompts import PROMPT_VERSION, STRICT_SYSTEM_PROMPT, SYSTEM_PROMPT
from service.ingest.quality import (
    QualityThresholds,
    copied_share,
    detect_drift,
    detect_length,
    detect_repetition,
    detect_scaffolding,
    detect_verbatim,
    extractive_summary,
    lead_sentences,
    repeated_share,
    salient_terms,
    validate_summary,
)
from service.ingest.report import IngestReport
from service.ingest.summarize import (
    Summarizer,
    SummaryRequest,
    SummaryResult,
    clean_for_prompt,
)
from service.settings import Settings

_T = TypeVar("_T")

IF_HEADERS = ["4. More Control Flow Tools", "4.1. `if` Statements"]
IF_CHUNK = """Perhaps the most well-known statement type is the `if` statement. For
example:

```python
>>> x = int(input("Please enter an integer: "))
>>> if x < 0:
...     x = 0
... elif x == 0:
...     print('Zero')
... else:
...     print('More')
```

There can be zero or more `elif` parts, and the `else` part is
optional. The keyword `elif` is short for 'else if', and is useful
to avoid excessive indentation. An `if` … `elif` …
`elif` … sequence is a substitute for the `switch` or
`case` statements found in other languages."""

PASS_HEADERS = ["4. More Control Flow Tools", "4.5. `pass` Statements"]
PASS_CHUNK = """The `pass` statement does nothing. It can be used when a statement is
required syntactically but the program requires no action. For example:

```python
>>> while True:
...     pass  # Busy-wait for keyboard interrupt (Ctrl+C)
...
```

This is commonly used for creating minimal classes:

```python
>>> class MyEmptyClass:
...     pass
...
```

Another place `pass` can be used is as a place-holder for a function or
conditional body when you are working on new code, allowing you to keep thinking
at a more abstract level. The `pass` is silently ignored:

```python
>>> def initlog(*args):
...     pass   # Remember to implement this!
...
```"""

FOR_HEADERS = ["4. More Control Flow Tools", "4.2. `for` Statements"]
FOR_CHUNK = (
    "The `for` statement in Python differs a bit from what you may be used to in C or "
    "Pascal. Python's `for` statement iterates over the items of any sequence (a list or "
    "a string), in the order that they appear in the sequence."
)

# Good summaries say only what their chunk says (the guard's "invented" check).
GOOD_IF = (
    "Explains the `if` statement with optional `elif` and `else` parts; an if … elif "
    "sequence is a substitute for the switch or case statements of other languages."
)
GOOD_PASS = (
    "The `pass` statement does nothing and is a place-holder where Python requires a "
    "statement, such as a minimal class or the body of a new function."
)
GOOD_FOR = (
    "Python's `for` statement differs from C or Pascal: it iterates over the items of any "
    "sequence in order."
)

# The three failures of issue 6.
ECHO_AND_COPY = (
    "Header 3: 4.1. if Statements\n\nPerhaps the most well-known statement type is the "
    "if statement. There can be zero or more elif parts, and the else part is optional."
)
REPEATED = (
    "The for statement iterates over a list or a string. "
    "The for statement iterates over a list or a string. "
    "The for statement iterates over a list or a string."
)
DRIFT = (
    "The def keyword defines a new function with parameters, and return sends a value "
    "back to the caller when the function ends."
)
TOO_LONG = "The `pass` statement is a placeholder. " + "It does nothing at all here. " * 20

DEFAULTS = QualityThresholds()


def _run(coroutine: Coroutine[Any, Any, _T]) -> _T:
    return asyncio.run(coroutine)


# -- thresholds --------------------------------------------------------------------------


def test_threshold_defaults_are_the_settings_defaults() -> None:
    assert QualityThresholds.from_settings(Settings()) == DEFAULTS
    expected = QualityThresholds(
        min_words=4,
        max_words=100,
        max_copied_share=0.5,
        max_repeated_share=0.2,
        min_shared_terms=1,
        max_invented_claims=1,
        max_unsupported_share=0.15,
    )
    assert expected == DEFAULTS
    assert Settings().guard.enabled is True


def test_thresholds_follow_the_environment() -> None:
    settings = Settings.from_env(
        {"SYNOPSIS_SUMMARY_MAX_WORDS": "40", "SYNOPSIS_SUMMARY_MAX_COPIED_SHARE": "0.3"}
    )
    limits = QualityThresholds.from_settings(settings)
    assert (limits.max_words, limits.max_copied_share) == (40, 0.3)


# -- validate_summary on the cases and on good summaries ---------------------------


@pytest.mark.parametrize(
    ("summary", "chunk", "headers", "expected"),
    [
        (GOOD_IF, IF_CHUNK, IF_HEADERS, []),
        (GOOD_PASS, PASS_CHUNK, PASS_HEADERS, []),
        (GOOD_FOR, FOR_CHUNK, FOR_HEADERS, []),
        # "Header 3" names a number the chunk does not have; a drifting summary's
        # content is not in the chunk: both are "invented" too.
        (ECHO_AND_COPY, IF_CHUNK, IF_HEADERS, ["scaffolding", "verbatim", "invented"]),
        (REPEATED, FOR_CHUNK, FOR_HEADERS, ["repetition"]),
        (DRIFT, PASS_CHUNK, PASS_HEADERS, ["drift", "invented"]),
        ("", PASS_CHUNK, PASS_HEADERS, ["empty"]),
        ("Pass.", PASS_CHUNK, PASS_HEADERS, ["empty"]),
        (TOO_LONG, PASS_CHUNK, PASS_HEADERS, ["too_long", "repetition"]),
    ],
    ids=["good-if", "good-pass", "good-for", "echo-and-copy", "repeated", "drift", "empty",
         "one-word", "too-long"],
)  # fmt: skip
def test_validate_summary(
    summary: str, chunk: str, headers: list[str], expected: list[str]
) -> None:
    assert validate_summary(summary, clean_for_prompt(chunk), headers, DEFAULTS) == expected


# -- each detector -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        ("Two words", "empty"),
        ("one two three four", None),
        (" ".join(["word"] * 100), None),
        (" ".join(["word"] * 101), "too_long"),
    ],
)
def test_detect_length(summary: str, expected: str | None) -> None:
    assert detect_length(summary, DEFAULTS) == expected


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        ("Header 3: 4.1. if Statements. The if statement.", "scaffolding"),
        ("## Header 2: Intro", "scaffolding"),
        ("Section: 4.5 pass Statements. It does nothing.", "scaffolding"),
        ("Topic: 4. More Control Flow Tools › 4.5. pass", "scaffolding"),
        ("The pass statement.\nSummary: it does nothing.", "scaffolding"),
        ("Here is a summary of the pass statement.", "scaffolding"),
        ("This is the summary of this section about pass.", "scaffolding"),
        ("pass does nothing<|im_end|>", "scaffolding"),
        # Not scaffolding: the words in ordinary use.
        ("The HTTP header names a section of the response: pass it on.", None),
        ("Explains sections and headers of a config file.", None),
    ],
)
def test_detect_scaffolding(summary: str, expected: str | None) -> None:
    assert detect_scaffolding(summary) == expected


def test_copied_share_is_the_share_of_words_in_copied_8_word_spans() -> None:
    chunk = "one two three four five six seven eight nine ten"
    assert copied_share("one two three four five six seven eight", chunk) == 1.0
    # "two … nine" (8 words) is copied, "x y z" is not.
    assert copied_share("two three four five six seven eight nine x y z", chunk) == 8 / 11
    # Seven words in a row are not a copy.
    assert copied_share("two three four five six seven eight x y z", chunk) == 0.0
    assert copied_share("too short to have one", chunk) == 0.0
    # The echo: two pasted sentences around a label.
    assert copied_share(ECHO_AND_COPY, clean_for_prompt(IF_CHUNK)) == 25 / 31


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        (ECHO_AND_COPY, "verbatim"),
        # One copied phrase in a longer summary of its own words is fine.
        (
            "It can be used when a statement is required syntactically; the summary "
            "goes on to explain placeholders for classes and functions in other words.",
            None,
        ),
        (GOOD_PASS, None),
    ],
)
def test_detect_verbatim(summary: str, expected: str | None) -> None:
    chunk = clean_for_prompt(IF_CHUNK + "\n\n" + PASS_CHUNK)
    assert detect_verbatim(summary, chunk, DEFAULTS) == expected


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        (REPEATED, "repetition"),
        ("The loop ends. It prints. The loop ends.", "repetition"),
        # Repeated phrases inside different sentences.
        (
            "range yields numbers from start to stop by step and range yields numbers "
            "from start to stop by step and range yields numbers from start to stop",
            "repetition",
        ),
        (GOOD_IF, None),
        ("The loop ends. The loop ends", "repetition"),
        ("Stop. Stop.", None),  # sentences under three words are not compared
    ],
)
def test_detect_repetition(summary: str, expected: str | None) -> None:
    assert detect_repetition(summary, DEFAULTS) == expected


def test_repeated_share() -> None:
    assert repeated_share("a b c d e a b c d e") == pytest.approx(1 - 5 / 6)
    assert repeated_share("a b c d e f") == 0.0


def test_salient_terms_are_header_words_identifiers_and_code_names() -> None:
    assert salient_terms(clean_for_prompt(PASS_CHUNK), PASS_HEADERS) == {
        "pass",
        "myemptyclass",
        "initlog",
    }
    # Python keywords stay salient although they are English stopwords.
    assert {"if", "elif", "else", "switch", "case"} <= salient_terms(IF_CHUNK, IF_HEADERS)
    assert salient_terms("No names here at all.", []) == set()


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        (DRIFT, "drift"),
        ("Describes statements and functions in Python.", "drift"),  # generic words only
        ("Shows how to write an empty class, MyEmptyClass.", None),
        ("Placeholders: the PASS statement.", None),
    ],
)
def test_detect_drift(summary: str, expected: str | None) -> None:
    assert detect_drift(summary, clean_for_prompt(PASS_CHUNK), PASS_HEADERS, DEFAULTS) == expected


def test_a_chunk_without_salient_terms_cannot_drift() -> None:
    assert detect_drift("Anything at all.", "No names here.", [], DEFAULTS) is None


# -- the extractive fallback ---------------------------------------------------------------


def test_extractive_summary_is_header_path_lead_sentences_and_identifiers() -> None:
    assert extractive_summary(clean_for_prompt(PASS_CHUNK), PASS_HEADERS) == (
        "4. More Control Flow Tools > 4.5. `pass` Statements\n"
        "The `pass` statement does nothing. It can be used when a statement is required "
        "syntactically but the program requires no action.\n"
        "Identifiers: MyEmptyClass, initlog, pass."
    )


def test_lead_sentences_skip_code_and_sentences_that_announce_it() -> None:
    chunk = "For example:\n\n```python\nx = 1\n```\n\n- It does this. Then that. And more."
    assert lead_sentences(chunk, min_words=3) == "It does this."
    assert lead_sentences("```\ncode only\n```") == ""


# -- prompt hygiene ------------------------------------------------------------------------


def test_clean_for_prompt_normalizes_whitespace_outside_code_only() -> None:
    markdown = "Some   text\twith  gaps.   \n  - nested  item\n\n```\na  =  1   \n```"
    assert clean_for_prompt(markdown) == (
        "Some text with gaps.\n  - nested item\n\n```\na  =  1   \n```"
    )


def test_the_prompt_gives_the_header_path_once_without_scaffolding_labels() -> None:
    summarizer = Summarizer(FakeListChatModel(responses=["x"]), model_name="fake")
    request = SummaryRequest(headers=PASS_HEADERS, content=PASS_CHUNK, label="pass")
    system, human = summarizer.messages(request)
    assert system.content == SYSTEM_PROMPT
    assert str(human.content).startswith(
        "Topic: 4. More Control Flow Tools › 4.5. `pass` Statements\n\nThe `pass` statement"
    )
    assert "Header" not in str(human.content)
    assert "Section:" not in str(human.content)
    strict_system, strict_human = summarizer.messages(request, strict=True)
    assert strict_system.content == STRICT_SYSTEM_PROMPT
    assert str(strict_human.content).endswith(
        "In your own words, what does this text explain? Mention: MyEmptyClass, initlog, pass."
    )
    assert PROMPT_VERSION == "v2"


# -- retry, then fallback ------------------------------------------------------------------

PASS_REQUEST = SummaryRequest(headers=PASS_HEADERS, content=PASS_CHUNK, label="pass")


def _guarded(responses: list[str]) -> tuple[Summarizer, FakeListChatModel]:
    """A guarded summarizer with the strict retry on (off by default, tested below)."""
    model = FakeListChatModel(responses=responses)
    return Summarizer(model, model_name="fake", guard=DEFAULTS, strict_retry=True), model


def test_by_default_a_flagged_summary_gets_the_extractive_one_without_a_second_call() -> None:
    summarizer = Summarizer(
        FakeListChatModel(responses=[DRIFT, GOOD_PASS]), model_name="fake", guard=DEFAULTS
    )
    result = _run(summarizer.asummarize_checked(PASS_REQUEST))
    assert result == SummaryResult(
        text=extractive_summary(clean_for_prompt(PASS_CHUNK), PASS_HEADERS),
        kind="extractive",
        reason="drift,invented",
    )
    assert (summarizer.calls, summarizer.retries_passed, summarizer.retries_skipped) == (1, 0, 1)


def test_a_good_summary_is_accepted_at_once() -> None:
    summarizer, _model = _guarded([GOOD_PASS])
    assert _run(summarizer.asummarize_checked(PASS_REQUEST)) == SummaryResult(text=GOOD_PASS)
    assert (summarizer.calls, summarizer.flagged, summarizer.fallbacks) == (1, {}, 0)


def test_a_flagged_summary_is_retried_once_and_the_retry_kept_when_it_passes() -> None:
    summarizer, _model = _guarded([DRIFT, GOOD_PASS])
    result = _run(summarizer.asummarize_checked(PASS_REQUEST))
    assert result == SummaryResult(text=GOOD_PASS, kind="llm", reason="drift,invented")
    assert (summarizer.calls, summarizer.retries_passed, summarizer.fallbacks) == (2, 1, 0)
    assert summarizer.flagged == {"drift": 1, "invented": 1}


def test_flagged_twice_stores_the_extractive_summary_with_every_reason() -> None:
    summarizer, _model = _guarded([DRIFT, "Section: " + DRIFT])
    result = _run(summarizer.asummarize_checked(PASS_REQUEST))
    assert result == SummaryResult(
        text=extractive_summary(clean_for_prompt(PASS_CHUNK), PASS_HEADERS),
        kind="extractive",
        reason="drift,invented,scaffolding",
    )
    assert (summarizer.calls, summarizer.retries_passed, summarizer.fallbacks) == (2, 0, 1)


def test_empty_replies_fall_back_instead_of_failing_under_the_guard() -> None:
    summarizer, _model = _guarded(["", "Here is a summary:"])
    result = _run(summarizer.asummarize_checked(PASS_REQUEST))
    assert (result.kind, result.reason, summarizer.calls) == ("extractive", "empty", 2)


def test_without_a_guard_every_summary_is_kept_as_llm() -> None:
    summarizer = Summarizer(FakeListChatModel(responses=[DRIFT]), model_name="fake")
    assert _run(summarizer.asummarize_checked(PASS_REQUEST)) == SummaryResult(text=DRIFT)


def test_summarize_many_returns_results_with_kind_and_reason() -> None:
    requests = [
        PASS_REQUEST,
        SummaryRequest(headers=IF_HEADERS, content=IF_CHUNK, label="if"),
    ]
    # concurrency 1: the fake's replies go to the requests in order.
    summarizer = Summarizer(
        FakeListChatModel(responses=[GOOD_PASS, ECHO_AND_COPY, ECHO_AND_COPY]),
        model_name="fake",
        guard=DEFAULTS,
        concurrency=1,
    )
    try:
        results = summarizer.summarize_many(requests)
    finally:
        summarizer.close()
    assert [(r.kind, r.reason) for r in results] == [
        ("llm", ""),
        ("extractive", "scaffolding,verbatim,invented"),
    ]
    assert summarizer.flagged == {"scaffolding": 1, "verbatim": 1, "invented": 1}


# -- ingest records kind and reason, also from the cache --------------------------------------


def test_the_ingest_writes_kind_and_reason_into_the_summary_record() -> None:
    chunk = Document(
        page_content=PASS_CHUNK,
        metadata={"source": "controlflow.md", "headers": PASS_HEADERS, "chunk_index": 7},
    )
    record = summary_record(
        original_record(uuid.uuid4(), chunk, [1.0]),
        SummaryResult(text="x", kind="extractive", reason="drift"),
        summary_id=uuid.uuid4(),
        vector=[1.0],
        content_vector=[1.0],
        model="fake",
        prompt_version=PROMPT_VERSION,
    )
    assert (record.kind, record.reason, record.summary) == ("extractive", "drift", "x")


class _CacheStore:
    """Just the summary cache of a Store: every chunk is cached as an extractive summary."""

    def cached_summaries(self, hashes: list[str], **_: str) -> dict[str, Any]:
        return {
            h: SummaryRecord(
                id=uuid.uuid4(),
                original_id=uuid.uuid4(),
                source="",
                title="",
                headers=[],
                summary="cached",
                content_hash=h,
                model="fake",
                prompt_version=PROMPT_VERSION,
                kind="extractive",
                reason="verbatim",
            )
            for h in hashes
        }


class _Embedder:
    model = "fake-embedding"


def test_cached_summaries_keep_their_kind_and_reason() -> None:
    summarizer = Summarizer(FakeListChatModel(responses=["unused"]), model_name="fake")
    ingestor = Ingestor(
        store=cast(Any, _CacheStore()), summarizer=summarizer, embedder=cast(Any, _Embedder())
    )
    chunk = Document(
        page_content=PASS_CHUNK,
        metadata={"source": "controlflow.md", "headers": PASS_HEADERS, "chunk_index": 0},
    )
    report = IngestReport()
    results = ingestor._summaries_for(
        "controlflow.md", [original_record(uuid.uuid4(), chunk, [])], report
    )
    assert [result for result, _vector in results] == [
        SummaryResult(text="cached", kind="extractive", reason="verbatim")
    ]
    assert (report.cached_summaries, report.llm_calls, summarizer.calls) == (1, 0, 0)


def test_the_default_output_bound_stays_below_the_too_long_bound() -> None:
    # About 0.75 English words per token: a reply cut by num_predict is not "too_long".
    settings = Settings()
    assert settings.summaries.max_tokens * 0.75 < settings.guard.max_words


def test_clean_for_prompt_keeps_a_four_backtick_fence_that_contains_three_backticks() -> None:
    # The HTML loader writes code that contains ``` inside a ```` fence.
    code = "````markdown\n```\n[not a link](x) <b>kept</b>\n```\n````"
    markdown = f"See [the docs](https://example.org/).\n\n{code}\n\nAfter  it."
    assert clean_for_prompt(markdown) == f"See the docs.\n\n{code}\n\nAfter it."


def test_lead_sentences_skip_a_four_backtick_fence_with_three_backticks_inside() -> None:
    chunk = "````\n```\nThis line is code and must not lead.\n```\n````\n\nThe real lead is here."
    assert lead_sentences(chunk, min_words=3) == "The real lead is here."
