"""The settings of an external Weaviate and Ollama, the replication of the collections,
their names."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Literal

from service.errors import ConfigurationError
from service.settings.fields import Section, setting

__all__ = ["CONSISTENCY_LEVELS", "ConsistencyLevel", "ExternalSettings"]

#: Weaviate's consistency levels, for `read_consistency` and `write_consistency`.
ConsistencyLevel = Literal["ONE", "QUORUM", "ALL"]
CONSISTENCY_LEVELS: tuple[ConsistencyLevel, ...] = typing.get_args(ConsistencyLevel)


@dataclass(frozen=True, kw_only=True)
class ExternalSettings(Section):
    """External Weaviate and Ollama, replication."""

    TOPIC = "External Weaviate and Ollama, replication"
    PREFIX = ""

    weaviate_url: str = setting(
        "", "An external Weaviate, e.g. `http://weaviate:8080`; empty: the local stack's own."
    )
    weaviate_grpc_host: str = setting(
        "", "The gRPC host of the external Weaviate; empty: the host of the Weaviate URL."
    )
    weaviate_grpc_port: int = setting(50051, "The gRPC port of the external Weaviate.")
    weaviate_api_key: str = setting(
        "", "The API key of an external Weaviate; empty: none. Never printed.", secret=True
    )
    # Weaviate >= 1.38 repairs the copies in the background whenever the factor is above 1;
    # QUORUM reads after QUORUM writes see every acknowledged write and survive one node of
    # three being down (service/index/replication.py).
    replication_factor: int = setting(
        1,
        "Copies of every object of Synopsis's collections, set when they are created; more "
        "than 1 needs that many Weaviate nodes.",
    )
    read_consistency: ConsistencyLevel = setting(
        "QUORUM", "How many copies must answer a read (used only with a factor above 1)."
    )
    write_consistency: ConsistencyLevel = setting(
        "QUORUM", "How many copies must acknowledge a write (used only with a factor above 1)."
    )
    # Two takers at the very same moment can both pass Weaviate's check that an id is new
    # (the last write wins), so each reads its write back this long after it.
    lease_settle_seconds: float = setting(
        0.3,
        "How long (seconds) after writing a source lease, a job slot or a job claim a "
        "process reads it back to know that it holds it.",
    )
    ollama_url: str = setting(
        "", "An external Ollama, e.g. `http://ollama:11434`; empty: the local stack's own."
    )
    collection_prefix: str = setting(
        "",
        "Prefix of the collection names (e.g. `Mxbai` → `MxbaiOriginalDocuments`): re-index "
        "into new collections when the embedding model changes, or keep indexes apart.",
    )

    def check(self) -> None:
        if self.replication_factor < 1:
            name = self.variables()["replication_factor"]
            raise ConfigurationError(f"{name} must be at least 1")
        if self.lease_settle_seconds < 0:
            name = self.variables()["lease_settle_seconds"]
            raise ConfigurationError(f"{name} must be at least 0")
