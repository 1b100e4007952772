"""A search hit as a LangChain `Document`: the one mapping both retrievers use.

`SummaryRetriever` (in-process) maps a core `Hit`, `HttpSummaryRetriever` a hit of
`POST /search`'s JSON body; both go through `hit_document`, so the Documents of the same
hit cannot differ. This module imports only langchain_core, so the HTTP retriever stays
free of the Weaviate stack.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document

__all__ = ["METADATA_KEYS", "hit_document"]

#: The metadata of every Document a retriever returns, in this order.
METADATA_KEYS = (
    "source", "title", "headers", "chunk_index", "summary", "score", "distance", "anchor",
)  # fmt: skip


def hit_document(hit: Mapping[str, Any]) -> Document:
    """The original chunk of `hit` (a hit's fields by name), with its provenance.

    `distance` may be absent (no vector distance was measured), and `anchor` (the
    section's id in its page: link to `source#anchor`) when it has none; every other field of
    `METADATA_KEYS`, `id` and `content` must be present (KeyError otherwise).
    """
    return Document(
        id=str(hit["id"]),
        page_content=hit["content"],
        metadata={
            "source": hit["source"],
            "title": hit["title"],
            "headers": list(hit["headers"]),
            "chunk_index": hit["chunk_index"],
            "summary": hit["summary"],
            "score": hit["score"],
            "distance": hit.get("distance"),
            "anchor": hit.get("anchor") or "",
        },
    )
