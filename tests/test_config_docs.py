"""docs/configuration.md is generated from the `Settings` fields and must match them."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from service.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    path = ROOT / "scripts" / "config_docs.py"
    spec = importlib.util.spec_from_file_location("config_docs", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_configuration_docs_are_up_to_date() -> None:
    expected = _script().render()
    actual = (ROOT / "docs" / "configuration.md").read_text()
    assert actual == expected, (
        "docs/configuration.md is stale: run `uv run python scripts/config_docs.py`"
    )


def test_every_variable_has_one_row() -> None:
    text = _script().render()
    for variable in Settings.env_names().values():
        assert text.count(f"| `{variable}` |") == 1, variable


def test_a_row_shows_type_default_choices_and_description() -> None:
    text = _script().render()
    assert (
        "| `SYNOPSIS_SEARCH_MODE` | one of `joint`, `summaries`, `originals`, `both`, `fused` "
        "| `joint` | The search mode unless the request says otherwise (docs/search.md). |"
    ) in text
    assert "| `SYNOPSIS_SUMMARY_GUARD` | boolean | `true` |" in text
    assert "| `SYNOPSIS_JOBS_MAX_SECONDS` | number | `43200` |" in text
    assert "| `SYNOPSIS_WEAVIATE_URL` | text | empty |" in text
