"""The faithfulness check: what a summary asserts that its chunk, header path and title do
not support, on the summaries issue 23 found in the index and on faithful ones.

The chunks are the tutorial's own text (Debian's python3.11-doc), cut to the part the
summaries are about; the bad summaries are the ones shown under "1. Whetting Your
Appetite" and "4.3. The range() Function" by a fresh quick start.
"""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from service.ingest.faithfulness import Claim, Reference, check_faithfulness, normalize_word
from service.ingest.quality import (
    QualityThresholds,
    detect_invented,
    extractive_summary,
    validate_summary,
)
from service.ingest.summarize import Summarizer, SummaryRequest, SummaryResult, clean_for_prompt
from service.settings import Settings

APPETITE_HEADERS = ["1. Whetting Your Appetite"]
APPETITE_CHUNK = """If you do much work on computers, eventually you find that there’s some task
you’d like to automate. For example, you may wish to perform a
search-and-replace over a large number of text files, or rename and rearrange a
bunch of photo files in a complicated way. Perhaps you’d like to write a small
custom database, or a specialized GUI application, or a simple game.

If you’re a professional software developer, you may have to work with several
C/C++/Java libraries but find the usual write/compile/test/re-compile cycle is
too slow.

Python is just the language for you.

You could write a Unix shell script or Windows batch files for some of these
tasks, but shell scripts are best at moving around files and changing text data,
not well-suited for GUI applications or games. You could write a C/C++/Java
program, but it can take a lot of development time to get even a first-draft
program. Python is simpler to use, available
on Windows, macOS, and Unix operating systems, and will help you get the job done
more quickly."""

RANGE_HEADERS = ["4. More Control Flow Tools", "4.3. The `range()` Function"]
RANGE_CHUNK = """If you do need to iterate over a sequence of numbers, the built-in function
[`range()`](file:///x#range "range") comes in handy. It generates arithmetic progressions:

```python
>>> for i in range(5):
...     print(i)
...
0
1
2
3
4
```

The given end point is never part of the generated sequence; `range(10)` generates
10 values, the legal indices for items of a sequence of length 10.

To iterate over the indices of a sequence, you can combine [`range()`](file:///x#range) and
[`len()`](file:///x#len) as follows:

```python
>>> a = ['Mary', 'had', 'a', 'little', 'lamb']
>>> for i in range(len(a)):
...     print(i, a[i])
```

In most such cases, however, it is convenient to use the [`enumerate()`](file:///x#enumerate)
function, see [Looping Techniques](file:///x#tut-loopidioms)."""

# The range() chunk without its last paragraph: nothing there names enumerate().
RANGE_CHUNK_WITHOUT_ENUMERATE = RANGE_CHUNK.rsplit("\n\nIn most such cases", 1)[0]

WASP = (
    "2018-04-30 15:57:19 - The World's Largest Online Marketplace for Software (WASP) is a "
    "marketplace that allows users to create and sell software. It was launched in 2016 by "
    "the Wasmad team at the University of California, Berkeley."
)
XRANGE = (
    "This section explains the range() function and how to iterate over its elements "
    "using xrange(). This is an example of using `enumerate()`."
)
GOOD_APPETITE = (
    "Python suits automating tasks such as a search-and-replace over many text files; it "
    "is simpler than Unix shell scripts, Windows batch files or C/C++/Java programs."
)
GOOD_RANGE = (
    "The built-in range() function generates arithmetic progressions; range(10) gives 10 "
    "values, and combining range() with len() iterates over a sequence's indices."
)

DEFAULTS = QualityThresholds()


def _check(summary: str, chunk: str, headers: list[str], title: str = "") -> tuple[object, ...]:
    check = check_faithfulness(summary, clean_for_prompt(chunk), headers, title)
    return check.claims, check.words, check.units, round(check.score, 3)


