from __future__ import annotations

from pathlib import Path

import pytest

from loaders import load
from loaders.documents import CONTENT_HASH, CONTENT_TYPE, MARKDOWN, SOURCE, TEXT, TITLE
from loaders.markdown import first_h1

FIXTURES = Path(__file__).parent / "fixtures"


def test_readme_is_loaded_unchanged() -> None:
    path = FIXTURES / "readme.md"
    [doc] = load([str(path)])
    assert doc.page_content == path.read_bytes().decode("utf-8")
    assert doc.metadata[SOURCE] == str(path.resolve())
    assert doc.metadata[TITLE] == "Gadget\u00a0CLI"
    assert doc.metadata[CONTENT_TYPE] == MARKDOWN
    assert len(doc.metadata[CONTENT_HASH]) == 64


@pytest.mark.parametrize(
    ("markdown", "title"),
    [
        ("# Title\n", "Title"),
        ("intro\n\n  # Indented title #\n", "Indented title"),
        ("```\n# comment\n```\n# Real\n", "Real"),
        ("~~~~\n~~~\n# inside\n~~~~\n", None),
        ("```\n# unclosed fence\n", None),
        ("## Only H2\n", None),
        ("#hashtag\n", None),
        ("    # indented code\n", None),
    ],
)
def test_first_h1_ignores_code(markdown: str, title: str | None) -> None:
    assert first_h1(markdown) == title


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("notes.md", b"no header\r\nline 2\r\n", ("no header\nline 2\n", "notes", MARKDOWN)),
        ("guide.markdown", b"\xef\xbb\xbf# Guide\n", ("# Guide\n", "Guide", MARKDOWN)),
        ("plain.txt", b"# not a title\rold mac\r", ("# not a title\nold mac\n", "plain", TEXT)),
    ],
)
def test_markdown_and_text_files(
    tmp_path: Path, name: str, data: bytes, expected: tuple[str, str, str]
) -> None:
    (tmp_path / name).write_bytes(data)
    [doc] = load([str(tmp_path / name)])
    assert (doc.page_content, doc.metadata[TITLE], doc.metadata[CONTENT_TYPE]) == expected
