"""`chunk_documents(pack_small_sections=True)`: adjacent small sections share a chunk."""

from __future__ import annotations

from langchain_core.documents import Document

from splitters import chunk_documents
from splitters.encoding import count_tokens

DOC = """# Guide

Intro of the guide.

## Install

### With pip

Run pip.

### With apt

Run apt.

## Use

Use it.

# Reference

Small reference text.
"""


def chunks(markdown: str, **options: object) -> list[tuple[list[str], str]]:
    doc = Document(page_content=markdown, metadata={"source": "s"})
    return [
        (c.metadata["headers"], c.page_content)
        for c in chunk_documents([doc], **options)  # type: ignore[arg-type]
    ]


def test_off_by_default() -> None:
    assert len(chunks(DOC)) == 5


def test_small_sections_under_one_parent_are_packed_with_their_headers_in_the_text() -> None:
    assert chunks(DOC, pack_small_sections=True) == [
        (
            ["Guide"],
            "Intro of the guide.\n\n## Install\n\n### With pip\n\nRun pip.\n\n"
            "### With apt\n\nRun apt.\n\n## Use\n\nUse it.",
        ),
        (["Reference"], "Small reference text."),  # never across top-level headers
    ]


def test_a_run_stays_under_the_first_sections_parent() -> None:
    text = "# A\n\n## B\n\n### C\n\nc text.\n\n### D\n\nd text.\n\n## E\n\ne text.\n"
    assert chunks(text, pack_small_sections=True) == [
        (["A", "B"], "### C\n\nc text.\n\n### D\n\nd text."),
        (["A", "E"], "e text."),
    ]


def test_large_sections_and_the_token_budget_end_a_run() -> None:
    big = " ".join(["word"] * 120)
    text = f"# A\n\n## B\n\nb.\n\n## C\n\n{big}\n\n## D\n\nd.\n\n## E\n\ne.\n"
    packed = chunks(text, pack_small_sections=True)
    assert [headers for headers, _ in packed] == [["A", "B"], ["A", "C"], ["A"]]
    assert packed[2][1] == "## D\n\nd.\n\n## E\n\ne."
    tight = chunks(text, pack_small_sections=True, max_tokens=130)
    assert all(count_tokens(content) <= 130 for _, content in tight)
    few = chunks("# A\n\n## B\n\nb.\n\n## C\n\nc.\n", pack_small_sections=True, max_tokens=6)
    assert [content for _, content in few] == ["b.", "c."]  # packing would exceed 6 tokens


def test_min_section_tokens_decides_what_is_small() -> None:
    text = "# A\n\n## B\n\nb text here.\n\n## C\n\nc text here.\n"
    assert len(chunks(text, pack_small_sections=True, min_section_tokens=3)) == 2
    assert len(chunks(text, pack_small_sections=True, min_section_tokens=10)) == 1
