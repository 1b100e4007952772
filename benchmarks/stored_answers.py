"""Answers kept between runs of the answer benchmarks (bench_answers.py, bench_injection.py):
the passages each reply was given, stored as JSON so that a later run can check the
stored replies again (a new grounding rule) without calling the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from langchain_core.language_models import BaseChatModel

from service.query.answer import Answerer
from service.query.search import Hit


def hit_record(hit: Hit) -> dict[str, Any]:
    """What a stored answer keeps of each passage it was given."""
    return {
        "id": hit.id,
        "source": hit.source,
        "title": hit.title,
        "headers": hit.headers,
        "chunk_index": hit.chunk_index,
        "content": hit.content,
        "distance": hit.distance,
    }


def hit_from(record: dict[str, Any]) -> Hit:
    """The passage back from `hit_record`'s dict (as the grounding check reads it)."""
    return Hit(
        id=record["id"],
        source=record["source"],
        title=record["title"],
        headers=list(record["headers"]),
        chunk_index=record["chunk_index"],
        content=record["content"],
        summary=None,
        score=0.0,
        leg="joint",
        distance=record["distance"],
    )


def checker(min_support: float) -> Answerer:
    """An Answerer that only checks stored replies: its model is never called."""
    return Answerer(cast(BaseChatModel, None), model_name="stored replies", min_support=min_support)


def load_records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    data: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return data


def save_records(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(records, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
