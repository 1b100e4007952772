"""The summary guard's settings: when a summary is flagged, and what is done then
(docs/summary-quality.md)."""

from __future__ import annotations

from dataclasses import dataclass

from service.settings.fields import Section, setting

__all__ = ["GuardSettings"]


@dataclass(frozen=True, kw_only=True)
class GuardSettings(Section):
    """The summary guard."""

    TOPIC = "Summary guard"
    PREFIX = "summary_"

    enabled: bool = setting(
        True,
        "Check every summary (docs/summary-quality.md): store an extractive one in place of "
        "a flagged one.",
        name="summary_guard",
    )
    min_words: int = setting(4, "Guard: a summary of fewer words is `empty`.")
    max_words: int = setting(100, "Guard: a summary of more words is `too_long`.")
    max_copied_share: float = setting(
        0.5, "Guard: the most of a summary's words in spans of 8+ words copied from its chunk."
    )
    max_repeated_share: float = setting(
        0.2, "Guard: the most of a summary's 5-grams that may repeat."
    )
    min_shared_terms: int = setting(
        1, "Guard: salient chunk terms (header words, identifiers) a summary must mention."
    )
    max_invented_claims: int = setting(
        1,
        "Guard (`invented`): numbers, URLs, names or code identifiers a summary may add "
        "that its chunk, headers and title lack; 0: not checked.",
    )
    max_unsupported_share: float = setting(
        0.15,
        "Guard (`invented`): the most of a summary's content words its chunk may lack; "
        "0: not checked.",
    )
    strict_retry: bool = setting(
        False,
        "Guard: write a flagged summary again with a stricter prompt before storing the "
        "extractive one. Off: on the labeled sample the retries that passed were invented "
        "far more often than the first attempts that passed (docs/summary-quality.md).",
    )
    retry_floor: float = setting(
        0.1,
        "Guard, with the strict retry on: when fewer than this share of the last 50 strict "
        "retries passed, a flagged "
        "summary gets the extractive one without a retry (every 10th still retries, to "
        "keep measuring); 0: always retry.",
    )
