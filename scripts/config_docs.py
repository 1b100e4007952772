"""Write docs/configuration.md from the settings: every variable, its type, its default,
its allowed values where they are fixed, and what it does, by topic.

uv run python scripts/config_docs.py          # rewrite docs/configuration.md
uv run python scripts/config_docs.py --check  # exit 1 if docs/configuration.md is out of date
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from pathlib import Path

from service.settings import TOPICS, Settings

DOCS = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"

#: How each field type is written in the table.
_KINDS = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "text",
    Path: "path",
}


def _kind(hint: object, choices: tuple[object, ...] | None) -> str:
    if choices is not None:
        return "one of " + ", ".join(f"`{value}`" for value in choices)
    return _KINDS[hint]  # type: ignore[index]


def _default(field: dataclasses.Field[object]) -> str:
    if field.default_factory is not dataclasses.MISSING:
        # Computed on each machine: say how, not this machine's value.
        doc = inspect.getdoc(field.default_factory) or ""
        return doc.splitlines()[0] if doc else "computed"
    value = field.default
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, float):
        return f"`{value:g}`"
    if value == "":
        return "empty"
    return f"`{value}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _with_variables(text: str, names: dict[str, str]) -> str:
    """`text` with every field named in backquotes written as its variable."""
    for name, variable in names.items():
        text = text.replace(f"`{name}`", f"`{variable}`")
    return text


def render() -> str:
    """docs/configuration.md as it should be."""
    names = Settings.env_names()
    choices = Settings.choices()
    descriptions = Settings.descriptions()
    parts = [
        "# Configuration\n",
        "Generated from `service/settings/` by `uv run python scripts/config_docs.py`; "
        "`tests/test_config_docs.py` fails when it is out of date.\n",
        "Synopsis reads its settings once, from environment variables: the setting `name` "
        "is set by `SYNOPSIS_<NAME>`, and a variable left unset keeps its "
        "default. A boolean is `true`/`false`, `1`/`0`, `yes`/`no` or `on`/`off`; "
        "surrounding spaces are ignored. A value of the wrong type, outside its allowed "
        "values, or outside the bounds the settings check (ports, shares, limits of at "
        "least 1, …) is refused when the settings are read, at the start of a command or "
        "of the service, with one line naming the variable.\n",
        "Topics: " + ", ".join(f"[{topic}](#{_anchor(topic)})" for topic in TOPICS) + ".\n",
    ]
    for topic, members in TOPICS.items():
        rows = [
            f"## {topic}\n",
            "| variable | type | default | what it does |",
            "|---|---|---|---|",
        ]
        for name in members:
            field, hint = Settings.field_of(name)
            kind = _kind(hint, choices.get(name))
            description = _with_variables(descriptions[name], names)
            rows.append(
                f"| `{names[name]}` | {_cell(kind)} | {_cell(_default(field))} "
                f"| {_cell(description)} |"
            )
        parts.append("\n".join(rows) + "\n")
    return "\n".join(parts)


def _anchor(title: str) -> str:
    """The anchor GitHub gives a heading."""
    kept = "".join(c for c in title.lower() if c.isalnum() or c in " -")
    return kept.replace(" ", "-")


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        return 0 if DOCS.is_file() and DOCS.read_text() == text else 1
    DOCS.parent.mkdir(exist_ok=True)
    DOCS.write_text(text)
    print(f"wrote {DOCS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
