"""Documentation generators: the committed fixture pages, and the Debian packages they
came from, whose other pages are the held-out set.

Fixtures live in `fixtures/generators/<generator>/` (one or two small real pages each)
with `expected.json`: per page, its chunk count and the header path of every chunk.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

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


def missing_code_blocks(html: str, markdown: str) -> list[str]:
    """The `<pre>` texts of `html` not found byte-exact as a fenced block of `markdown`."""
    fenced = set()
    for block in iter_code_blocks(markdown):
        piece = markdown[block.start : block.end]
        body = piece.split("\n", 1)[1] if "\n" in piece else ""
        fenced.add(body.rsplit("\n", 1)[0] + "\n" if "\n" in body else "")
    missing = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(html, "lxml")
    for pre in soup.find_all("pre"):
        if pre.find_parent("pre") is not None:
            continue
        cell = pre.find_parent("td")
        if cell is not None and {"linenos", "linenodiv"} & set(cell.get("class") or []):
            continue
        code = pre.get_text()
        code = code if code.endswith("\n") else code + "\n"
        if code not in fenced:
            missing.append(code[:60])
    return missing
