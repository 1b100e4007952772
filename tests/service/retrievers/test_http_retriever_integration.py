"""`HttpSummaryRetriever` in a LangChain chain against a real `synopsis serve`.

A three-section Markdown page is ingested in-process (three summaries that only need to
exist: `cheap_settings`) into collections prefixed `TestHttpRetriever`; then `synopsis serve` runs
as a subprocess on a free port over the same collections, with a read key. The retriever
runs inside an LCEL chain (`{"context": retriever | format_docs, "question": …} | prompt
| llm | parser`) whose chat model is a fake, so the test checks the wiring: the chain
retrieves the right section over HTTP, the model's prompt carries it, and the Documents
equal what the in-process `SummaryRetriever` returns for the same search. (`langchain`'s
`create_retrieval_chain` is not used: only langchain-core is installed.)
The server is stopped with SIGTERM and the collections are dropped at the end.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel
from langchain_core.messages import BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnablePassthrough

from service.connections import connect_weaviate
from service.errors import RemoteError
from service.index.store import Store
from service.jobs import JobStore
from service.query.search import search_request
from service.retrievers.http import HttpSummaryRetriever
from service.retrievers.in_process import SummaryRetriever
from service.settings import Settings
from service.synopsis import Synopsis
from tests.service.serving import free_port, kill_group, start_serve, wait_healthy
from tests.support.documents import write_markdown
from tests.support.models import model_env

pytestmark = pytest.mark.integration

PREFIX = "TestHttpRetriever"
READ_KEY = "http-retriever-read-key"
WRITE_KEY = "http-retriever-write-key"
SECTIONS = {
    "Installing": "Install Quillmark with `pip install quillmark`; it needs Python 3.10 or newer.",
    "Configuring the cache": (
        "Quillmark caches rendered pages in `~/.cache/quillmark`. To store the cache "
        "elsewhere, set `cache_dir` in `quill.toml`, for example `cache_dir = '/srv/quill'`."
    ),
    "Rotating logs": (
        "Logs go to `quill.log`. Set `log_max_bytes` to rotate the log file when it grows "
        "past that size; `log_backups` old files are kept."
    ),
}
QUESTION = "How do I store the Quillmark cache in another directory?"
ANSWER = "Set cache_dir in quill.toml."
SERVE_START_SECONDS = 180
STOP_SECONDS = 60


def _drop(settings: Settings) -> None:
    client = connect_weaviate(settings)
    try:
        Store(client, prefix=PREFIX).drop()
        JobStore(client, prefix=PREFIX).drop()
    finally:
        client.close()


@pytest.fixture(scope="module")
def test_settings(cheap_settings: Settings) -> Settings:
    return cheap_settings.with_overrides(collection_prefix=PREFIX)


@pytest.fixture(scope="module")
def page(test_settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The page's source, ingested into the test collections; they are dropped afterwards."""
    _drop(test_settings)
    path = write_markdown(
        tmp_path_factory.mktemp("http-retriever") / "quillmark.md", "Quillmark", SECTIONS
    )
    try:
        synopsis = Synopsis.open(test_settings)
        try:
            report = synopsis.ingest([str(path)])
        finally:
            synopsis.close()
        assert (report.failed, report.new_chunks) == ([], len(SECTIONS)), report
        yield str(path)
    finally:
        _drop(test_settings)


@pytest.fixture(scope="module")
def base_url(
    page: str, test_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """`synopsis serve` on a free loopback port over the test collections, with a read key."""
    port = free_port()
    env = {
        **model_env(test_settings),
        "SYNOPSIS_COLLECTION_PREFIX": PREFIX,
        "SYNOPSIS_API_READ_KEYS": READ_KEY,
        "SYNOPSIS_API_WRITE_KEYS": WRITE_KEY,
    }
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    process = start_serve(port, env, log)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, process, log, seconds=SERVE_START_SECONDS)
        yield base
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=STOP_SECONDS)
    finally:
        kill_group(process)


class Recorder(BaseCallbackHandler):
    """What the chain's retriever returned and what its chat model was sent."""

    def __init__(self) -> None:
        self.documents: list[Document] = []
        self.prompts: list[str] = []

    def on_retriever_end(self, documents: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.documents.extend(documents)

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        self.prompts.extend(str(message.content) for batch in messages for message in batch)


def format_docs(documents: list[Document]) -> str:
    return "\n\n".join(document.page_content for document in documents)


def _chain(retriever: HttpSummaryRetriever) -> Runnable[str, str]:
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer from this context only:\n\n{context}"),
            ("human", "{question}"),
        ]
    )
    llm = FakeListChatModel(responses=[ANSWER])
    return (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | prompt
        | llm
        | StrOutputParser()
    )


@pytest.fixture
def retriever(base_url: str, page: str) -> HttpSummaryRetriever:
    return HttpSummaryRetriever(base_url=base_url, api_key=READ_KEY, k=2, source=page, timeout=60)


@pytest.fixture
def in_process(test_settings: Settings, page: str) -> Iterator[list[Document]]:
    """The in-process retriever's Documents for the same search, on the same collections."""
    synopsis = Synopsis.open(test_settings)
    try:
        template = search_request(test_settings, "-", k=2, source=page)
        yield SummaryRetriever(synopsis=synopsis, template=template).invoke(QUESTION)
    finally:
        synopsis.close()


def _check(recorder: Recorder, answer: str, in_process: list[Document]) -> None:
    assert answer == ANSWER
    assert recorder.documents == in_process
    assert recorder.documents[0].metadata["headers"][-1] == "Configuring the cache"
    [system, human] = recorder.prompts
    assert "set `cache_dir` in `quill.toml`" in system
    assert human == QUESTION


def test_http_retriever_in_an_lcel_chain(
    retriever: HttpSummaryRetriever, in_process: list[Document]
) -> None:
    recorder = Recorder()

    answer = _chain(retriever).invoke(QUESTION, config={"callbacks": [recorder]})

    _check(recorder, answer, in_process)


def test_http_retriever_in_an_lcel_chain_async(
    retriever: HttpSummaryRetriever, in_process: list[Document]
) -> None:
    recorder = Recorder()

    answer = asyncio.run(_chain(retriever).ainvoke(QUESTION, config={"callbacks": [recorder]}))

    _check(recorder, answer, in_process)


def test_a_wrong_key_is_a_remote_error(base_url: str) -> None:
    retriever = HttpSummaryRetriever(base_url=base_url, api_key="not-a-key", timeout=30)

    with pytest.raises(RemoteError) as caught:
        retriever.invoke(QUESTION)

    assert caught.value.status_code == 401
    assert caught.value.request_id
    assert f"answered 401 Unauthorized: {caught.value.detail}" in str(caught.value)
