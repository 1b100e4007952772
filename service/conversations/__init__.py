"""Conversations of the HTTP API: their turns (`records`) and their durable store (`store`)."""

from service.conversations.records import Conversation, Turn
from service.conversations.store import ConversationStore

__all__ = ["Conversation", "ConversationStore", "Turn"]
