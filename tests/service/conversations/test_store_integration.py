"""The conversation store on the real Weaviate: a conversation written, read back with its
turns, listed as idle, capped per owner, and deleted with its slot."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest

from service.connections import connect_weaviate
from service.conversations.records import Conversation, Turn
from service.conversations.store import ConversationStore
from service.errors import ConversationLimitError
from service.index.records import now
from service.settings import Settings

pytestmark = pytest.mark.integration

PREFIX = "TestConversationStore"


@pytest.fixture
def store(settings: Settings) -> Iterator[ConversationStore]:
    client = connect_weaviate(settings)
    conversations = ConversationStore(client, prefix=PREFIX, per_owner=2)
    conversations.drop()
    conversations.leases.drop()
    try:
        yield conversations
    finally:
        conversations.drop()
        conversations.leases.drop()
        client.close()


def _turn(question: str) -> Turn:
    return Turn(
        question=question,
        query=question,
        rewrite="none",
        answer="Use range().",
        kind="generated",
        citations=["tutorial/controlflow.html § 4.3. The range() Function"],
        asked_at=now(),
    )


def test_a_conversation_is_read_back_with_its_turns(store: ConversationStore) -> None:
    conversation = Conversation.new("key-a")
    store.create(conversation)
    answered = conversation.with_turn(_turn("How do I loop?"), max_turns=10)
    store.save(answered)
    found = store.get(conversation.id)
    assert found is not None
    assert (found.id, found.owner) == (conversation.id, "key-a")
    assert found.turns == answered.turns
    assert store.get("00000000-0000-0000-0000-000000000000") is None


def test_an_owner_at_its_cap_is_refused_until_it_deletes_one(store: ConversationStore) -> None:
    first, second = Conversation.new("key-a"), Conversation.new("key-a")
    store.create(first)
    store.create(second)
    store.create(Conversation.new("key-b"))  # another owner's share is its own
    with pytest.raises(ConversationLimitError):
        store.create(Conversation.new("key-a"))
    store.delete(first.id)
    assert store.get(first.id) is None
    store.create(Conversation.new("key-a"))  # the deleted one's slot is free again


def test_conversations_idle_since_a_moment_are_listed(store: ConversationStore) -> None:
    conversation = Conversation.new("key-a")
    store.create(conversation)
    assert conversation.id in store.idle_since(now() + dt.timedelta(seconds=1))
    assert conversation.id not in store.idle_since(now() - dt.timedelta(hours=1))
