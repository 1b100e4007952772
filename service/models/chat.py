"""The chat models behind Ollama: one factory, set up per use.

`ollama_chat` builds every chat model Synopsis talks to (deterministic, one shared context
size so Ollama loads each model once, a bound on each wait); `chat_model` is the one that
writes summaries, `answer_model` the one that writes answers, document summaries and
follow-up rewrites; the PDF captioner (`service.models.captions`) names the vision model.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_ollama import ChatOllama

from service.settings import Settings

__all__ = [
    "ANSWER_STOP_SEQUENCES",
    "SUMMARY_STOP_SEQUENCES",
    "answer_model",
    "chat_model",
    "ollama_chat",
]

#: A summary's generation stops at chat-template tokens, runs of blank lines, and a new
#: label line (the model starting to write another "section"). The scaffolding detector
#: (`service.ingest.quality`) catches a label at the very start.
SUMMARY_STOP_SEQUENCES = (
    "<|im_end|>",
    "<|im_start|>",
    "\n\n\n",
    "\nTopic:",
    "\nSection:",
    "\nHeader ",
)

#: An answer's generation stops only at the chat template's end tokens.
ANSWER_STOP_SEQUENCES = ("<|im_end|>", "<|im_start|>")


def ollama_chat(
    settings: Settings,
    *,
    max_tokens: int,
    stop: Sequence[str] = (),
    model: str | None = None,
    timeout: float,
) -> ChatOllama:
    """A chat model behind the configured Ollama (the settings' chat model unless
    `model` names another, e.g. the vision model): deterministic, at most `max_tokens`
    per reply. Every chat model shares one context size, so Ollama loads each once.

    `timeout` bounds each wait on the server (connecting, each read: the whole reply, or
    each part of a streamed one), so a hung server fails the call rather than holding it.
    """
    return ChatOllama(
        model=model or settings.models.chat_model,
        base_url=settings.resolved_ollama_url,
        temperature=0.0,
        num_predict=max_tokens,
        repeat_penalty=1.15,
        num_ctx=settings.models.chat_context_tokens,
        stop=list(stop) or None,
        keep_alive=1800,
        client_kwargs={"timeout": timeout},
    )


def chat_model(settings: Settings) -> ChatOllama:
    """The configured chat model behind Ollama, set up for short, deterministic summaries."""
    return ollama_chat(
        settings,
        max_tokens=settings.summaries.max_tokens,
        stop=SUMMARY_STOP_SEQUENCES,
        timeout=settings.summaries.timeout,
    )


def answer_model(settings: Settings) -> ChatOllama:
    """The answer model (`answer_model`, else the chat model) set up for answers:
    deterministic, up to `answer_max_tokens`, stopped only by the chat template's end
    tokens."""
    return ollama_chat(
        settings,
        max_tokens=settings.answers.max_tokens,
        stop=ANSWER_STOP_SEQUENCES,
        model=settings.models.resolved_answer_model,
        timeout=settings.deadlines.answer_timeout,
    )
