"""The test suite's choice of chat model (tests/support/models.py): the cheap settings
reach a `synopsis serve` subprocess unchanged, and they change only the model and its
output."""

from __future__ import annotations

from service.settings import Settings
from tests.support.models import (
    CHEAP_SUMMARY_MAX_TOKENS,
    MODEL_FIELDS,
    SMALLEST_CHAT_MODEL,
    cheap_model_settings,
    model_env,
)


def test_cheap_settings_use_the_smallest_model_briefly_without_the_guard() -> None:
    base = Settings().with_overrides(collection_prefix="TestX", summary_timeout=9.0)
    cheap = cheap_model_settings(base)
    assert (cheap.models.chat_model, cheap.models.resolved_answer_model) == (
        SMALLEST_CHAT_MODEL,
        SMALLEST_CHAT_MODEL,
    )
    assert (cheap.summaries.max_tokens, cheap.guard.enabled) == (CHEAP_SUMMARY_MAX_TOKENS, False)
    assert cheap.answers.max_tokens < base.answers.max_tokens
    unchanged = set(Settings.env_names()) - set(MODEL_FIELDS)
    assert all(cheap.value(name) == base.value(name) for name in unchanged)


def test_model_env_gives_a_subprocess_the_same_model_settings() -> None:
    for settings in (Settings(), cheap_model_settings(Settings())):
        loaded = Settings.from_env(model_env(settings))
        assert [loaded.value(name) for name in MODEL_FIELDS] == [
            settings.value(name) for name in MODEL_FIELDS
        ]
