"""`SummaryRetriever`: Synopsis as a LangChain retriever that returns the original chunks."""

from __future__ import annotations

import dataclasses
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from service.query.context import ContextRequest, Expand, Passage, candidates_for
from service.query.search import Hit, SearchRequest, search_request
from service.retrievers.documents import hit_document
from service.settings import MAX_CONTEXT_TOKENS, MIN_CONTEXT_TOKENS
from service.synopsis import Synopsis

__all__ = ["SummaryRetriever", "hit_to_document", "passage_to_document"]


def hit_to_document(hit: Hit) -> Document:
    """A search hit as a LangChain Document: the original chunk, with its provenance
    (`hit_document`, which the HTTP retriever's hits go through too)."""
    return hit_document(dataclasses.asdict(hit))


def passage_to_document(passage: Passage) -> Document:
    """A hit given as context (its section, or its chunk within a budget) as a Document,
    with the metadata POST /search gives it (`tokens`, and `section` when expanded)."""
    fields: dict[str, Any] = {
        **dataclasses.asdict(passage.hit),
        "content": passage.content,
        "tokens": passage.tokens,
    }
    if passage.expanded:
        fields["section"] = {
            "chunk_indexes": list(passage.chunk_indexes),
            "chunks": list(passage.section_chunks),
            "complete": passage.complete,
        }
    return hit_document(fields)


class SummaryRetriever(BaseRetriever):
    """Retrieves originals by searching their summaries (and, in `fused` mode, themselves).

    `template` carries every search parameter but the query (k, mode, alpha, filters,
    relevance gate); each call replaces its query. Without one, each search takes the
    settings' defaults, as POST /search with only a query does. `version`, when given,
    is the version label every search reads (`*`: every one; otherwise the template's,
    by default the latest of each group: `service.index.versions`).

    `expand` and `max_tokens` mean what they mean in POST /search: with `expand="section"`
    each Document is the whole section of its hit (each section once), and with a budget
    the Documents are the hits that fit it, best first (`expand` alone: the settings'
    `search_max_tokens`). Without a template such a search looks at as many hits as
    POST /search and the MCP `search_docs` do for the same budget, so a chain gets the
    same context as an assistant; a template's `k` is used as given.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    synopsis: Synopsis
    template: SearchRequest | None = None
    version: str | None = None
    expand: Expand = "none"
    max_tokens: int | None = Field(default=None, ge=MIN_CONTEXT_TOKENS, le=MAX_CONTEXT_TOKENS)

    def _context(self) -> ContextRequest | None:
        if self.expand == "none" and self.max_tokens is None:
            return None
        budget = self.max_tokens or self.synopsis.settings.search.max_tokens
        return ContextRequest(expand=self.expand, max_tokens=budget)

    def _request(self, query: str, context: ContextRequest | None) -> SearchRequest:
        if self.template is not None:
            request = dataclasses.replace(self.template, query=query)
        else:
            k = candidates_for(context.max_tokens) if context is not None else None
            request = search_request(self.synopsis.settings, query, k=k)
        if self.version:
            request = dataclasses.replace(request, version=self.version)
        return request

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        context = self._context()
        if context is None:
            hits = self.synopsis.search(self._request(query, None))
            return [hit_to_document(hit) for hit in hits]
        found = self.synopsis.search_context(self._request(query, context), context)
        return [passage_to_document(passage) for passage in found.passages]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        context = self._context()
        if context is None:
            hits = await self.synopsis.asearch(self._request(query, None))
            return [hit_to_document(hit) for hit in hits]
        found = await self.synopsis.asearch_context(self._request(query, context), context)
        return [passage_to_document(passage) for passage in found.passages]
