"""The chat models' set-up per use: the summaries' and the answers' options."""

from __future__ import annotations

from service.models.chat import SUMMARY_STOP_SEQUENCES, answer_model, chat_model
from service.settings import Settings


def test_the_chat_model_has_stop_sequences_and_bounded_output() -> None:
    model = chat_model(Settings())
    assert model.stop == list(SUMMARY_STOP_SEQUENCES)
    assert (model.num_predict, model.repeat_penalty, model.temperature) == (120, 1.15, 0.0)


def test_the_answer_model_is_its_own_setting() -> None:
    assert answer_model(Settings()).model == "qwen2.5-coder-0.5b-instruct"
    model = answer_model(Settings().with_overrides(answer_model="qwen2.5:3b", answer_max_tokens=99))
    assert (model.model, model.num_predict, model.num_ctx) == ("qwen2.5:3b", 99, 4096)


_OPTIONS = ("temperature", "repeat_penalty", "num_ctx", "keep_alive", "base_url")


def test_summaries_and_answers_share_the_deterministic_options_and_differ_in_their_bounds() -> None:
    settings = Settings()
    summary, answer = chat_model(settings), answer_model(settings)
    shared = (0.0, 1.15, 4096, 1800, "http://127.0.0.1:11435")
    assert tuple(getattr(summary, name) for name in _OPTIONS) == shared
    assert tuple(getattr(answer, name) for name in _OPTIONS) == shared
    assert (summary.model, summary.num_predict, summary.client_kwargs) == (
        "qwen2.5-coder-1.5b-instruct",
        120,
        {"timeout": 300.0},
    )
    assert summary.stop == [
        "<|im_end|>",
        "<|im_start|>",
        "\n\n\n",
        "\nTopic:",
        "\nSection:",
        "\nHeader ",
    ]
    assert (answer.num_predict, answer.client_kwargs) == (300, {"timeout": 120.0})
    assert answer.stop == ["<|im_end|>", "<|im_start|>"]
