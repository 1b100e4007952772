"""The retention settings: how long ended jobs, their uploads and idle conversations are kept."""

from __future__ import annotations

from dataclasses import dataclass

from service.errors import ConfigurationError
from service.settings.fields import Section, setting

__all__ = ["RetentionSettings"]


@dataclass(frozen=True, kw_only=True)
class RetentionSettings(Section):
    """Retention: what each service process removes, and how often it looks."""

    TOPIC = "Retention"
    PREFIX = ""

    sweep_seconds: float = setting(
        3600.0,
        "How often (seconds) each service process removes what is no longer kept, ended "
        "leases and stale slots; 0: never.",
        name="retention_sweep_seconds",
    )
    jobs_days: float = setting(
        30.0,
        "Jobs that ended longer ago (days) are removed, with their uploads; 0: kept.",
        name="jobs_retention_days",
    )
    uploads_days: float = setting(
        7.0,
        "The uploads of jobs that ended without `done` (kept for a retry) are removed after "
        "this many days; 0: kept.",
        name="uploads_retention_days",
    )
    conversations_days: float = setting(
        30.0,
        "Conversations idle this many days are removed; 0: kept.",
        name="conversations_retention_days",
    )

    def check(self) -> None:
        for attribute, variable in self.variables().items():
            if getattr(self, attribute) < 0:
                raise ConfigurationError(f"{variable} must be at least 0 (0: off)")
