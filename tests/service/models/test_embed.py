"""The Embedder: batches, the query cache, and texts over the model's context."""

from __future__ import annotations

import pytest
from langchain_core.embeddings import Embeddings

from service.errors import ConfigurationError, ModelError
from service.models.embed import Embedder, OllamaEmbeddingModel, ollama_embeddings
from service.settings import Settings


class CharLimitEmbeddings(Embeddings):
    """Refuses any batch holding a text over `limit` characters, as Ollama does."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.batches: list[list[str]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        if any(len(text) > self.limit for text in texts):
            raise ValueError("the input length exceeds the context length (status code: 400)")
        return [[float(len(text)), 1.0] for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def test_batches_are_bounded_and_order_is_kept() -> None:
    model = CharLimitEmbeddings(limit=1000)
    texts = [f"text {n}" for n in range(70)]
    vectors = Embedder(model, model="fake", batch_size=32).embed_documents(texts)
    assert vectors == [[float(len(t)), 1.0] for t in texts]
    assert [len(batch) for batch in model.batches] == [32, 32, 6]


def test_an_over_long_text_is_shortened_alone_and_the_rest_stay_batched() -> None:
    model = CharLimitEmbeddings(limit=100)
    texts = ["short"] * 15 + ["x" * 400] + ["short"] * 16
    vectors = Embedder(model, model="fake", batch_size=32).embed_documents(texts)

    assert len(vectors) == 32
    assert vectors[15][0] <= 100  # embedded from its beginning, cut to fit
    assert all(vector == [5.0, 1.0] for n, vector in enumerate(vectors) if n != 15)
    # 1 refused batch of 32, halves down to the long text (2 + 2 + 2 + 2 + 2 calls), and
    # 400 → 300 → 225 → 168 → 126 → 94 characters: far fewer than one call per text.
    assert len(model.batches) <= 16
    assert max(len(batch) for batch in model.batches[1:]) == 16


def test_other_errors_are_not_retried() -> None:
    class Broken(CharLimitEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            self.batches.append(list(texts))
            raise ValueError("model not found")

    model = Broken(limit=0)
    with pytest.raises(ModelError, match="embedding model 'fake' failed: model not found"):
        Embedder(model, model="fake").embed_documents(["a", "b"])
    assert len(model.batches) == 1


def test_a_text_that_never_fits_is_a_model_error() -> None:
    model = CharLimitEmbeddings(limit=10)
    with pytest.raises(ModelError, match="refused a text even when shortened"):
        Embedder(model, model="fake").embed_documents(["y" * 500])


def test_queries_are_cached() -> None:
    model = CharLimitEmbeddings(limit=1000)
    embedder = Embedder(model, model="fake", query_cache_size=1)
    assert embedder.embed_query("a") == embedder.embed_query("a") == [1.0, 1.0]
    embedder.embed_query("bb")
    embedder.embed_query("a")  # evicted by "bb": computed again
    assert model.batches == [["a"], ["bb"], ["a"]]


def test_long_texts_are_sent_alone() -> None:
    model = CharLimitEmbeddings(limit=10_000)
    texts = ["a", "b" * 50, "c", "d" * 60]
    vectors = Embedder(model, model="fake", solo_chars=40).embed_documents(texts)
    assert vectors == [[1.0, 1.0], [50.0, 1.0], [1.0, 1.0], [60.0, 1.0]]
    assert model.batches == [["a", "c"], ["b" * 50], ["d" * 60]]


class _RecordingClient:
    """Stands in for `ollama.Client`: records each `embed` call's keyword arguments."""

    def __init__(self) -> None:
        self.calls: list[dict[str, object]] = []

    def embed(self, model: str, texts: list[str], **kwargs: object) -> dict[str, object]:
        self.calls.append({"model": model, **kwargs})
        return {"embeddings": [[0.0] for _ in texts]}


@pytest.mark.parametrize(("max_tokens", "options"), [(0, None), (256, {"num_ctx": 256})])
def test_the_token_cap_goes_to_every_embedding_call(
    max_tokens: int, options: dict[str, int] | None
) -> None:
    model = OllamaEmbeddingModel(model="m", base_url="http://127.0.0.1:9", max_tokens=max_tokens)
    documents, queries = _RecordingClient(), _RecordingClient()
    model._client, model._query_client = documents, queries  # type: ignore[assignment]

    model.embed_documents(["a", "b"])
    model.embed_queries(["q"])

    assert [call["options"] for call in documents.calls + queries.calls] == [options, options]


def test_the_token_cap_is_part_of_the_embedding_identity() -> None:
    plain = Settings()
    capped = plain.with_overrides(embedding_max_tokens=256)
    assert plain.models.embedding_identity == "all-minilm-l6-v2"
    assert capped.models.embedding_identity == "all-minilm-l6-v2 (first 256 tokens)"
    assert ollama_embeddings(capped).options == {"num_ctx": 256}
    with pytest.raises(ConfigurationError, match="SYNOPSIS_EMBEDDING_MAX_TOKENS"):
        plain.with_overrides(embedding_max_tokens=-1)
