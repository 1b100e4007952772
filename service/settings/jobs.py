"""The ingest job settings: how many run, how many wait, when one counts as interrupted."""

from __future__ import annotations

from dataclasses import dataclass

from service.errors import ConfigurationError
from service.settings.fields import Section, setting

__all__ = ["JobSettings"]


@dataclass(frozen=True, kw_only=True)
class JobSettings(Section):
    """Ingest jobs (`SYNOPSIS_JOBS_*`)."""

    TOPIC = "Ingest jobs"
    PREFIX = "jobs_"

    workers: int = setting(
        1, "Ingest jobs one service process runs at a time; 0: it only queues them."
    )
    queue_size: int = setting(100, "Queued jobs at most; a full queue answers 429.")
    per_key: int = setting(10, "Queued or running jobs of one API key, at most.")
    lease_seconds: float = setting(
        30.0,
        "A running job without a heartbeat for this long (seconds) is `interrupted`; "
        "heartbeats come every third of it.",
    )
    poll_seconds: float = setting(
        1.0,
        "How often (seconds) each service process looks for queued jobs; less than a third "
        "of the lease.",
    )
    # Keep it above the longest single step, `summary_timeout` (a summary that times out
    # falls back to an extractive one, which is progress).
    stall_seconds: float = setting(
        900.0,
        "A job with no progress (no chunk written, no summary finished) for this long "
        "(seconds) is `interrupted`.",
    )
    # 12 h: about 10,000 summaries at 4 s each.
    max_seconds: float = setting(
        43_200.0,
        "A job running longer (seconds) is `interrupted` (a retry goes on where it stopped); "
        "0: no limit.",
    )

    def check(self) -> None:
        names = self.variables()
        if not 0 < self.poll_seconds < self.lease_seconds / 3:
            raise ConfigurationError(
                f"{names['poll_seconds']} must be more than 0 and less than a third of "
                f"{names['lease_seconds']} (heartbeats are written every third of it)"
            )
        if self.stall_seconds <= 0 or self.max_seconds < 0:
            raise ConfigurationError(
                f"{names['stall_seconds']} must be more than 0 and "
                f"{names['max_seconds']} at least 0 (0: no limit)"
            )