@pytest.mark.parametrize(
    ("summary", "chunk", "headers", "expected"),
    [
        (
            WASP, APPETITE_CHUNK, APPETITE_HEADERS,
            (
                (
                    Claim("number", "2018-04-30"),
                    Claim("number", "15:57:19"),
                    Claim("number", "2016"),
                    Claim("name", "World's Largest Online Marketplace for Software"),
                    Claim("name", "WASP"),
                    Claim("name", "Wasmad"),
                    Claim("name", "University of California"),
                    Claim("name", "Berkeley"),
                ),
                ("marketplace", "create", "sell", "launched", "team"),
                14,
                0.929,
            ),
        ),
        (GOOD_APPETITE, APPETITE_CHUNK, APPETITE_HEADERS, ((), (), 13, 0.0)),
        # enumerate() is in the chunk; xrange() is not.
        (
            XRANGE, RANGE_CHUNK, RANGE_HEADERS,
            ((Claim("identifier", "xrange()"),), ("elements",), 6, 0.333),
        ),
        (
            XRANGE, RANGE_CHUNK_WITHOUT_ENUMERATE, RANGE_HEADERS,
            (
                (Claim("identifier", "xrange()"), Claim("identifier", "enumerate()")),
                ("elements",),
                6,
                0.5,
            ),
        ),
        (GOOD_RANGE, RANGE_CHUNK, RANGE_HEADERS, ((), (), 16, 0.0)),
    ],
    ids=["wasp", "good-appetite", "xrange", "xrange-and-enumerate", "good-range"],
)  # fmt: skip
def test_check_faithfulness_on_the_issue_summaries(
    summary: str, chunk: str, headers: list[str], expected: tuple[object, ...]
) -> None:
    assert _check(summary, chunk, headers) == expected


@pytest.mark.parametrize(
    ("summary", "chunk", "headers", "title", "claims"),
    [
        # Numbers: as written, or a part of a dotted one; section numbers count.
        ("Covers Python 3.11 and 3.12.", "New in Python 3.11.", [], "", ["3.12"]),
        ("Section 4.3 shows 10 values.", "range(10) yields 10 values", ["4.3. The range"], "", []),
        ("Released on April 30th, 2018.", "Released in 2018.", [], "", ["30th", "April"]),
        ("It holds 1,000 items, 50% of them.", "1000 items, half of them (50%)", [], "", []),
        # URLs: scheme, www. and a trailing slash aside.
        ("See https://www.mkdocs.org/ for more.", "Visit mkdocs.org today.", [], "", []),
        ("Hosted at example.com.", "Hosted on a server.", [], "", ["example.com"]),
        # Code identifiers: code spelling and inflection aside, each part of a dotted name.
        ("Uses `os.path.join` and my_function.", "os.path.join(a); def myFunction():", [], "", []),
        ("Call `str.format_map()` here.", "str.format() formats", [], "", ["str.format_map()"]),
        ("Edit mkdocs.yml or setup.py.", "The mkdocs.yml file.", [], "", ["setup.py"]),
        ("Run it with --strict or --dirty.", "mkdocs build --strict", [], "", ["--dirty"]),
        ("The `MyEmptyClass` class.", "class MyEmptyClass:\n    pass", [], "", []),
        ("Uses `for x in range(3)`.", "for item in items: ...", [], "", ["for x in range(3)"]),
        # Names: capitalised words inside a sentence; a sentence's first word is no name.
        ("Loops iterate. The Rust compiler checks.", "the compiler checks", [], "", ["Rust"]),
        ("The Rust compiler checks.", "the compiler checks", [], "Data Types - The Rust Book", []),
        ("Written by Guido van Rossum.", "Python is a language.", [], "", ["Guido", "Rossum"]),
        ("MkDocs builds sites.", "mkdocs builds sites", [], "", []),
    ],
)  # fmt: skip
def test_unsupported_claims(
    summary: str, chunk: str, headers: list[str], title: str, claims: list[str]
) -> None:
    check = check_faithfulness(summary, chunk, headers, title)
    assert [claim.text for claim in check.claims] == claims


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("Loops", "loop"), ("looping", "loop"), ("looped", "loop"), ("running", "run"),
        ("mapped", "map"), ("classes", "class"), ("dictionaries", "dictionary"),
        ("iterates", "iterat"), ("iterate", "iterat"), ("iteration", "iterat"),
        ("compiler", "compil"), ("compiles", "compil"), ("World's", "world"),
        ("is", "is"), ("status", "status"), ("Unix", "unix"),
    ],
)  # fmt: skip
def test_normalize_word(word: str, expected: str) -> None:
    assert normalize_word(word) == expected


def test_the_reference_compares_code_spelling() -> None:
    reference = Reference(
        "Use the built-in `len()` and my_empty_class.", ["4.3. The `range()` Function"]
    )
    assert [reference.has_word(word) for word in ("builtin", "LEN", "Functions", "Ranges")] == [
        True
    ] * 4
    assert [reference.has_name(name) for name in ("MyEmptyClass", "range()", "size()")] == [
        True, True, False,
    ]  # fmt: skip
    assert [reference.has_number(number) for number in ("4.3", "4", "3", "4.3.1")] == [
        True, True, True, False,
    ]  # fmt: skip


