from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document

from service.errors import SplitterError
from splitters.encoding import count_tokens
from splitters.tokens import Chunk, MarkdownTokenSplitter


def para(i: int) -> str:
    """A one-line paragraph of 11 tokens."""
    return f"p{i}" + " alpha" * 8 + "."


def test_paragraph_helper_has_eleven_tokens() -> None:
    assert [count_tokens(para(i)) for i in range(10)] == [11] * 10


def test_balanced_sizes_instead_of_full_full_remainder() -> None:
    # Greedy packing at 50 tokens gives 4 + 4 + 1 paragraphs; we give 3 + 3 + 3.
    paragraphs = [para(i) for i in range(9)]
    text = "\n\n".join(paragraphs)
    chunks = MarkdownTokenSplitter(max_tokens=50).split_text(text)
    assert chunks == [
        "\n\n".join(paragraphs[0:3]),
        "\n\n".join(paragraphs[3:6]),
        "\n\n".join(paragraphs[6:9]),
    ]


def test_a_text_that_fits_is_one_exact_chunk() -> None:
    text = "\n\n  \nfirst\n\n\n   second  \n\n"
    assert MarkdownTokenSplitter().split_chunks(text) == [
        Chunk("first\n\n\n   second  ", 5, count_tokens("first\n\n\n   second  "))
    ]


@pytest.mark.parametrize(
    ("lead", "expected"),
    [
        # Ending with ":" it stays with the code (and the code with the text after it).
        (
            "Here is how:",
            [para(0), "Here is how:\n\n```py\nx = 1\n```\n\nAfter."],
        ),
        # Without ":" the most even cut wins.
        (
            "Here is how.",
            [f"{para(0)}\n\nHere is how.", "```py\nx = 1\n```\n\nAfter."],
        ),
    ],
)
def test_colon_paragraph_stays_with_what_follows(lead: str, expected: list[str]) -> None:
    text = f"{para(0)}\n\n{lead}\n\n```py\nx = 1\n```\n\nAfter."
    assert MarkdownTokenSplitter(max_tokens=25).split_text(text) == expected


@pytest.mark.parametrize(
    ("keep", "expected"),
    [
        (True, [para(0), f"```py\nx = 1\n```\n\n{para(1)}"]),
        (False, [f"{para(0)}\n\n```py\nx = 1\n```", para(1)]),
    ],
)
def test_text_after_code_stays_with_it(keep: bool, expected: list[str]) -> None:
    text = f"{para(0)}\n\n```py\nx = 1\n```\n\n{para(1)}"
    splitter = MarkdownTokenSplitter(max_tokens=25, keep_text_after_code=keep)
    assert splitter.split_text(text) == expected


def test_oversized_code_block_is_refenced_at_line_boundaries() -> None:
    lines = [f"print({i})" for i in range(12)]
    text = "Run this:\n\n```python\n" + "\n".join(lines) + "\n```\n\nDone."
    chunks = MarkdownTokenSplitter(max_tokens=30).split_chunks(text)

    def piece(part: list[str]) -> str:
        return "```python\n" + "\n".join(part) + "\n```"

    assert [c.content for c in chunks] == [
        "Run this:\n\n" + piece(lines[0:4]),
        piece(lines[4:8]),
        piece(lines[8:12]) + "\n\nDone.",
    ]
    assert all(c.tokens == count_tokens(c.content) <= 30 for c in chunks)
    assert [c.start for c in chunks] == [0, text.index("print(4)"), text.index("print(8)")]


def test_refenced_pieces_keep_the_fence_and_whitespace_byte_exact() -> None:
    body = [f"\tx{i} = '\u00a0'  " for i in range(8)]
    text = "~~~~ python title='a b'\n" + "\n".join(body) + "\n~~~~~"
    chunks = MarkdownTokenSplitter(max_tokens=40).split_text(text)

    def piece(part: list[str]) -> str:
        return "~~~~ python title='a b'\n" + "\n".join(part) + "\n~~~~~"

    assert chunks == [piece(body[0:3]), piece(body[3:6]), piece(body[6:8])]


def test_nested_fences_stay_whole() -> None:
    code = "````markdown\n```python\n# not a header\n\n\nx = 1\n```\n````"
    text = f"{para(0)}\n\n{code}\n\n{para(1)}"
    chunks = MarkdownTokenSplitter(max_tokens=30, keep_text_after_code=False).split_text(text)
    assert chunks == [para(0), code, para(1)]


def test_unclosed_fence_is_closed_in_the_output() -> None:
    text = "Text.\n\n~~~py\nx = 1\n\n"
    assert MarkdownTokenSplitter().split_text(text) == ["Text.\n\n~~~py\nx = 1\n~~~"]


