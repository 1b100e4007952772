"""`splitters.base.markdown_syntax`: fences, prose/code segments and ATX headers."""

from __future__ import annotations

import pytest

from splitters.base.markdown_syntax import (
    Fence,
    Header,
    fence_block,
    fences_balanced,
    iter_atx_headers,
    iter_code_blocks,
    iter_segments,
    opening_fence,
    parse_atx_header,
)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("```", Fence("`", 3, 0, "")),
        ("```python", Fence("`", 3, 0, "python")),
        ("````  python3 {.x} ", Fence("`", 4, 0, "python3 {.x}")),
        ("   ~~~", Fence("~", 3, 3, "")),
        ("~~~~~ sh`weird`", Fence("~", 5, 0, "sh`weird`")),  # tildes allow backticks
        ("```a`b", None),  # backtick info string may not contain a backtick
        ("```inline```", None),
        ("    ```", None),  # four spaces: indented code, not a fence
        ("``", None),
        ("\t```", None),
        ("```python\r", Fence("`", 3, 0, "python")),
        ("text ```", None),
    ],
)
def test_opening_fence(line: str, expected: Fence | None) -> None:
    assert opening_fence(line) == expected


@pytest.mark.parametrize(
    ("fence", "line", "closes"),
    [
        (Fence("`", 3, 0, "py"), "```", True),
        (Fence("`", 3, 0, "py"), "   ````  \t", True),
        (Fence("`", 4, 0, ""), "```", False),  # shorter than the opener
        (Fence("`", 3, 0, ""), "~~~", False),  # other character
        (Fence("~", 3, 0, ""), "~~~~", True),
        (Fence("`", 3, 0, ""), "```python", False),  # a closer has no info string
        (Fence("`", 3, 0, ""), "    ```", False),
        (Fence("`", 3, 0, ""), "```\r", True),
    ],
)
def test_fence_closed_by(fence: Fence, line: str, closes: bool) -> None:
    assert fence.is_closed_by(line) is closes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\n```\nx\n```\nb", [(2, 11, True)]),
        ("````md\n```\ninner\n```\n````\n", [(0, 25, True)]),
        ("~~~\n```\n~~~", [(0, 11, True)]),
        ("x\n```py\nopen\n", [(2, 12, False)]),
        ("```\na\n```\n~~~\nb\n~~~", [(0, 9, True), (10, 19, True)]),
    ],
)
def test_iter_code_blocks(text: str, expected: list[tuple[int, int, bool]]) -> None:
    assert [(b.start, b.end, b.closed) for b in iter_code_blocks(text)] == expected


@pytest.mark.parametrize(
    ("text", "balanced"),
    [
        ("```\nx\n```", True),
        ("```\nx\n", False),
        ("````\n```\n", False),
        ("no code at all", True),
        ("```inline``` text", True),
    ],
)
def test_fences_balanced(text: str, balanced: bool) -> None:
    assert fences_balanced(text) is balanced


# -- prose and code segments ----------------------------------------------------------

