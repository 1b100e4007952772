"""A search hit: the one definition of its fields, which every edge's form is made from.

`Hit` is the core's hit. `HIT_FIELDS` lists its fields, in the order every edge gives
them, each with its meaning (`HitField`); each edge derives its form from it: the
JSON of the CLI (`Hit.to_dict`), of the API and of the MCP `ask` tool
(`service.api.schemas.SearchHit`), and the metadata of the retrievers' Documents
(`service.retrievers.documents`, where `id` is the Document's id and `content` its
`page_content`).

Null and absent, the same everywhere: every edge gives every field of a hit, and a value
the hit does not have as the field's empty value (`HitField.empty`: null, or "" for
`anchor` and {} for `scores`), never by leaving the key out. A time is ISO 8601 text in
JSON and in Document metadata.

This module imports nothing from the rest of the service, so the HTTP retriever can use
it without loading Weaviate or the server.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.index.records import SummaryKind

__all__ = ["HIT_FIELDS", "Hit", "HitField"]

#: Rounding of the scores and distances in `Hit.to_dict` (the CLI's JSON).
_DIGITS = 6


def _meaning(text: str, *, time: bool = False) -> dict[str, Any]:
    """The metadata of a field of `Hit`: what it means, and whether it is a time
    (`HitField`)."""
    return {"meaning": text, "time": time}


@dataclass(frozen=True, kw_only=True)
class Hit:
    """One original returned by a search, with the summary that matched it (if any), and
    what that summary is: `summary_kind` "generated" (by `summary_model`) or "extractive".

    The fields are in the order every edge gives them (`HIT_FIELDS`)."""

    id: str = field(
        metadata=_meaning("The chunk's id (uuid5 of its source and its content's hash).")
    )
    source: str = field(
        metadata=_meaning("The canonical URL or path of the chunk's source document.")
    )
    title: str = field(metadata=_meaning("The source document's title."))
    headers: list[str] = field(metadata=_meaning("The chunk's header path, outermost first."))
    chunk_index: int = field(
        metadata=_meaning("The chunk's position in its source, counted from 0.")
    )
    content: str = field(metadata=_meaning("The original chunk's text."))
    summary: str | None = field(
        metadata=_meaning("The chunk's summary (null while it has none yet).")
    )
    summary_kind: SummaryKind | None = field(
        default=None,
        metadata=_meaning(
            "What `summary` is: generated (written by the chat model `summary_model`) or "
            "extractive (quoted from the chunk: the header path, its lead sentences and "
            "names, stored when the summary guard rejected the model's summaries); null "
            "without a summary."
        ),
    )
    summary_model: str | None = field(
        default=None, metadata=_meaning("The chat model that wrote a generated summary; else null.")
    )
    score: float = field(
        metadata=_meaning(
            "The hybrid score: ranks hits within one search only (normalized per query; in "
            "`fused` mode the reciprocal-rank score)."
        )
    )
    leg: str = field(
        metadata=_meaning("How the hit was found: joint, summaries, originals (the legs) or fused.")
    )
    distance: float | None = field(
        default=None,
        metadata=_meaning(
            "The absolute cosine distance of the matched object to the query (null when "
            "not measured: without a relevance gate or `explain`)."
        ),
    )
    scores: dict[str, float] = field(
        default_factory=dict, metadata=_meaning("The per-leg scores, with `explain` ({} without).")
    )
    page_start: int | None = field(
        default=None,
        metadata=_meaning("The first PDF page the chunk spans (null for other sources)."),
    )
    page_end: int | None = field(
        default=None,
        metadata=_meaning("The last PDF page the chunk spans (null for other sources)."),
    )
    anchor: str = field(
        default="",
        metadata=_meaning(
            'The section\'s id in its page: a reader opens `source#anchor` ("" when it has none).'
        ),
    )
    version: str | None = field(
        default=None, metadata=_meaning("Its source's version label (null: none).")
    )
    indexed_at: dt.datetime | None = field(
        default=None,
        metadata=_meaning(
            "When the chunk was written (null: written before chunks kept it).", time=True
        ),
    )

    @property
    def location(self) -> str:
        """Where a reader opens the section: the source, with `#anchor` when it has one."""
        return f"{self.source}#{self.anchor}" if self.anchor else self.source

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (`HIT_FIELDS`, in order; scores and distances
        rounded to 6 digits, the time as ISO 8601 text)."""
        return {spec.name: _json(getattr(self, spec.name)) for spec in HIT_FIELDS}


@dataclass(frozen=True)
class HitField:
    """One field of a hit: its name, what it means, and the value of a hit without one.

    `required`: every hit has a value (a field of `Hit` without a default). The others
    may be missing from a hit given by name (a server older than the field), and are then
    `empty()`. `time`: a datetime in `Hit`, ISO 8601 text in JSON and Document metadata."""

    name: str
    meaning: str
    required: bool
    time: bool
    _empty: Callable[[], Any] = field(repr=False, compare=False)

    def empty(self) -> Any:
        """The value of a hit that does not have this field (a new one each call)."""
        return self._empty()


def _field(spec: dataclasses.Field[Any]) -> HitField:
    meaning, time = spec.metadata["meaning"], spec.metadata["time"]
    if spec.default is not dataclasses.MISSING:
        value = spec.default
        return HitField(spec.name, meaning, False, time, lambda: value)
    if spec.default_factory is not dataclasses.MISSING:
        return HitField(spec.name, meaning, False, time, spec.default_factory)
    return HitField(spec.name, meaning, True, time, lambda: None)


#: Every field of a hit, in the order every edge gives them.
HIT_FIELDS: tuple[HitField, ...] = tuple(_field(spec) for spec in dataclasses.fields(Hit))


def _json(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, _DIGITS)
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {key: _json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json(item) for item in value]
    return value
