"""Reading a section or document back from its chunks (`service.query.reading`)."""

from __future__ import annotations

import pytest

from service.errors import SearchError, SourceNotFoundError
from service.index.records import SourceChunk
from service.query.injection import DATA_NOTE
from service.query.reading import find_section, read_page, split_location
from splitters.encoding import count_tokens

CODE = "```python\n>>> def f(x):\n...     return x  \t# trailing space kept\n```"


def _chunk(index: int, headers: list[str], content: str, anchor: str = "") -> SourceChunk:
    return SourceChunk(
        id=f"id-{index}",
        headers=headers,
        chunk_index=index,
        content=content,
        summary=None,
        summary_pending=False,
        anchor=anchor,
    )


CHUNKS = [
    _chunk(0, ["Tutorial"], "Intro.", "tutorial"),
    _chunk(1, ["Tutorial", "Functions"], "Functions, part one.", "functions"),
    _chunk(2, ["Tutorial", "Functions"], f"Part two:\n\n{CODE}", "functions"),
    _chunk(3, ["Tutorial", "Functions", "Defaults"], "Default values.", "defaults"),
    _chunk(4, ["Tutorial", "Classes"], "Classes.", "classes"),
]


def _more(offset: int) -> str:
    return f"More from offset={offset}."


@pytest.mark.parametrize(
    "name",
    ["functions", "#functions", "Tutorial > Functions", "Functions", " Tutorial >  Functions "],
)
def test_a_section_is_named_by_anchor_or_header_path_and_includes_its_subsections(
    name: str,
) -> None:
    path, chunks = find_section("t.md", CHUNKS, name)
    assert path == ["Tutorial", "Functions"]
    assert [c.chunk_index for c in chunks] == [1, 2, 3]


def test_a_section_that_is_not_there_names_the_sections_that_are() -> None:
    with pytest.raises(SourceNotFoundError) as caught:
        find_section("t.md", CHUNKS, "Loops")
    assert str(caught.value) == (
        "t.md has no section 'Loops'; its sections: Tutorial (#tutorial); "
        "Tutorial > Functions (#functions); Tutorial > Functions > Defaults (#defaults); "
        "Tutorial > Classes (#classes)"
    )


def test_a_section_is_reassembled_with_its_header_lines_and_code_byte_exact() -> None:
    _, chunks = find_section("t.md", CHUNKS, "functions")
    page = read_page(
        "t.md", "section", chunks, offset=0, max_tokens=1000, base_depth=1, continuation=_more
    )
    assert page.text == (
        f"Source: t.md\nThe whole section: chunks 0-2.\n{DATA_NOTE}\n\n"
        '<passage id="1" source="t.md" section="">\n'
        "## Functions\n\nFunctions, part one.\n\n"
        f"Part two:\n\n{CODE}\n\n"
        "### Defaults\n\nDefault values.\n"
        "</passage>"
    )
    assert (page.offset, page.count, page.total, page.next_offset) == (0, 3, 3, None)


def test_a_document_is_paged_by_the_budget_and_says_where_to_go_on() -> None:
    big = [
        _chunk(i, ["Doc", f"Part {i}"], " ".join(f"w{i}x{j}" for j in range(150))) for i in range(6)
    ]
    pages = []
    offset: int | None = 0
    while offset is not None:
        page = read_page("d.md", "document", big, offset=offset, max_tokens=700, continuation=_more)
        assert count_tokens(page.text) <= 700
        pages.append(page)
        offset = page.next_offset
    assert [(p.offset, p.count) for p in pages] == [(0, 1), (1, 1), (2, 1), (3, 1), (4, 1), (5, 1)]
    assert pages[0].text.endswith("More from offset=1.")
    assert pages[0].text.startswith(
        f"Source: d.md\nChunks 0-0 of the document's 0-5.\n{DATA_NOTE}\n\n"
        '<passage id="1" source="d.md" section="">\n# Doc\n\n## Part 0'
    )
    assert pages[0].text.endswith("\n</passage>\n\nMore from offset=1.")
    # A later page starts with its whole header path.
    assert '<passage id="1" source="d.md" section="">\n# Doc\n\n## Part 3\n\n' in pages[3].text
    assert not pages[-1].text.endswith("More from offset=6.")


@pytest.mark.parametrize(
    ("offset", "max_tokens", "message"),
    [
        (5, 1000, r"offset is 5, but the document has 5 chunks \(0-4\)"),
        (-1, 1000, "offset must be 0 or more, not -1"),
        (0, 100, "max_tokens must be between 500 and 100000, not 100"),
    ],
)
def test_a_page_that_cannot_be_given_is_refused(offset: int, max_tokens: int, message: str) -> None:
    with pytest.raises(SearchError, match=message):
        read_page(
            "t.md", "document", CHUNKS, offset=offset, max_tokens=max_tokens, continuation=_more
        )


def test_a_chunk_larger_than_the_budget_names_the_budget_it_needs() -> None:
    huge = [_chunk(0, ["Doc"], " ".join(f"w{j}" for j in range(800)))]
    with pytest.raises(SearchError, match=r"needs 1,\d{3} tokens with its headers; ask with"):
        read_page("d.md", "document", huge, offset=0, max_tokens=600, continuation=_more)


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("https://x.org/a.html#sec-1", ("https://x.org/a.html", "sec-1")),
        ("/docs/a.md", ("/docs/a.md", "")),
        ("a.md#", ("a.md#", "")),
    ],
)
def test_a_location_splits_into_source_and_anchor(location: str, expected: tuple[str, str]) -> None:
    assert split_location(location) == expected
