"""The chat model a test runs, when it is not the default: the smallest local one, with
short replies (`cheap_model_settings`), and the same settings for a subprocess
(`model_env`).

Which fixture to choose (`settings`, `core_settings` or `cheap_settings`) is described
in tests/conftest.py.
"""

from __future__ import annotations

from service.settings import Settings

__all__ = [
    "CHEAP_ANSWER_MAX_TOKENS",
    "CHEAP_SUMMARY_MAX_TOKENS",
    "MODEL_FIELDS",
    "SMALLEST_CHAT_MODEL",
    "cheap_model_settings",
    "model_env",
]

#: The smallest chat model of the local stack (SmolLM2-135M-Instruct, Q4_1, ~90 MB): the
#: fastest to summarize with on a CPU.
SMALLEST_CHAT_MODEL = "smollm2-135m-instruct"
#: num_predict of a summary or an answer whose wording no test reads: a short sentence.
CHEAP_SUMMARY_MAX_TOKENS = 24
CHEAP_ANSWER_MAX_TOKENS = 40

#: The settings fields that choose the chat model and how much it writes.
MODEL_FIELDS = (
    "chat_model",
    "answer_model",
    "summary_max_tokens",
    "summary_guard",
    "answer_max_tokens",
)


def cheap_model_settings(settings: Settings) -> Settings:
    """`settings` with summaries and answers that only need to exist: the smallest chat
    model writes both, briefly, and the summary guard (which would retry) is off."""
    return settings.with_overrides(
        chat_model=SMALLEST_CHAT_MODEL,
        answer_model=SMALLEST_CHAT_MODEL,
        summary_max_tokens=CHEAP_SUMMARY_MAX_TOKENS,
        summary_guard=False,
        answer_max_tokens=CHEAP_ANSWER_MAX_TOKENS,
    )


def model_env(settings: Settings) -> dict[str, str]:
    """The `SYNOPSIS_*` variables that give a subprocess (`synopsis serve`, the CLI) the
    chat model settings of `settings`."""
    names = Settings.env_names()
    return {
        names[name]: str(int(value) if isinstance(value, bool) else value)
        for name in MODEL_FIELDS
        for value in [settings.value(name)]
    }
