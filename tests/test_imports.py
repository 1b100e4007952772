"""The packages depend one way: service → loaders → splitters, never back.

`splitters` imports neither `loaders` nor `service`, and `loaders` never imports
`service`. The check reads every module's syntax tree, so an import inside a function,
under `if TYPE_CHECKING:` or through `importlib.import_module("…")` counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: The packages from the bottom up: a module may import its own package and the ones
#: below it, never one above.
LAYERS = ("splitters", "loaders", "service")


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


def upward_imports(source: str, package: str) -> list[str]:
    """The imports of `source`, a module of `package`, that point up the layers."""
    layer = LAYERS.index(package.partition(".")[0])
    problems = []
    for line, name in _imported(ast.parse(source), package):
        top = name.partition(".")[0]
        if top in LAYERS and LAYERS.index(top) > layer:
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
        ("loaders", "import splitters.errors\nfrom splitters import chunk_documents", []),
        ("service.edges", "from loaders import load\nimport splitters\nimport service.errors", []),
        ("splitters", "from .errors import SplitterError\nfrom . import metadata", []),
        ("loaders", "import servicex\nimport loaders_extra\nimport re", []),
        ("splitters", "TEXT = 'import loaders'  # only a string", []),
    ],
)
def test_upward_imports(package: str, source: str, expected: list[str]) -> None:
    assert upward_imports(source, package) == expected


def _modules() -> list[Path]:
    return sorted(path for layer in LAYERS for path in (ROOT / layer).rglob("*.py"))


def test_every_package_has_modules() -> None:
    assert {path.relative_to(ROOT).parts[0] for path in _modules()} == set(LAYERS)


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_imports_point_down(path: Path) -> None:
    package = ".".join(path.relative_to(ROOT).parent.parts)
    assert upward_imports(path.read_text(encoding="utf-8"), package) == []
