"""Documentation generators: the committed fixture pages, and the Debian packages they
came from, whose other pages are the held-out set.

Fixtures live in `fixtures/generators/<generator>/` (one or two small real pages each)
with `expected.json`: per page, its chunk count and the header path of every chunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import lxml.html

from loaders.files import iter_files
from splitters.base.markdown_syntax import iter_code_blocks

FIXTURES = Path(__file__).parent / "fixtures" / "generators"


@dataclass(frozen=True)
class Generator:
    """A generator, the Debian package whose HTML we took, and where it installs it."""

    name: str
    package: str
    root: Path


_DOC = Path("/usr/share/doc")
GENERATORS = (
    Generator("mkdocs", "mkdocs-doc", _DOC / "mkdocs/html"),
    Generator("asciidoc", "git-doc", _DOC / "git/html"),
    Generator("javadoc", "libcommons-lang3-java-doc", _DOC / "libcommons-lang3-java/api"),
    Generator("rustdoc", "rust-doc", _DOC / "rust-doc/html/std"),
    Generator("node", "nodejs-doc", _DOC / "nodejs/api"),
    Generator("doxygen", "lmdb-doc", _DOC / "lmdb-doc/html"),
    Generator("sphinx-pallets", "python-itsdangerous-doc", _DOC / "python-itsdangerous-doc/html"),
    Generator(
        "sphinx-book", "python-sphinx-copybutton-doc", _DOC / "python-sphinx-copybutton-doc/html"
    ),
)


def held_out_pages(generator: Generator, limit: int = 40) -> list[Path]:
    """Up to `limit` HTML pages of the package, evenly spread over its sorted pages,
    without the fixture pages. Empty when the package is not installed."""
    if not generator.root.is_dir():
        return []
    taken = {path.name for path in (FIXTURES / generator.name).glob("*.html")}
    pages = [
        path
        for path in iter_files(generator.root)
        if path.suffix == ".html" and path.name not in taken
    ]
    step = max(1, len(pages) // limit)
    return pages[::step][:limit]


#: An XML declaration before the page (XHTML generators): lxml takes no str with one.
_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")


def _pre_texts(html: str) -> Iterator[str]:
    """The text of every outermost `<pre>` of `html` (lxml's parse of the page), except
    the line-number columns of a code table."""
    root = lxml.html.document_fromstring(_XML_DECLARATION.sub("", html, count=1))
    for pre in root.iter("pre"):
        if next(pre.iterancestors("pre"), None) is not None:
            continue
        cell = next(pre.iterancestors("td"), None)
        if cell is not None and {"linenos", "linenodiv"} & set(cell.get("class", "").split()):
            continue
        yield pre.text_content()


def missing_code_blocks(html: str, markdown: str) -> list[str]:
    """The `<pre>` texts of `html` not found byte-exact as a fenced block of `markdown`."""
    fenced = set()
    for block in iter_code_blocks(markdown):
        piece = markdown[block.start : block.end]
        body = piece.split("\n", 1)[1] if "\n" in piece else ""
        fenced.add(body.rsplit("\n", 1)[0] + "\n" if "\n" in body else "")
    missing = []
    for text in _pre_texts(html):
        code = text if text.endswith("\n") else text + "\n"
        if code not in fenced:
            missing.append(code[:60])
    return missing