def test_an_overlong_line_is_cut_after_spaces_and_its_pieces_rejoin_it() -> None:
    long_line = "word " * 60 + "end"
    text = f"{para(0)}\n\n{long_line}\n\n{para(1)}"
    reported: list[Chunk] = []
    splitter = MarkdownTokenSplitter(max_tokens=20, on_oversized=reported.append)
    chunks = splitter.split_chunks(text)
    assert chunks[0].content == para(0)
    assert chunks[-1].content == para(1)
    pieces = [c.content for c in chunks[1:-1]]
    assert "".join(pieces) == long_line
    assert all(piece.endswith(" ") for piece in pieces[:-1])  # cut after a space
    assert max(c.tokens for c in chunks) <= 20
    assert len(pieces) == 4  # 121 tokens in pieces of at most 20, balanced by the packer
    assert reported == []


def test_a_line_without_spaces_is_cut_at_token_boundaries() -> None:
    line = "x" * 5000
    chunks = MarkdownTokenSplitter(max_tokens=50).split_chunks(line)
    assert "".join(c.content for c in chunks) == line
    assert max(c.tokens for c in chunks) <= 50
    assert not any(c.oversized for c in chunks)


def test_a_code_block_of_one_overlong_line_is_cut_into_fenced_pieces() -> None:
    code = "```js\n" + "a=1;" * 400 + "\n```"
    chunks = MarkdownTokenSplitter(max_tokens=100).split_text(code)
    assert len(chunks) > 1
    assert all(c.startswith("```js\n") and c.endswith("\n```") for c in chunks)
    assert "".join(c[len("```js\n") : -len("\n```")] for c in chunks) == "a=1;" * 400


def test_a_long_multiline_block_is_cut_at_lines() -> None:
    items = [f"- item {i} alpha alpha" for i in range(10)]
    text = "\n".join(items)
    chunks = MarkdownTokenSplitter(max_tokens=40).split_text(text)
    assert chunks == ["\n".join(items[0:5]), "\n".join(items[5:10])]


def test_overlap_repeats_whole_blocks() -> None:
    paragraphs = [para(i) for i in range(4)]
    text = "\n\n".join(paragraphs)
    chunks = MarkdownTokenSplitter(max_tokens=30, overlap_tokens=12).split_chunks(text)
    assert [c.content for c in chunks] == [
        paragraphs[0],
        f"{paragraphs[0]}\n\n{paragraphs[1]}",
        f"{paragraphs[1]}\n\n{paragraphs[2]}",
        f"{paragraphs[2]}\n\n{paragraphs[3]}",
    ]
    assert [c.start for c in chunks] == [0, 0, 53, 106]


def test_overlap_never_repeats_a_block_larger_than_the_overlap() -> None:
    paragraphs = [para(i) for i in range(3)]
    text = "\n\n".join(paragraphs)
    chunks = MarkdownTokenSplitter(max_tokens=30, overlap_tokens=10).split_text(text)
    assert chunks == paragraphs


def test_start_index_and_deep_copied_metadata() -> None:
    paragraphs = [para(i) for i in range(3)]
    text = "\n\n\n".join(paragraphs)
    shared: dict[str, Any] = {"source": "s", "nested": {"k": [1]}}
    splitter = MarkdownTokenSplitter(max_tokens=12, add_start_index=True)
    docs = splitter.split_documents([Document(page_content=text, metadata=shared)])
    assert [(d.page_content, d.metadata["start_index"]) for d in docs] == [
        (paragraphs[0], 0),
        (paragraphs[1], 54),
        (paragraphs[2], 108),
    ]
    docs[0].metadata["nested"]["k"].append(2)
    assert docs[1].metadata["nested"] == {"k": [1]}
    assert shared["nested"] == {"k": [1]}


def test_header_lines_stay_with_their_content() -> None:
    text = f"{para(0)}\n\n## Title\n\n{para(1)}"
    assert MarkdownTokenSplitter(max_tokens=20).split_text(text) == [
        para(0),
        f"## Title\n\n{para(1)}",
    ]


def test_deterministic() -> None:
    text = "\n\n".join([para(i) for i in range(20)] + ["```\n" + "x\n" * 50 + "```"])
    splitter = MarkdownTokenSplitter(max_tokens=37)
    assert splitter.split_chunks(text) == MarkdownTokenSplitter(max_tokens=37).split_chunks(text)


def test_empty_text_gives_no_chunks() -> None:
    assert MarkdownTokenSplitter().split_text(" \n\n\t\n") == []


@pytest.mark.parametrize(("max_tokens", "overlap"), [(0, 0), (10, 10), (10, -1)])
def test_invalid_limits_raise_splitter_error(max_tokens: int, overlap: int) -> None:
    with pytest.raises(SplitterError):
        MarkdownTokenSplitter(max_tokens=max_tokens, overlap_tokens=overlap)
