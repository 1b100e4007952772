"""Invariants of the splitters over generated Markdown (hypothesis)."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from splitters.base.markdown_syntax import fences_balanced, opening_fence
from splitters.encoding import count_tokens
from splitters.headers import MarkdownHeaderSplitter, trim_blank_lines
from splitters.tokens import Chunk, MarkdownTokenSplitter

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)
CODE_LINE = st.text(alphabet="ab #`~\t\u00a0=()x:", max_size=30)


@dataclass(frozen=True)
class HeaderLine:
    level: int
    text: str


@st.composite
def paragraphs(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.lists(WORD, min_size=1, max_size=14), min_size=1, max_size=3))
    text = "\n".join(" ".join(line) for line in lines)
    return text + ":" if draw(st.booleans()) else text


@st.composite
def lists(draw: st.DrawFn) -> str:
    items = draw(st.lists(st.lists(WORD, min_size=1, max_size=8), min_size=1, max_size=4))
    return "\n".join("- " + " ".join(item) for item in items)


@st.composite
def code_blocks(draw: st.DrawFn, *, closed: bool = True) -> str:
    char = draw(st.sampled_from("`~"))
    opener = char * draw(st.integers(3, 5)) + draw(st.sampled_from(["", "python", " sh", "c++"]))
    fence = opening_fence(opener)
    assert fence is not None
    body = [
        "x" + line if fence.is_closed_by(line) else line
        for line in draw(st.lists(CODE_LINE, max_size=12))
    ]
    return "\n".join([opener, *body, *([fence.marker] if closed else [])])


ELEMENT = st.one_of(
    paragraphs(),
    lists(),
    code_blocks(),
    st.builds(HeaderLine, st.integers(1, 6), st.lists(WORD, min_size=1, max_size=4).map(" ".join)),
)


@st.composite
def documents(draw: st.DrawFn) -> list[str | HeaderLine]:
    elements: list[str | HeaderLine] = draw(st.lists(ELEMENT, min_size=1, max_size=25))
    if draw(st.booleans()):
        elements.append(draw(code_blocks(closed=False)))
    return elements


def render(elements: list[str | HeaderLine]) -> str:
    return "\n\n".join(
        "#" * e.level + " " + e.text if isinstance(e, HeaderLine) else e for e in elements
    )


def expected_sections(elements: list[str | HeaderLine]) -> list[tuple[list[str], str]]:
    """The reference model: header path and content of each non-empty section."""
    result: list[tuple[list[str], str]] = []
    stack: list[HeaderLine] = []
    body: list[str] = []

    def close() -> None:
        text = "\n\n".join(body)
        start, end = trim_blank_lines(text, 0, len(text))
        if start < end:
            result.append(([h.text for h in stack], text[start:end]))

    for element in elements:
        if isinstance(element, HeaderLine):
            close()
            body = []
            stack = [h for h in stack if h.level < element.level] + [element]
        else:
            body.append(element)
    close()
    return result


def strip_refencing(section: str, chunk: Chunk) -> str:
    """The part of `chunk` that is a slice of `section` at `chunk.start`."""
    lines = chunk.content.split("\n")
    candidates = [(0, len(lines)), (0, len(lines) - 1), (1, len(lines)), (1, len(lines) - 1)]
    matches = [
        (lo, hi, "\n".join(lines[lo:hi]))
        for lo, hi in candidates
        if lo <= hi and section.startswith("\n".join(lines[lo:hi]), chunk.start)
    ]
    if matches:
        # The longest match; dropped lines must be the re-fencing.
        lo, hi, part = max(matches, key=lambda m: len(m[2]))
        assert lo == 0 or opening_fence(lines[0]) is not None
        assert hi == len(lines) or set(lines[-1]) <= {"`", "~", " "}
        return part
    raise AssertionError(f"chunk is not a (re-fenced) slice of its section: {chunk!r}")


@settings(max_examples=200, deadline=None)
@given(elements=documents(), max_tokens=st.integers(15, 80))
def test_split_invariants(elements: list[str | HeaderLine], max_tokens: int) -> None:
    text = render(elements)
    sections = MarkdownHeaderSplitter(unwanted_headers=()).split_sections(text)

    # Header metadata equals the enclosing headers; sections are the model's.
    assert [([h.text for h in s.headers], s.content) for s in sections] == expected_sections(
        elements
    )

    splitter = MarkdownTokenSplitter(max_tokens=max_tokens)
    for section in sections:
        chunks = splitter.split_chunks(section.content)
        assert chunks == MarkdownTokenSplitter(max_tokens=max_tokens).split_chunks(section.content)
        covered = bytearray(len(section.content))
        for chunk in chunks:
            assert chunk.content.strip()
            assert fences_balanced(chunk.content)
            assert chunk.tokens == count_tokens(chunk.content)
            part = strip_refencing(section.content, chunk)
            covered[chunk.start : chunk.start + len(part)] = b"\1" * len(part)
            if chunk.tokens > max_tokens:
                code_lines = [line for line in part.split("\n") if opening_fence(line) is None]
                assert len(code_lines) == 1, chunk
        # No content lost: every non-blank character lies in some chunk.
        lost = [
            ch
            for ch, hit in zip(section.content, covered, strict=True)
            if not hit and ch not in " \t\r\n"
        ]
        assert lost == []