# What the HTML loader emits for a <pre> whose code holds a ``` line: a longer fence.
FOUR_BACKTICKS = (
    "See [the docs](https://example.org/docs).\n"
    "\n"
    "````python\n"
    'doc = """\n'
    "```\n"
    "[not a link](x) <b>kept</b>\n"
    '"""\n'
    "````\n"
    "\n"
    "After [this](y)."
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            FOUR_BACKTICKS,
            [
                (False, "See [the docs](https://example.org/docs).\n\n"),
                (
                    True,
                    '````python\ndoc = """\n```\n[not a link](x) <b>kept</b>\n"""\n````',
                ),
                (False, "\n\nAfter [this](y)."),
            ],
        ),
        ("", []),
        ("just prose\n", [(False, "just prose\n")]),
        ("a\n```\nx\n```\nb", [(False, "a\n"), (True, "```\nx\n```"), (False, "\nb")]),
        # Tildes: a backtick line does not close a tilde fence, nor the other way round.
        ("~~~\n```\n~~~\nz", [(True, "~~~\n```\n~~~"), (False, "\nz")]),
        ("```\n~~~\n```", [(True, "```\n~~~\n```")]),
        # A longer closer closes; a closer with an info string does not.
        ("```\nx\n`````\ny", [(True, "```\nx\n`````"), (False, "\ny")]),
        ("```\nx\n``` py\ny\n```", [(True, "```\nx\n``` py\ny\n```")]),
        # Up to three spaces of indentation; four make indented code, not a fence.
        ("   ```\nx\n   ```", [(True, "   ```\nx\n   ```")]),
        ("    ```\nx\n    ```", [(False, "    ```\nx\n    ```")]),
        # Inline code is not a fence; an unclosed fence runs to the end.
        ("```x``` y\n", [(False, "```x``` y\n")]),
        ("text\n```\n[a](b)\n", [(False, "text\n"), (True, "```\n[a](b)"), (False, "\n")]),
        ("```\r\nx\r\n```\r\n", [(True, "```\r\nx\r\n```\r"), (False, "\n")]),
    ],
)
def test_iter_segments(text: str, expected: list[tuple[bool, str]]) -> None:
    segments = list(iter_segments(text))
    assert [(s.is_code, s.text) for s in segments] == expected
    assert "".join(s.text for s in segments) == text
    assert all(text[s.start : s.start + len(s.text)] == s.text for s in segments)


def test_code_segments_carry_their_fence() -> None:
    [_, code, _] = iter_segments(FOUR_BACKTICKS)
    assert code.fence == Fence("`", 4, 0, "python")


# -- writing a fence ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "language", "expected"),
    [
        ("x = 1\n", "", "```\nx = 1\n```"),
        ("x = 1", "python", "```python\nx = 1\n```"),
        ('s = """\n```\n"""\n', "python", '````python\ns = """\n```\n"""\n````'),
        ("a ````` b", "", "``````\na ````` b\n``````"),
    ],
)
def test_fence_block(code: str, language: str, expected: str) -> None:
    fenced = fence_block(code, language)
    assert fenced == expected
    [segment] = iter_segments(fenced)  # no line of the code closes the fence
    assert segment.is_code
    assert segment.fence is not None
    assert segment.fence.info == language


# -- ATX headers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("# Title", Header(1, "Title")),
        ("###### Six", Header(6, "Six")),
        ("####### Seven", None),
        ("   ## Indented", Header(2, "Indented")),
        ("    # Four spaces", None),
        ("#hashtag", None),
        ("## Closing ##  ", Header(2, "Closing")),
        ("# Keeps#", Header(1, "Keeps#")),
        ("#", Header(1, "")),
        ("#\tTab", Header(1, "Tab")),
        ("## Title\r", Header(2, "Title")),
    ],
)
def test_parse_atx_header(line: str, expected: Header | None) -> None:
    assert parse_atx_header(line) == expected


def test_iter_atx_headers_skips_code() -> None:
    text = "# One\n```\n# comment\n```\n## Two ##\n~~~\n# unclosed\n"
    assert list(iter_atx_headers(text)) == [(0, Header(1, "One")), (24, Header(2, "Two"))]


@pytest.mark.parametrize(
    ("line", "header"),
    [
        (
            "## 4.3. The `range()` Function {#the-range-function}",
            Header(2, "4.3. The `range()` Function", "the-range-function"),
        ),
        ("## A {#x .class key=v}", Header(2, "A", "x")),
        ("### Closed ### {#c}", Header(3, "Closed", "c")),
        ("## Glued{#not}", Header(2, "Glued{#not}")),  # an attribute follows a space
        ("## Braces {not an id}", Header(2, "Braces {not an id}")),
        ("# Plain", Header(1, "Plain")),
    ],
)
def test_a_header_id_attribute_is_its_anchor(line: str, header: Header) -> None:
    assert parse_atx_header(line) == header
