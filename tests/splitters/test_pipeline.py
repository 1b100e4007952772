from __future__ import annotations

from collections.abc import Iterator

from langchain_core.documents import Document

from loaders import LoadOptions
from loaders.pdf import pdf_documents
from splitters import DroppedSection, Header, chunk_documents
from splitters.base.metadata import CHUNK_INDEX, PAGE_END, PAGE_START, TOKENS, page_marker
from splitters.encoding import count_tokens
from tests.loaders.pdfs import sample_pdf


def loaded(source: str, markdown: str) -> Document:
    return Document(
        page_content=markdown,
        metadata={
            "source": source,
            "title": source.upper(),
            "content_type": "text/markdown",
            "content_hash": "h",
            "extra": {"tags": ["a"]},
        },
    )


def words(n: int) -> str:
    return " ".join(["alpha"] * n) + "."


def test_chunk_metadata_and_per_document_index() -> None:
    doc_a = loaded("a.md", f"# A\n\n{words(30)}\n\n{words(30)}\n\n### C\n\n```py\n# c\n```")
    doc_b = loaded("b.md", "## B\n\nbee")
    chunks = list(chunk_documents([doc_a, doc_b], max_tokens=40))
    base = {"title": None, "content_type": "text/markdown", "content_hash": "h"}
    assert [
        (c.page_content, {k: v for k, v in c.metadata.items() if k not in base}) for c in chunks
    ] == [
        (
            words(30),
            {
                "source": "a.md",
                "extra": {"tags": ["a"]},
                "headers": ["A"],
                "Header 1": "A",
                "chunk_index": 0,
                "tokens": 31,
            },
        ),
        (
            words(30),
            {
                "source": "a.md",
                "extra": {"tags": ["a"]},
                "headers": ["A"],
                "Header 1": "A",
                "chunk_index": 1,
                "tokens": 31,
            },
        ),
        (
            "```py\n# c\n```",
            {
                "source": "a.md",
                "extra": {"tags": ["a"]},
                "headers": ["A", "C"],
                "Header 1": "A",
                "Header 3": "C",
                "chunk_index": 2,
                "tokens": count_tokens("```py\n# c\n```"),
            },
        ),
        (
            "bee",
            {
                "source": "b.md",
                "extra": {"tags": ["a"]},
                "headers": ["B"],
                "Header 2": "B",
                "chunk_index": 0,
                "tokens": 1,
            },
        ),
    ]
    assert all(c.metadata["title"] == c.metadata["source"].upper() for c in chunks)
    chunks[0].metadata["extra"]["tags"].append("changed")
    chunks[0].metadata["headers"].append("changed")
    assert chunks[1].metadata["extra"] == {"tags": ["a"]}
    assert chunks[1].metadata["headers"] == ["A"]
    assert doc_a.metadata["extra"] == {"tags": ["a"]}


def test_streams_one_document_at_a_time() -> None:
    pulled: list[str] = []

    def documents() -> Iterator[Document]:
        for name in ("one", "two"):
            pulled.append(name)
            yield loaded(name, f"# {name}\n\ntext")

    stream = chunk_documents(documents())
    first = next(stream)
    assert (first.metadata["source"], pulled) == ("one", ["one"])
    assert [c.metadata["source"] for c in stream] == ["two"]


def test_unwanted_sections_are_dropped_and_reported() -> None:
    reported: list[tuple[str, DroppedSection]] = []
    doc = loaded("p.html", "# Navigation\n\n- x\n\n# Body\n\nkept\n\n# Extra\n\ny")
    chunks = list(
        chunk_documents(
            [doc],
            unwanted_headers=("navigation", "Extra"),
            on_dropped=lambda d, s: reported.append((d.metadata["source"], s)),
        )
    )
    assert [c.page_content for c in chunks] == ["kept"]
    assert reported == [
        ("p.html", DroppedSection((Header(1, "Navigation"),), "- x", 14)),
        ("p.html", DroppedSection((Header(1, "Extra"),), "y", 42)),
    ]


def test_no_chunk_is_over_the_limit_not_even_from_one_long_line() -> None:
    reported: list[Document] = []
    doc = loaded("x.md", "one " * 50 + "\n\nshort")
    chunks = list(chunk_documents([doc], max_tokens=10, on_oversized=reported.append))
    assert chunks[-1].page_content.endswith("\n\nshort")
    assert max(c.metadata["tokens"] for c in chunks) <= 10
    assert reported == []


def test_pdf_chunks_carry_their_own_pages_and_no_page_markers() -> None:
    pdf = pdf_documents(sample_pdf(), source="m.pdf", fallback_title="m", options=LoadOptions())
    chunks = list(chunk_documents(pdf, max_tokens=50))

    assert [(c.metadata["headers"][-1], c.metadata[PAGE_START], c.metadata[PAGE_END])
            for c in chunks] == [
        ("Gadget Manual", 1, 1),
        ("Installation", 1, 1),
        ("Usage", 2, 2),
    ]  # fmt: skip
    assert [c.metadata[CHUNK_INDEX] for c in chunks] == [0, 1, 2]
    for chunk in chunks:
        assert "<!--" not in chunk.page_content
        assert chunk.metadata[TOKENS] == count_tokens(chunk.page_content)


def test_a_chunk_across_a_page_break_spans_both_pages() -> None:
    markdown = (
        f"{page_marker(4)}\n\n# Title\n\nFirst page text.\n\n{page_marker(5)}\n\n"
        f"Second page text.\n\n{page_marker(6)}\n\n## Next\n\nSixth page.\n"
    )
    document = Document(
        page_content=markdown, metadata={"source": "m.pdf", PAGE_START: 4, PAGE_END: 6}
    )
    chunks = list(chunk_documents([document]))

    assert [(c.page_content, c.metadata[PAGE_START], c.metadata[PAGE_END]) for c in chunks] == [
        ("First page text.\n\nSecond page text.", 4, 5),
        ("Sixth page.", 6, 6),
    ]


def test_page_markers_are_left_alone_outside_pdfs() -> None:
    document = Document(page_content=f"# A\n\ntext\n\n{page_marker(2)}\n", metadata={})
    [chunk] = chunk_documents([document])
    assert chunk.page_content == f"text\n\n{page_marker(2)}"
    assert PAGE_START not in chunk.metadata


def test_each_chunk_carries_the_anchor_of_its_innermost_anchored_header() -> None:
    markdown = (
        "# Guide {#guide}\n\nIntro.\n\n## Install {#install}\n\nRun it.\n\n"
        "### Without an id\n\nStill under install.\n\n## Plain\n\nNo anchor here.\n"
    )
    chunks = list(chunk_documents([loaded("g.md", markdown)], max_tokens=100))
    assert [(c.metadata["headers"], c.metadata.get("anchor")) for c in chunks] == [
        (["Guide"], "guide"),
        (["Guide", "Install"], "install"),
        (["Guide", "Install", "Without an id"], "install"),
        (["Guide", "Plain"], "guide"),
    ]
    assert all("{#" not in c.page_content for c in chunks)
