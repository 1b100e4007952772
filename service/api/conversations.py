"""Conversations: questions asked one after another, each follow-up rewritten into a
self-contained query from the turns before it (`Synopsis.converse`).

Each conversation belongs to the API key that started it (read keys may); another key
gets 404, as for a conversation that does not exist. State is kept in Weaviate, so it
survives a restart and every replica of the service sees it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import msgspec
from litestar import Controller, Request, delete, get, post
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, JSONBody
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED

from service.api.limits import check_answer_limits
from service.api.llm_work import LlmWork
from service.api.metrics import record_answer
from service.api.openapi import KEY_REQUIRED, error_responses
from service.api.schemas import AskResponse, Text
from service.api.security import caller_id, require_read
from service.conversations import Conversation, Turn
from service.synopsis import Synopsis

__all__ = ["ConversationController"]

SynopsisDependency = NamedDependency[Synopsis]
LlmWorkDependency = NamedDependency[LlmWork]


class MessageBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A question asked in a conversation."""

    question: Text


class TurnView(msgspec.Struct, kw_only=True):
    """One turn: the question as asked, the query searched for it (`rewrite`: none, model
    or previous), the answer, its kind and what it cited."""

    question: str
    query: str
    rewrite: str
    answer: str
    kind: str
    citations: list[str]
    asked_at: dt.datetime

    @classmethod
    def from_turn(cls, turn: Turn) -> TurnView:
        """The response form of a stored turn."""
        return cls(
            question=turn.question,
            query=turn.query,
            rewrite=turn.rewrite,
            answer=turn.answer,
            kind=turn.kind,
            citations=list(turn.citations),
            asked_at=turn.asked_at,
        )


class ConversationView(msgspec.Struct, kw_only=True):
    """A conversation and its kept turns, oldest first."""

    id: str
    created_at: dt.datetime
    updated_at: dt.datetime
    turns: list[TurnView]

    @classmethod
    def from_conversation(cls, conversation: Conversation) -> ConversationView:
        """The response form of a stored conversation."""
        return cls(
            id=conversation.id,
            created_at=conversation.created_at,
            updated_at=conversation.updated_at,
            turns=[TurnView.from_turn(turn) for turn in conversation.turns],
        )


class MessageResponse(msgspec.Struct, kw_only=True):
    """The answer to a question in a conversation, and the turn it made."""

    conversation_id: str
    turn: TurnView
    answer: AskResponse


class DeletedConversation(msgspec.Struct, kw_only=True):
    """What `DELETE /conversations/{id}` removed."""

    deleted: str


class ConversationController(Controller):
    """Start a conversation, ask in it, read it back, delete it."""

    path = "/conversations"
    security = KEY_REQUIRED
    tags = ("conversations",)
    guards = (require_read,)

    @post(
        operation_id="startConversation",
        summary="Start a conversation",
        status_code=HTTP_201_CREATED,
        responses=error_responses(401, 429, 503),
    )
    async def start(
        self, request: Request[Any, Any, Any], synopsis: SynopsisDependency
    ) -> ConversationView:
        """A new conversation of the calling key, without turns; 429 when the key has as
        many as it may keep (`SYNOPSIS_CONVERSATIONS_PER_KEY`)."""
        started = await asyncio.to_thread(synopsis.start_conversation, caller_id(request))
        return ConversationView.from_conversation(started)

    @get(
        "/{conversation_id:str}",
        operation_id="getConversation",
        summary="A conversation and its turns",
        responses=error_responses(400, 401, 404, 503),
    )
    async def read(
        self,
        request: Request[Any, Any, Any],
        synopsis: SynopsisDependency,
        conversation_id: FromPath[str],
    ) -> ConversationView:
        """The conversation's kept turns, oldest first; 404 for another key's."""
        found = await _owned(request, synopsis, conversation_id)
        return ConversationView.from_conversation(found)

    @post(
        "/{conversation_id:str}/messages",
        operation_id="askInConversation",
        summary="Ask a question in a conversation",
        status_code=HTTP_200_OK,
        responses=error_responses(400, 401, 404, 409, 413, 415, 429, 503),
    )
    async def ask(
        self,
        request: Request[Any, Any, Any],
        synopsis: SynopsisDependency,
        llm_work: LlmWorkDependency,
        conversation_id: FromPath[str],
        data: JSONBody[MessageBody],
    ) -> MessageResponse:
        """Answer `question` as a follow-up of the conversation's earlier turns: it is
        rewritten into a self-contained query first (`turn.query`, how: `turn.rewrite`),
        which is searched and answered like `POST /ask`; the turn is stored. The model calls
        count against the key's share, as `POST /ask`'s (429 past it)."""
        check_answer_limits(data.question, None, synopsis.settings)
        found = await _owned(request, synopsis, conversation_id)
        updated, answer = await llm_work.run(
            caller_id(request), synopsis.converse, found, data.question
        )
        record_answer(answer)
        return MessageResponse(
            conversation_id=updated.id,
            turn=TurnView.from_turn(updated.turns[-1]),
            answer=AskResponse.from_answer(answer),
        )

    @delete(
        "/{conversation_id:str}",
        operation_id="deleteConversation",
        summary="Delete a conversation",
        status_code=HTTP_200_OK,
        responses=error_responses(400, 401, 404, 503),
    )
    async def remove(
        self,
        request: Request[Any, Any, Any],
        synopsis: SynopsisDependency,
        conversation_id: FromPath[str],
    ) -> DeletedConversation:
        """Delete the conversation and its turns; 404 for another key's."""
        found = await _owned(request, synopsis, conversation_id)
        await asyncio.to_thread(synopsis.conversations.delete, found.id)
        return DeletedConversation(deleted=found.id)


async def _owned(
    request: Request[Any, Any, Any], synopsis: Synopsis, conversation_id: str
) -> Conversation:
    found = await asyncio.to_thread(synopsis.conversations.get, conversation_id)
    if found is None or found.owner != caller_id(request):
        raise NotFoundException(detail=f"no conversation {conversation_id}")
    return found
