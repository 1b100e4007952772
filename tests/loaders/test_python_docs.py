"""The real corpus: every page of the Python 3.11 HTML docs (Debian's python3.11-doc)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from lxml import html as lxml_html

from loaders import load
from loaders.documents import CONTENT_HASH, CONTENT_TYPE, HTML, SOURCE, TITLE, content_hash
from splitters.base.markdown_syntax import iter_code_blocks

if TYPE_CHECKING:
    from tests.support.corpus import LoadedCorpus

CORPUS = Path("/usr/share/doc/python3.11/html")
PAGES = 530

pytestmark = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"{CORPUS} is absent (install Debian's python3.11-doc)"
)

# Text found only in the navigation, sidebars and footer of a Sphinx page.
NAVIGATION = [
    "Previous topic",
    "Next topic",
    "Report a Bug",
    "Show Source",
    "Quick search",
    "is a non-profit corporation",
    "Please donate",
    "Created using",
    "This page is licensed under the Python Software Foundation License",
    "Hide navigation sidebar",
    "¶",
]
_FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n(.*)^\1[ \t]*\n?\Z", re.DOTALL | re.MULTILINE)


def _fenced_contents(markdown: str) -> list[str]:
    contents = []
    for block in iter_code_blocks(markdown):
        piece = markdown[block.start : block.end]
        match = _FENCE.match(piece)
        assert match is not None, piece
        contents.append(match.group(2))
    return contents


@pytest.mark.corpus
def test_every_page_loads_with_byte_exact_code(python_docs: LoadedCorpus) -> None:
    errors = python_docs.errors  # of `load([str(CORPUS)])`, run once per session
    docs = python_docs.documents
    print(f"loaded {len(docs)} pages in {python_docs.seconds:.1f} s")
    assert errors == []
    assert len(docs) == PAGES
    sources = [doc.metadata[SOURCE] for doc in docs]
    assert sources == sorted(sources, key=lambda s: Path(s).relative_to(CORPUS).parts)

    missing: list[tuple[str, str]] = []
    for doc in docs:
        meta = doc.metadata
        assert meta[TITLE], meta
        assert meta[CONTENT_TYPE] == HTML
        assert meta[CONTENT_HASH] == content_hash(doc.page_content)
        for text in NAVIGATION:
            assert text not in doc.page_content, (meta[SOURCE], text)
        html = Path(meta[SOURCE]).read_text(encoding="utf-8")
        fenced = _fenced_contents(doc.page_content)
        # lxml's parse of the page, not the loader's conversion: every `<pre>`'s text.
        for pre in lxml_html.document_fromstring(html).iter("pre"):
            code = pre.text_content()
            code = code if code.endswith("\n") else code + "\n"
            if code not in fenced:
                missing.append((meta[SOURCE], code[:60]))
    assert missing == []


@pytest.mark.parametrize(
    ("page", "title", "expected"),
    [
        (
            "tutorial/controlflow.html",
            "4. More Control Flow Tools",
            "## 4.1. `if` Statements {#if-statements}\n\nPerhaps the most well-known statement",
        ),
        (
            "library/functions.html",
            "Built-in Functions",
            "```python\nclass C:\n    @classmethod\n    def f(cls, arg1, arg2): ...\n```\n",
        ),
    ],
)
def test_known_pages(page: str, title: str, expected: str) -> None:
    [doc] = load([str(CORPUS / page)])
    assert doc.metadata[TITLE] == title
    assert expected in doc.page_content
