"""The model settings: which Ollama models summarize, answer, embed and caption, and
their batches."""

from __future__ import annotations

from dataclasses import dataclass

from service.errors import ConfigurationError
from service.settings.fields import Section, setting

__all__ = ["ModelSettings"]


@dataclass(frozen=True, kw_only=True)
class ModelSettings(Section):
    """Models."""

    TOPIC = "Models"
    PREFIX = ""

    # Chosen by the rule in docs/eval.md ("Choosing the summarizer and the answer model").
    chat_model: str = setting(
        "qwen2.5-coder-1.5b-instruct",
        "The Ollama model that writes summaries (and answers when `answer_model` is empty).",
    )
    # An answer is one call where an ingest makes thousands of summaries, so the two can
    # differ; Ollama keeps it loaded beside the chat model. Why this default: docs/eval.md
    # (the same rule).
    answer_model: str = setting(
        "qwen2.5-coder-0.5b-instruct",
        "The Ollama model that writes answers; empty: the chat model.",
    )
    # One size for both: Ollama loads a model once per context size, so two sizes would make
    # answers wait for a running ingest's summaries (or reload the model back and forth).
    chat_context_tokens: int = setting(
        4096,
        "Context window of the chat and answer models (tokens); an answer's prompt (k passages "
        "of up to `max_tokens` each, plus `answer_max_tokens`) must fit in it.",
    )
    embedding_model: str = setting(
        "all-minilm-l6-v2", "The Ollama embedding model, for documents and queries."
    )
    # Measured in docs/eval.md ("Embedding at most 256 tokens").
    embedding_max_tokens: int = setting(
        0,
        "Embed at most the first this many tokens of each text (Ollama's `num_ctx` for the "
        "embedding model); 0: the model's own context. Part of the index's embedding identity: "
        "changing it needs `synopsis reindex`.",
    )
    embedding_batch_size: int = setting(32, "Document texts sent in one embedding call.")
    query_embedding_batch_size: int = setting(
        32,
        "The most query texts of concurrent searches sent in one embedding call (those "
        "arriving during a call share the next); 1: each search makes its own call.",
    )
    vision_model: str = setting(
        "",
        "An Ollama model with the `vision` capability that captions PDF images (another is "
        "refused before any image is sent); empty: off, images are only counted.",
    )

    def check(self) -> None:
        if self.embedding_max_tokens < 0:
            name = self.variables()["embedding_max_tokens"]
            raise ConfigurationError(f"{name} must be 0 (the model's context) or more")
        if self.query_embedding_batch_size < 1:
            name = self.variables()["query_embedding_batch_size"]
            raise ConfigurationError(f"{name} must be at least 1")

    @property
    def embedding_identity(self) -> str:
        """What made an index's vectors: the embedding model, and its token cap if any
        (an index records it; another identity needs `synopsis reindex`)."""
        if not self.embedding_max_tokens:
            return self.embedding_model
        return f"{self.embedding_model} (first {self.embedding_max_tokens} tokens)"

    @property
    def resolved_answer_model(self) -> str:
        """The model that writes answers: `answer_model`, else the chat model."""
        return self.answer_model or self.chat_model
