"""A search hit as a LangChain `Document`: the one mapping both retrievers use.

`SummaryRetriever` (in-process) maps a core `Hit`, `HttpSummaryRetriever` a hit of
`POST /search`'s JSON body; both go through `hit_document`, so the Documents of the same
hit cannot differ. The metadata is every field of a hit (`service.query.hits.HIT_FIELDS`)
but `id` and `content`, which are the Document's id and text. This module imports only
langchain_core and `service.query.hits`, so the HTTP retriever stays free of the
Weaviate stack.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document

from service.query.hits import HIT_FIELDS, HitField

__all__ = ["CONTEXT_METADATA_KEYS", "METADATA_KEYS", "hit_document"]

#: The fields of a hit that are the Document itself rather than its metadata.
_DOCUMENT_FIELDS = ("id", "content")
#: The metadata of every Document a retriever returns, in this order: every field of a
#: hit (`service.query.hits.HIT_FIELDS`) but the Document's own id and text.
METADATA_KEYS = tuple(spec.name for spec in HIT_FIELDS if spec.name not in _DOCUMENT_FIELDS)
#: Added after those when the search was budgeted (`max_tokens`) or expanded (`expand`):
#: the tokens the hit took of the budget, and which chunks of its section it holds
#: (`chunk_indexes`, `chunks`, `complete`), as POST /search gives them.
CONTEXT_METADATA_KEYS = ("tokens", "section")
_METADATA_FIELDS = tuple(spec for spec in HIT_FIELDS if spec.name in METADATA_KEYS)


def hit_document(hit: Mapping[str, Any]) -> Document:
    """The original chunk of `hit` (a hit's fields by name), with its provenance.

    Every field of a hit is in the metadata (`METADATA_KEYS`), `id` and `content` are the
    Document's id and text. A field a hit must have (`HitField.required`) that is missing
    is a KeyError; any other missing or null one (from a server older than it) is the
    field's empty value (`HitField.empty`), as in the API's JSON. Lists and dicts are
    copied; a time is given as ISO 8601 text whichever way the hit has it. The keys of
    `CONTEXT_METADATA_KEYS` are copied when the hit has them.
    """
    document_id, content = str(hit["id"]), hit["content"]
    metadata = {spec.name: _value(hit, spec) for spec in _METADATA_FIELDS}
    for key in CONTEXT_METADATA_KEYS:
        if hit.get(key) is not None:
            value = hit[key]
            metadata[key] = dict(value) if isinstance(value, Mapping) else value
    return Document(id=document_id, page_content=content, metadata=metadata)


def _value(hit: Mapping[str, Any], spec: HitField) -> Any:
    value = hit[spec.name] if spec.required else hit.get(spec.name)
    if value is None:
        return spec.empty()
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, list | tuple):
        return list(value)
    return _iso(value) if spec.time else value


def _iso(value: object) -> str | None:
    """A time as `datetime.isoformat` writes it (a JSON body may say `Z` for `+00:00`)."""
    if isinstance(value, str) and value:
        value = dt.datetime.fromisoformat(value)
    return value.isoformat() if isinstance(value, dt.datetime) else None
