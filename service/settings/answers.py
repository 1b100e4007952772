"""The answer settings: when `ask` answers "I don't know" without a model call, how long
an answer may be, the grounding check."""

from __future__ import annotations

from dataclasses import dataclass

from service.errors import ConfigurationError
from service.settings.fields import Section, setting

__all__ = ["ANSWER_MAX_K", "AnswerSettings"]

#: An answer cites at most this many passages (`ask --k`, `POST /ask`'s `k`), whatever
#: `SYNOPSIS_API_MAX_K` says.
ANSWER_MAX_K = 20


@dataclass(frozen=True, kw_only=True)
class AnswerSettings(Section):
    """Answers (`SYNOPSIS_ANSWER_*` but the answer model and its deadline)."""

    TOPIC = "Answers"
    PREFIX = "answer_"

    # Why 0.75: docs/eval.md (all-minilm-l6-v2 on the Python tutorial); re-measure with
    # `synopsis eval --sweep` for another embedding model.
    max_vector_distance: float = setting(
        0.75,
        "`ask`'s relevance gate: a question whose passages are all farther (cosine distance) "
        'is answered "I don\'t know" without a model call; 0: off.',
    )
    max_tokens: int = setting(
        300, "The longest answer the model may write (tokens, Ollama's num_predict)."
    )
    term_check: bool = setting(
        True,
        '`ask` answers "I don\'t know" without a model call when the question names something '
        "(a proper noun, an acronym, a code identifier) no retrieved passage mentions.",
    )
    # Why 0.7: docs/answers.md (re-measure for a larger answer model).
    min_support: float = setting(
        0.7,
        "Grounding check: the share of each answer sentence's content words a cited passage "
        "must hold, 0 to 1, or the answer is replaced by the extractive one.",
    )
    # Why on: the Qwen answer models answer "I don't know" to many questions whose
    # passages hold the answer (docs/answers.md).
    quote_on_refusal: bool = setting(
        True,
        'When the model answers "I don\'t know" although the passages passed the gate and the '
        "term check, `ask` quotes the best passage (an extractive answer) instead.",
    )

    def check(self) -> None:
        if not 0.0 <= self.min_support <= 1.0:
            raise ConfigurationError(
                f"{self.variables()['min_support']} must be between 0 and 1 (a share)"
            )
