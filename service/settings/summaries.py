"""The summary settings: how summaries are written (calls, deadline, retries, prompt) and
attached."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Literal

from service.errors import ConfigurationError
from service.settings.fields import Section, setting

__all__ = ["PROMPT_VERSIONS", "PromptVersion", "SummarySettings"]

#: The summary prompts (`summary_prompt_version`; their texts: service/ingest/prompts.py,
#: `PROMPTS`, whose keys are exactly these).
PromptVersion = Literal["v2", "v3-retrieval", "v4-questions", "v5-summary-questions"]
PROMPT_VERSIONS: tuple[PromptVersion, ...] = typing.get_args(PromptVersion)


@dataclass(frozen=True, kw_only=True)
class SummarySettings(Section):
    """Summaries (`SYNOPSIS_SUMMARY_*` but the guard's)."""

    TOPIC = "Summaries"
    PREFIX = "summary_"

    concurrency: int = setting(2, "Summary calls to Ollama running at once.")
    timeout: float = setting(
        300.0, "Seconds per summary call, including the wait in Ollama's queue."
    )
    retries: int = setting(3, "Retries of a failed summary call.")
    slow_seconds: float = setting(
        60.0, "A summary call slower than this (seconds) is logged and counted in the report."
    )
    # Kept below summary_max_words (about 0.75 words per token), so that a reply cut by the
    # limit is not "too_long".
    max_tokens: int = setting(
        120, "The longest summary the model may write (tokens, Ollama's num_predict)."
    )
    prompt_version: PromptVersion = setting(
        "v2",
        "The summary prompt (service/ingest/prompts.py); part of each summary's id.",
    )
    min_similarity: float = setting(
        0.0,
        "A summary whose embedding's cosine similarity to its chunk's is lower is stored but "
        "not attached to its chunk; `synopsis reattach` applies a change without model calls.",
    )

    def check(self) -> None:
        if not self.timeout > 0:  # a deadline of 0 would fail every call
            raise ConfigurationError(f"{self.variables()['timeout']} must be more than 0 seconds")
