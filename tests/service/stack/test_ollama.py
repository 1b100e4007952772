"""The real Ollama: the chat model answers, the embedding model returns unit vectors that
put paraphrases closer together than unrelated sentences."""

from __future__ import annotations

import math

import httpx
import pytest
from langchain_ollama import ChatOllama, OllamaEmbeddings

from service.settings import Settings

pytestmark = pytest.mark.integration

# Dimensions of the embedding models Synopsis is run with (local default and alternative,
# production default).
DIMENSIONS = {"all-minilm-l6-v2": 384, "bge-small-en-v1.5": 384, "mxbai-embed-large": 1024}
# Fail instead of hanging when the server is stuck; generous because a shared Ollama may be
# busy with other clients' requests.
TIMEOUT = 300.0


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (
        math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    )


@pytest.fixture(scope="module")
def embeddings(settings: Settings, ollama_url: str) -> OllamaEmbeddings:
    return OllamaEmbeddings(
        base_url=ollama_url,
        model=settings.models.embedding_model,
        client_kwargs={"timeout": TIMEOUT},
    )


def test_server_version(settings: Settings, ollama_url: str) -> None:
    version = httpx.get(f"{ollama_url}/api/version", timeout=10.0).json()["version"]
    if settings.uses_local_ollama:
        assert version == settings.stack.ollama_version


def test_models_are_present(settings: Settings, ollama_url: str) -> None:
    tags = httpx.get(f"{ollama_url}/api/tags", timeout=10.0).json()["models"]
    names = {model["name"].removesuffix(":latest") for model in tags}
    assert {settings.models.chat_model, settings.models.embedding_model} <= names


def test_chat_returns_text(settings: Settings, ollama_url: str) -> None:
    chat = ChatOllama(
        base_url=ollama_url,
        model=settings.models.chat_model,
        temperature=0.0,
        seed=0,
        num_predict=32,
        # The context size the service summarizes with: a different one would make Ollama
        # reload the model, and wait for it to be idle first.
        num_ctx=settings.models.chat_context_tokens,
        client_kwargs={"timeout": TIMEOUT},
    )
    reply = chat.invoke("What is the capital of France? Answer in one word.")
    assert isinstance(reply.content, str)
    assert reply.content.strip() != ""


def test_embeddings_are_unit_vectors(settings: Settings, embeddings: OllamaEmbeddings) -> None:
    texts = ["Hybrid search mixes keywords and vectors.", "x", "Ünïcödé — 日本語 ✓"]
    vectors = embeddings.embed_documents(texts)
    dimension = DIMENSIONS[settings.models.embedding_model]
    assert [len(vector) for vector in vectors] == [dimension] * len(texts)
    for vector in vectors:
        assert math.sqrt(sum(x * x for x in vector)) == pytest.approx(1.0, abs=1e-4)
    # A query is embedded exactly like a document.
    assert embeddings.embed_query(texts[0]) == pytest.approx(vectors[0], abs=1e-6)


@pytest.mark.parametrize(
    ("sentence", "paraphrase", "unrelated"),
    [
        (
            "How do I open a file for reading in Python?",
            "What is the way to read a file in Python?",
            "The recipe needs two eggs and a cup of flour.",
        ),
        (
            "The server stores its data in a directory on disk.",
            "Data is persisted by the server into a folder on the disk.",
            "A cat sleeps on the warm windowsill.",
        ),
    ],
)
def test_paraphrases_are_closer_than_unrelated_sentences(
    embeddings: OllamaEmbeddings, sentence: str, paraphrase: str, unrelated: str
) -> None:
    a, b, c = embeddings.embed_documents([sentence, paraphrase, unrelated])
    assert _cosine(a, b) > max(_cosine(a, c), _cosine(b, c)) + 0.3
