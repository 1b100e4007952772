"""`SummaryRetriever` inside a LangChain chain, sync and async, on the real stack."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from service.ingest.report import IngestReport
from service.query.search import SearchRequest
from service.retrievers.in_process import SummaryRetriever
from service.synopsis import Synopsis
from tests.support.corpus import CONTROLFLOW

pytestmark = pytest.mark.integration

QUESTION = "I want to write a Python script that prints numbers from 1 to 30."


def _headers(documents: list[Document]) -> list[list[str]]:
    return [document.metadata["headers"] for document in documents]


@pytest.fixture
def retriever(core: Synopsis, controlflow: IngestReport) -> SummaryRetriever:
    return SummaryRetriever(
        synopsis=core, template=SearchRequest(query="-", k=3, source=CONTROLFLOW)
    )


def test_retriever_in_a_chain(retriever: SummaryRetriever) -> None:
    chain = retriever | RunnableLambda(_headers)

    headers = chain.invoke(QUESTION)

    assert len(headers) == 3
    assert headers[0][0] == "4. More Control Flow Tools"
    assert headers[0][-1].startswith("4.3. The ")


def test_retriever_in_a_chain_async(retriever: SummaryRetriever) -> None:
    chain = retriever | RunnableLambda(_headers)

    headers = asyncio.run(chain.ainvoke(QUESTION))

    assert headers == chain.invoke(QUESTION)


def test_retriever_documents_are_the_originals(core: Synopsis, retriever: SummaryRetriever) -> None:
    documents = retriever.invoke(QUESTION)
    hits = core.search(SearchRequest(query=QUESTION, k=3, source=CONTROLFLOW))

    assert [document.id for document in documents] == [hit.id for hit in hits]
    assert [document.page_content for document in documents] == [hit.content for hit in hits]
    first = documents[0].metadata
    assert {"source", "headers", "summary", "score"} <= first.keys()
    assert (first["source"], first["summary"], first["score"]) == (
        CONTROLFLOW,
        hits[0].summary,
        hits[0].score,
    )
