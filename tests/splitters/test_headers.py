from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document

from splitters.base.markdown_syntax import Header
from splitters.headers import DroppedSection, MarkdownHeaderSplitter, trim_blank_lines


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\n \t\nbody  \n\n  \n", "body  "),
        ("\u00a0\nx", "\u00a0\nx"),  # NBSP is content, not blank
        ("a\r\n\r\n", "a"),
        ("  \n\n", ""),
    ],
)
def test_trim_blank_lines(text: str, expected: str) -> None:
    start, end = trim_blank_lines(text, 0, len(text))
    assert text[start:end] == expected


README = """Intro line.

# Project

Install it:

```sh
# comment, not a header
pip install x
```

### Deep

Skipped a level.

## Usage

~~~~python
def f():
\treturn 1\u00a0\x20\x20
~~~~

# Table of Contents

- [Project](#project)

## Sub of TOC

dropped too

# Last

````markdown
```
# not a header
```
````
"""

EXPECTED_SECTIONS = [
    ((), "Intro line."),
    ((Header(1, "Project"),), "Install it:\n\n```sh\n# comment, not a header\npip install x\n```"),
    ((Header(1, "Project"), Header(3, "Deep")), "Skipped a level."),
    (
        (Header(1, "Project"), Header(2, "Usage")),
        "~~~~python\ndef f():\n\treturn 1\u00a0  \n~~~~",
    ),
    ((Header(1, "Last"),), "````markdown\n```\n# not a header\n```\n````"),
]


def test_sections_hierarchy_code_and_unwanted() -> None:
    splitter = MarkdownHeaderSplitter()
    sections = splitter.split_sections(README)
    assert [(s.headers, s.content) for s in sections] == EXPECTED_SECTIONS
    assert all(README[s.start : s.start + len(s.content)] == s.content for s in sections)
    assert [(d.headers, d.content) for d in splitter.dropped] == [
        ((Header(1, "Table of Contents"),), "- [Project](#project)"),
        ((Header(1, "Table of Contents"), Header(2, "Sub of TOC")), "dropped too"),
    ]


def test_hierarchy_resets_when_a_shallower_header_appears() -> None:
    text = "# A\na\n### C\nc\n## B\nb\n# D\nd"
    docs = MarkdownHeaderSplitter().create_documents([text])
    assert [(d.page_content, d.metadata) for d in docs] == [
        ("a", {"headers": ["A"], "Header 1": "A"}),
        ("c", {"headers": ["A", "C"], "Header 1": "A", "Header 3": "C"}),
        ("b", {"headers": ["A", "B"], "Header 1": "A", "Header 2": "B"}),
        ("d", {"headers": ["D"], "Header 1": "D"}),
    ]


def test_unclosed_fence_runs_to_the_end() -> None:
    text = "# A\n```\n# B\ncode\n\n# C\n"
    sections = MarkdownHeaderSplitter().split_sections(text)
    assert [(s.headers, s.content) for s in sections] == [
        ((Header(1, "A"),), "```\n# B\ncode\n\n# C"),
    ]


def test_indented_fence_hides_headers_but_four_spaces_do_not_open_one() -> None:
    text = "   ```\n# in code\n   ```\n    ```\n# real\nx"
    sections = MarkdownHeaderSplitter().split_sections(text)
    assert [(s.headers, s.content) for s in sections] == [
        ((), "   ```\n# in code\n   ```\n    ```"),
        ((Header(1, "real"),), "x"),
    ]


@pytest.mark.parametrize(
    ("unwanted", "expected"),
    [
        (("Navigation",), ["keep", "toc", "gone"]),
        (("table of contents", "NAVIGATION"), ["keep", "gone"]),
        ((), ["keep", "toc", "nav", "gone"]),
    ],
)
def test_unwanted_headers_are_configurable(unwanted: tuple[str, ...], expected: list[str]) -> None:
    text = "# Keep\nkeep\n# Table of Contents\ntoc\n# Navigation\nnav\n# Gone\ngone"
    assert MarkdownHeaderSplitter(unwanted_headers=unwanted).split_text(text) == expected


def test_dropped_sections_are_reported_through_the_callback() -> None:
    seen: list[DroppedSection] = []
    splitter = MarkdownHeaderSplitter(on_dropped=seen.append)
    splitter.split_text("# This Page\n- Report a Bug\n# Kept\nk")
    assert seen == [DroppedSection((Header(1, "This Page"),), "- Report a Bug", 12)]
    assert splitter.dropped == seen


def test_strip_headers_false_keeps_the_header_line() -> None:
    text = "# A\n\na\n\n## B ##\nb"
    splitter = MarkdownHeaderSplitter(strip_headers=False)
    assert splitter.split_text(text) == ["# A\n\na", "## B ##\nb"]


def test_empty_sections_are_skipped() -> None:
    assert MarkdownHeaderSplitter().split_text("# A\n\n## B\n\ntext") == ["text"]


def test_start_index_and_deep_copied_metadata() -> None:
    shared: dict[str, Any] = {"source": "s", "tags": ["x"]}
    text = "# A\nfirst\n# B\nsecond"
    docs = MarkdownHeaderSplitter(add_start_index=True).split_documents(
        [Document(page_content=text, metadata=shared)]
    )
    assert [(d.page_content, d.metadata["start_index"]) for d in docs] == [
        ("first", 4),
        ("second", 14),
    ]
    docs[0].metadata["tags"].append("changed")
    assert docs[1].metadata["tags"] == ["x"]
    assert shared == {"source": "s", "tags": ["x"]}