# -- the guard flags it ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("summary", "chunk", "headers", "thresholds", "expected"),
    [
        (WASP, APPETITE_CHUNK, APPETITE_HEADERS, DEFAULTS, "invented"),
        (XRANGE, RANGE_CHUNK, RANGE_HEADERS, DEFAULTS, "invented"),
        (GOOD_APPETITE, APPETITE_CHUNK, APPETITE_HEADERS, DEFAULTS, None),
        (GOOD_RANGE, RANGE_CHUNK, RANGE_HEADERS, DEFAULTS, None),
        # One claim is allowed when the bound is two; the share (0.333) still flags it,
        # unless its bound is higher.
        (XRANGE, RANGE_CHUNK, RANGE_HEADERS, QualityThresholds(max_invented_claims=2),
         "invented"),
        (XRANGE, RANGE_CHUNK, RANGE_HEADERS,
         QualityThresholds(max_invented_claims=2, max_unsupported_share=0.5), None),
        (WASP, APPETITE_CHUNK, APPETITE_HEADERS, QualityThresholds(max_invented_claims=0),
         "invented"),
        (XRANGE, RANGE_CHUNK, RANGE_HEADERS,
         QualityThresholds(max_invented_claims=0, max_unsupported_share=0.5), None),
        # Both measures off.
        (WASP, APPETITE_CHUNK, APPETITE_HEADERS,
         QualityThresholds(max_invented_claims=0, max_unsupported_share=0), None),
    ],
)  # fmt: skip
def test_detect_invented(
    summary: str,
    chunk: str,
    headers: list[str],
    thresholds: QualityThresholds,
    expected: str | None,
) -> None:
    assert detect_invented(summary, clean_for_prompt(chunk), headers, thresholds) == expected


def test_validate_summary_reports_invented_after_the_other_reasons() -> None:
    assert validate_summary(WASP, clean_for_prompt(APPETITE_CHUNK), APPETITE_HEADERS) == [
        "drift",
        "invented",
    ]
    assert validate_summary(GOOD_RANGE, clean_for_prompt(RANGE_CHUNK), RANGE_HEADERS) == []


def test_the_title_supports_what_a_summary_names() -> None:
    chunk = "Variables are immutable by default."
    summary = "In Rust, variables are immutable by default."
    headers = ["Variables and Mutability"]
    assert validate_summary(summary, chunk, headers) == ["invented"]
    title = "Variables and Mutability - The Rust Programming Language"
    assert validate_summary(summary, chunk, headers, title=title) == []


def test_the_thresholds_follow_the_environment() -> None:
    settings = Settings.from_env(
        {
            "SYNOPSIS_SUMMARY_MAX_INVENTED_CLAIMS": "3",
            "SYNOPSIS_SUMMARY_MAX_UNSUPPORTED_SHARE": "0.25",
        }
    )
    limits = QualityThresholds.from_settings(settings)
    assert (limits.max_invented_claims, limits.max_unsupported_share) == (3, 0.25)


# -- an invented summary is retried strictly, then replaced ------------------------------------

RANGE_REQUEST = SummaryRequest(headers=RANGE_HEADERS, content=RANGE_CHUNK, label="range")


def test_an_invented_summary_is_retried_and_the_faithful_retry_kept() -> None:
    summarizer = Summarizer(
        FakeListChatModel(responses=[XRANGE, GOOD_RANGE]),
        model_name="fake",
        guard=DEFAULTS,
        strict_retry=True,  # off by default since 2ed8f06
    )
    result = asyncio.run(summarizer.asummarize_checked(RANGE_REQUEST))
    assert result == SummaryResult(text=GOOD_RANGE, kind="llm", reason="invented")
    assert (summarizer.calls, summarizer.flagged, summarizer.retries_passed) == (
        2, {"invented": 1}, 1,
    )  # fmt: skip


def test_invented_twice_stores_the_extractive_summary_with_the_reason() -> None:
    summarizer = Summarizer(
        FakeListChatModel(responses=[XRANGE, XRANGE]), model_name="fake", guard=DEFAULTS
    )
    result = asyncio.run(summarizer.asummarize_checked(RANGE_REQUEST))
    view = clean_for_prompt(RANGE_CHUNK)
    assert result == SummaryResult(
        text=extractive_summary(view, RANGE_HEADERS), kind="extractive", reason="invented"
    )
    # The fallback itself is faithful: quoted from the chunk and its header path.
    assert check_faithfulness(result.text, view, RANGE_HEADERS).claims == ()


def test_the_strict_retry_asks_for_nothing_beyond_the_text() -> None:
    summarizer = Summarizer(FakeListChatModel(responses=["x"]), model_name="fake")
    system, _human = summarizer.messages(RANGE_REQUEST, strict=True)
    assert "no name, number, date or function it does not mention" in str(system.content)
