"""Scripted chat models for answer tests: no network, every token counted."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field


class ScriptedStreamModel(BaseChatModel):
    """Replies `tokens`, one chunk each (after `delay` seconds when streamed async).

    `produced` counts the tokens it has written, `calls` the replies it was asked for;
    `closed` is set when a stream ended early (its consumer stopped or was cancelled)
    and `finished` when one ran to its end. With `error`, a stream raises it after its
    tokens.
    """

    tokens: list[str] = Field(default_factory=list)
    delay: float = 0.0
    error: Exception | None = None
    produced: int = 0
    calls: int = 0
    closed: bool = False
    finished: bool = False

    @property
    def _llm_type(self) -> str:
        return "scripted-stream-fake"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.calls += 1
        self.produced += len(self.tokens)
        reply = AIMessage(content="".join(self.tokens))
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _stream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        self.calls += 1
        try:
            for token in self.tokens:
                self.produced += 1
                yield ChatGenerationChunk(message=AIMessageChunk(content=token))
            if self.error is not None:
                raise self.error
            self.finished = True
        finally:
            self.closed = not self.finished and self.error is None

    async def _astream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        self.calls += 1
        try:
            for token in self.tokens:
                await asyncio.sleep(self.delay)
                self.produced += 1
                yield ChatGenerationChunk(message=AIMessageChunk(content=token))
            if self.error is not None:
                raise self.error
            self.finished = True
        finally:
            self.closed = not self.finished and self.error is None
