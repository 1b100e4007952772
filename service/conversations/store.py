"""Durable conversations in Weaviate, beside the jobs: one object per conversation in
`Conversations` (name may carry `Settings.external.collection_prefix`), id = the conversation id,
its turns as JSON text. A turn is added by replacing the object (one writer per
conversation is expected: a client asks one question at a time)."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

import weaviate
from weaviate.classes.config import DataType, Property
from weaviate.classes.query import Filter

from service.conversations.records import Conversation, Turn
from service.errors import ConversationLimitError
from service.index.leases import LeaseStore
from service.index.replication import Replication
from service.index.schema import RecordCollection, keyword_property, stored_text
from service.index.slots import Slots

__all__ = ["ConversationStore"]


class ConversationStore(RecordCollection):
    """Reads and writes conversations through one Weaviate client."""

    collection = "Conversations"
    description = "Synopsis: conversations of the HTTP API"

    def __init__(
        self,
        client: weaviate.WeaviateClient,
        *,
        prefix: str = "",
        replication: Replication | None = None,
        per_owner: int = 0,
        retry_after: int = 60,
    ) -> None:
        super().__init__(client, prefix=prefix, replication=replication)
        # At most `per_owner` conversations per key (0: no cap), one slot each.
        self.leases = LeaseStore(client, prefix=prefix, replication=self.replication)
        self.per_owner = per_owner
        self.retry_after = retry_after

    def properties(self) -> list[Property]:
        return [
            keyword_property("owner"),
            Property(name="created_at", data_type=DataType.DATE),
            Property(name="updated_at", data_type=DataType.DATE),
            stored_text("turns"),
        ]

    def create(self, conversation: Conversation) -> None:
        """Store a new conversation; `ConversationLimitError` when its owner has
        `per_owner` already (taken atomically across processes: `service.index.slots`)."""
        self.ensure_schema()
        if self.per_owner:
            slots = Slots(self.leases, kind="conversations", limit=self.per_owner)
            if not slots.take(conversation.owner, conversation.id):
                raise ConversationLimitError(
                    f"this API key has {self.per_owner} conversations "
                    f"(SYNOPSIS_CONVERSATIONS_PER_KEY={self.per_owner}); delete one, or wait "
                    "for one to expire",
                    retry_after=self.retry_after,
                )
        try:
            self._writes.data.insert(
                uuid=uuid.UUID(conversation.id), properties=_properties(conversation)
            )
        except BaseException:
            self.leases.release_held(conversation.id, kind="conversations")
            raise

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
        """Remove the conversation and give back its slot (nothing happens when there is
        none)."""
        self.ensure_schema()
        self._writes.data.delete_by_id(uuid.UUID(conversation_id))
        self.leases.release_held(conversation_id, kind="conversations")

    def idle_since(self, cutoff: dt.datetime, *, limit: int = 1_000) -> list[str]:
        """Ids of conversations not updated since `cutoff` (at most `limit`)."""
        self.ensure_schema()
        result = self._reads.query.fetch_objects(
            filters=Filter.by_property("updated_at").less_than(cutoff),
            limit=limit,
            return_properties=[],
        )
        return [str(obj.uuid) for obj in result.objects]

    def release_orphan_slots(self, *, taken_before: dt.datetime) -> int:
        """Give back the slots taken before `taken_before` whose conversation is gone (its
        process stopped between the slot and the write); how many."""
        self.ensure_schema()
        freed = 0
        for holder in self.leases.holders("conversations", taken_before=taken_before):
            if self.get(holder) is None:
                freed += self.leases.release_held(holder, kind="conversations")
        return freed


def _properties(conversation: Conversation) -> dict[str, Any]:
    return {
        "owner": conversation.owner,
        "created_at": conversation.created_at,
        "updated_at": conversation.updated_at,
        "turns": json.dumps([turn.to_dict() for turn in conversation.turns]),
    }


def _date(value: Any) -> dt.datetime:
    return value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value))
