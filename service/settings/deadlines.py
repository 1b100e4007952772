"""The deadlines of outbound calls: a server that hangs fails the call after its deadline."""

from __future__ import annotations

from dataclasses import dataclass

from service.errors import ConfigurationError
from service.settings.fields import Section, setting

__all__ = ["DeadlineSettings"]


@dataclass(frozen=True, kw_only=True)
class DeadlineSettings(Section):
    """Deadlines of outbound calls (seconds, each more than 0)."""

    TOPIC = "Deadlines of outbound calls"
    PREFIX = ""

    # A server that hangs (accepts connections, never answers) fails the call after its
    # deadline, and the HTTP API answers 503. Summaries have their own, `summary_timeout`.
    weaviate_init_timeout: float = setting(
        10.0, "Seconds to connect to Weaviate (each start-up check)."
    )
    weaviate_query_timeout: float = setting(60.0, "Seconds for one Weaviate query or REST call.")
    weaviate_insert_timeout: float = setting(120.0, "Seconds for one batch write to Weaviate.")
    embedding_timeout: float = setting(
        120.0, "Seconds for Ollama to embed one batch of document texts."
    )
    query_embedding_timeout: float = setting(10.0, "Seconds for Ollama to embed a query.")
    answer_timeout: float = setting(
        120.0,
        "Seconds for an answer (also a document summary, a follow-up rewrite): the wait for "
        "each of its streamed parts.",
    )

    def check(self) -> None:
        for attribute, variable in self.variables().items():
            if not getattr(self, attribute) > 0:  # a deadline of 0 would fail every call
                raise ConfigurationError(f"{variable} must be more than 0 seconds")
