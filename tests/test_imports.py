"""The packages depend one way: `service` on `loaders` and `splitters`, which are siblings
that share only `splitters.base`, never back.

`splitters.base` (the errors, document metadata keys, Markdown syntax and blocks both
libraries use) imports nothing of `splitters` outside it, nor `loaders` or `service`; the
rest of `splitters` imports the base and itself; `loaders` imports the base and itself
(never the rest of `splitters`); neither imports `service`. The top level of the
repository is fixed, so the shared base is a sub-package of `splitters` rather than a
package of its own. The check reads every module's syntax tree, so an import inside a
function, under `if TYPE_CHECKING:` or through `importlib.import_module("…")` counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: The top-level packages.
PACKAGES = ("splitters", "loaders", "service")
#: The base `loaders` and `splitters` share.
BASE = "splitters.base"
#: What the modules of each part may import, besides modules outside the packages.
ALLOWED = {
    BASE: {BASE},
    "splitters": {BASE, "splitters"},
    "loaders": {BASE, "loaders"},
    "service": {BASE, "splitters", "loaders", "service"},
}


def part_of(module: str) -> str | None:
    """`BASE` or the top-level package `module` belongs to; None when it is in neither."""
    if module == BASE or module.startswith(BASE + "."):
        return BASE
    top = module.partition(".")[0]
    return top if top in PACKAGES else None


def _imported(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in `tree`, a module of `package`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                if node.level > len(parts):
                    continue  # beyond the top-level package: fails at import anyway
                base = ".".join(parts[: len(parts) - node.level + 1])
                found.append((node.lineno, f"{base}.{node.module}" if node.module else base))
            elif node.module:
                found.append((node.lineno, node.module))
        elif (
            isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (
                    isinstance(node.func, ast.Name)
                    and node.func.id in {"import_module", "__import__"}
                )
            )
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def forbidden_imports(source: str, package: str) -> list[str]:
    """The imports of `source`, a module of `package`, that its part may not make."""
    allowed = ALLOWED[part_of(package) or ""]
    problems = []
    for line, name in _imported(ast.parse(source), package):
        part = part_of(name)
        if part is not None and part not in allowed:
            problems.append(f"line {line}: {package} imports {name}")
    return problems


@pytest.mark.parametrize(
    ("package", "source", "expected"),
    [
        ("splitters", "import loaders", ["line 1: splitters imports loaders"]),
        (
            "splitters",
            "from service.errors import SynopsisError",
            ["line 1: splitters imports service.errors"],
        ),
        (
            "splitters",
            "def f():\n    from loaders.documents import SOURCE\n",
            ["line 2: splitters imports loaders.documents"],
        ),
        (
            "loaders",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import service.settings\n",
            ["line 3: loaders imports service.settings"],
        ),
        (
            "loaders.sub",
            "import importlib\n\ndef g():\n    return importlib.import_module('service.errors')\n",
            ["line 4: loaders.sub imports service.errors"],
        ),
        (
            "loaders",
            "from splitters import chunk_documents\nimport splitters.tokens",
            ["line 1: loaders imports splitters", "line 2: loaders imports splitters.tokens"],
        ),
        (
            "splitters.base",
            "from splitters.tokens import Chunk\nfrom .. import pipeline\nimport loaders",
            [
                "line 1: splitters.base imports splitters.tokens",
                "line 2: splitters.base imports splitters",
                "line 3: splitters.base imports loaders",
            ],
        ),
        (
            "splitters.base",
            "from service.errors import StoreError",
            ["line 1: splitters.base imports service.errors"],
        ),
        ("loaders", "import splitters.base.errors\nfrom splitters.base import metadata", []),
        ("splitters.base", "from . import metadata\nfrom .markdown_syntax import Fence", []),
        ("service.api", "from loaders import load\nimport splitters\nimport service.errors", []),
        ("splitters", "from .base.errors import SplitterError\nfrom . import tokens", []),
        ("loaders", "import servicex\nimport loaders_extra\nimport re", []),
        ("splitters", "TEXT = 'import loaders'  # only a string", []),
    ],
)
def test_forbidden_imports(package: str, source: str, expected: list[str]) -> None:
    assert forbidden_imports(source, package) == expected


def _modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def _package(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).parent.parts)


def test_every_part_has_modules() -> None:
    assert {part_of(_package(path)) for path in _modules()} == {BASE, *PACKAGES}


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_imports_follow_the_rule(path: Path) -> None:
    assert forbidden_imports(path.read_text(encoding="utf-8"), _package(path)) == []
