"""The chunking and ingest settings: the largest chunk, the most chunks of a source, the
source leases."""

from __future__ import annotations

from dataclasses import dataclass

from service.errors import ConfigurationError
from service.settings.fields import Section, setting

__all__ = ["IngestSettings"]


@dataclass(frozen=True, kw_only=True)
class IngestSettings(Section):
    """Chunking and ingest."""

    TOPIC = "Chunking and ingest"
    PREFIX = ""

    max_tokens: int = setting(
        500, "The largest chunk (cl100k_base tokens); a longer line is cut inside."
    )
    # Each chunk costs a model call, so a source this large would take days on a small
    # machine (docs/reliability.md, the hostile sources).
    max_chunks_per_source: int = setting(
        2_000,
        "A source that splits into more chunks is not indexed (reported failed, naming this "
        "setting); 0: no limit.",
    )
    lock_seconds: float = setting(
        60.0,
        "Lease (seconds) an ingest or delete holds on each source it changes, renewed every "
        "third of it; a killed process's lease ends after it.",
        name="ingest_lock_seconds",
    )
    lock_wait_seconds: float = setting(
        600.0,
        "Seconds an ingest waits for a source another one holds before reporting it failed "
        "(a delete does not wait: HTTP 409).",
        name="ingest_lock_wait_seconds",
    )

    exclusive_model_calls: bool = setting(
        True,
        "An ingest embeds each batch of finished summaries while no summary call runs (on a "
        "few CPU cores the two models computing at once slow each other down); false: "
        "both at once, for a server with cores or a GPU to spare.",
        name="ingest_exclusive_model_calls",
    )

    def check(self) -> None:
        names = self.variables()
        if self.lock_seconds <= 0 or self.lock_wait_seconds < 0:
            raise ConfigurationError(
                f"{names['lock_seconds']} must be more than 0 and "
                f"{names['lock_wait_seconds']} at least 0"
            )
