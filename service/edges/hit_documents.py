"""A search hit as a LangChain `Document`: the one mapping both retrievers use.

`SummaryRetriever` (in-process) maps a core `Hit`, `HttpSummaryRetriever` a hit of
`POST /search`'s JSON body; both go through `hit_document`, so the Documents of the same
hit cannot differ. This module imports only langchain_core, so the HTTP retriever stays
free of the Weaviate stack.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document

__all__ = ["CONTEXT_METADATA_KEYS", "METADATA_KEYS", "hit_document"]

#: The metadata of every Document a retriever returns, in this order.
METADATA_KEYS = (
    "source", "title", "headers", "chunk_index", "summary", "summary_kind", "summary_model",
    "score", "distance", "anchor", "version", "indexed_at",
)  # fmt: skip
#: Added after those when the search was budgeted (`max_tokens`) or expanded (`expand`):
#: the tokens the hit took of the budget, and which chunks of its section it holds
#: (`chunk_indexes`, `chunks`, `complete`), as POST /search gives them.
CONTEXT_METADATA_KEYS = ("tokens", "section")


def hit_document(hit: Mapping[str, Any]) -> Document:
    """The original chunk of `hit` (a hit's fields by name), with its provenance.

    `distance` may be absent (no vector distance was measured), `anchor` (the
    section's id in its page: link to `source#anchor`) when it has none, and
    `summary_kind`/`summary_model` (what the summary is: "generated" by that chat model, or
    "extractive") and `version`/`indexed_at` (its source's version label; when the chunk
    was written, given as ISO 8601 text whichever way the hit has it) from a server older
    than them; every other field of `METADATA_KEYS`,
    `id` and `content` must be present (KeyError otherwise). The keys of
    `CONTEXT_METADATA_KEYS` are copied when the hit has them.
    """
    document_id, content = str(hit["id"]), hit["content"]
    metadata: dict[str, Any] = {
        "source": hit["source"],
        "title": hit["title"],
        "headers": list(hit["headers"]),
        "chunk_index": hit["chunk_index"],
        "summary": hit["summary"],
        "summary_kind": hit.get("summary_kind"),
        "summary_model": hit.get("summary_model"),
        "score": hit["score"],
        "distance": hit.get("distance"),
        "anchor": hit.get("anchor") or "",
        "version": hit.get("version") or None,
        "indexed_at": _iso(hit.get("indexed_at")),
    }
    for key in CONTEXT_METADATA_KEYS:
        if hit.get(key) is not None:
            value = hit[key]
            metadata[key] = dict(value) if isinstance(value, Mapping) else value
    return Document(id=document_id, page_content=content, metadata=metadata)


def _iso(value: object) -> str | None:
    """A time as `datetime.isoformat` writes it (a JSON body may say `Z` for `+00:00`)."""
    if isinstance(value, str) and value:
        value = dt.datetime.fromisoformat(value)
    return value.isoformat() if isinstance(value, dt.datetime) else None
