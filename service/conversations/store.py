"""Durable conversations in Weaviate, beside the jobs: one object per conversation in
`Conversations` (name may carry `Settings.collection_prefix`), id = the conversation id,
its turns as JSON text. A turn is added by replacing the object (one writer per
conversation is expected: a client asks one question at a time)."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

import weaviate
from weaviate.classes.config import Configure, DataType, Property
from weaviate.collections import Collection

from service.conversations.records import Conversation, Turn
from service.index.replication import Replication
from service.index.schema import ensure_collection, keyword_property, stored_text

__all__ = ["ConversationStore"]


class ConversationStore:
    """Reads and writes conversations through one Weaviate client."""

    def __init__(
        self,
        client: weaviate.WeaviateClient,
        *,
        prefix: str = "",
        replication: Replication | None = None,
    ) -> None:
        self.client = client
        self.name = f"{prefix}Conversations"
        self.replication = replication or Replication()
        self._ensured = False

    @property
    def _reads(self) -> Collection[Any, Any]:
        return self.replication.for_reads(self.client.collections.use(self.name))

    @property
    def _writes(self) -> Collection[Any, Any]:
        return self.replication.for_writes(self.client.collections.use(self.name))

    def ensure_schema(self) -> None:
        """Create the collection unless it exists (once per store; safe in parallel)."""
        if not self._ensured:
            ensure_collection(self.client, self.name, self._create)
            self._ensured = True

    def _create(self) -> None:
        self.client.collections.create(
            self.name,
            description="Synopsis: conversations of the HTTP API",
            vector_config=Configure.Vectors.self_provided(),
            replication_config=self.replication.config(),
            properties=[
                keyword_property("owner"),
                Property(name="created_at", data_type=DataType.DATE),
                Property(name="updated_at", data_type=DataType.DATE),
                stored_text("turns"),
            ],
        )

    def drop(self) -> None:
        """Delete the collection (tests and explicit resets only)."""
        self.client.collections.delete(self.name)
        self._ensured = False

    def create(self, conversation: Conversation) -> None:
        """Store a new conversation."""
        self.ensure_schema()
        self._writes.data.insert(
            uuid=uuid.UUID(conversation.id), properties=_properties(conversation)
        )

    def save(self, conversation: Conversation) -> None:
        """Store `conversation` over its previous version."""
        self.ensure_schema()
        self._writes.data.replace(
            uuid=uuid.UUID(conversation.id), properties=_properties(conversation)
        )

    def get(self, conversation_id: str) -> Conversation | None:
        """The conversation, or None when there is none of that id."""
        try:
            key = uuid.UUID(conversation_id)
        except ValueError:
            return None
        self.ensure_schema()
        found = self._reads.query.fetch_object_by_id(key)
        if found is None:
            return None
        props = found.properties
        return Conversation(
            id=str(found.uuid),
            owner=str(props["owner"]),
            created_at=_date(props["created_at"]),
            updated_at=_date(props["updated_at"]),
            turns=tuple(Turn.from_dict(raw) for raw in json.loads(str(props["turns"]))),
        )

    def delete(self, conversation_id: str) -> None:
        """Remove the conversation (nothing happens when there is none)."""
        self.ensure_schema()
        self._writes.data.delete_by_id(uuid.UUID(conversation_id))


def _properties(conversation: Conversation) -> dict[str, Any]:
    return {
        "owner": conversation.owner,
        "created_at": conversation.created_at,
        "updated_at": conversation.updated_at,
        "turns": json.dumps([turn.to_dict() for turn in conversation.turns]),
    }


def _date(value: Any) -> dt.datetime:
    return value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value))
