"""`SummaryRetriever`: Synopsis as a LangChain retriever that returns the original chunks."""

from __future__ import annotations

import dataclasses

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from service.edges.hit_documents import hit_document
from service.query.search import Hit, SearchRequest
from service.synopsis import Synopsis

__all__ = ["SummaryRetriever", "hit_to_document"]


def hit_to_document(hit: Hit) -> Document:
    """A search hit as a LangChain Document: the original chunk, with its provenance
    (`hit_document`, which the HTTP retriever's hits go through too)."""
    return hit_document(dataclasses.asdict(hit))


class SummaryRetriever(BaseRetriever):
    """Retrieves originals by searching their summaries (and, in `fused` mode, themselves).

    `template` carries every search parameter but the query (k, mode, alpha, filters,
    relevance gate); each call replaces its query.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    synopsis: Synopsis
    template: SearchRequest = SearchRequest(query="-")

    def _request(self, query: str) -> SearchRequest:
        return dataclasses.replace(self.template, query=query)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [hit_to_document(hit) for hit in self.synopsis.search(self._request(query))]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        hits = await self.synopsis.asearch(self._request(query))
        return [hit_to_document(hit) for hit in hits]
