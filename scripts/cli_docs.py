"""Write docs/cli.md from the real `--help` of every synopsis command.

uv run python scripts/cli_docs.py          # rewrite docs/cli.md
uv run python scripts/cli_docs.py --check  # exit 1 if docs/cli.md is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.testing import CliRunner

from service.cli import main

DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def _commands(group: click.Group, prefix: list[str]) -> list[list[str]]:
    found = [prefix]
    for name in sorted(group.commands):
        command = group.commands[name]
        if isinstance(command, click.Group):
            found.extend(_commands(command, [*prefix, name]))
        else:
            found.append([*prefix, name])
    return found


def render() -> str:
    """docs/cli.md as it should be."""
    runner = CliRunner()
    parts = [
        "# The synopsis command line\n",
        "Generated from the real `--help` by `uv run python scripts/cli_docs.py`; "
        "`tests/test_cli_docs.py` fails when it is out of date.\n",
    ]
    for path in _commands(main, []):
        result = runner.invoke(main, [*path, "--help"], prog_name="synopsis", terminal_width=100)
        title = " ".join(["synopsis", *path])
        parts.append(f"## `{title}`\n\n```text\n{result.output.rstrip()}\n```\n")
    return "\n".join(parts)


def main_script() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        return 0 if DOCS.is_file() and DOCS.read_text() == text else 1
    DOCS.parent.mkdir(exist_ok=True)
    DOCS.write_text(text)
    print(f"wrote {DOCS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main_script())
