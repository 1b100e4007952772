"""Conversations over HTTP with a fake core: start, ask twice (the second question as a
follow-up), read back, scoping to the key, the bounded history, delete, and bad bodies."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from service.settings import Settings
from tests.service.api.apps import client_over
from tests.service.api.test_api import FakeSynopsis, _ollama, _ollama_ok

KEYED = Settings().with_overrides(api_read_keys="conv-key-a, conv-key-b")
A = {"Authorization": "Bearer conv-key-a"}
B = {"Authorization": "Bearer conv-key-b"}


def _client(fake: FakeSynopsis) -> TestClient[Any]:
    # The app for these settings, built once (tests/service/api/apps.py).
    return client_over(fake, _ollama(_ollama_ok), settings=KEYED)


def test_a_conversation_keeps_its_turns_and_follow_ups_are_rewritten() -> None:
    fake = FakeSynopsis()
    with _client(fake) as client:
        started = client.post("/conversations", headers=A)
        assert started.status_code == 201
        conversation = started.json()
        assert conversation["turns"] == []
        path = f"/conversations/{conversation['id']}"

        first = client.post(f"{path}/messages", json={"question": "How do I loop?"}, headers=A)
        assert first.status_code == 200, first.text
        assert first.json()["turn"]["query"] == "How do I loop?"
        assert first.json()["turn"]["rewrite"] == "none"
        assert first.json()["answer"]["answer"] == "How do I loop?: use range() [1]"

        second = client.post(f"{path}/messages", json={"question": "backwards?"}, headers=A)
        turn = second.json()["turn"]
        assert (turn["question"], turn["query"], turn["rewrite"]) == (
            "backwards?",
            "How do I loop? backwards?",
            "previous",
        )
        assert turn["citations"] == ["docs/tutorial.md § Tutorial > Loops"]
        assert second.json()["answer"]["citations"][0]["source"] == "docs/tutorial.md"

        kept = client.get(path, headers=A).json()
        assert [t["question"] for t in kept["turns"]] == ["How do I loop?", "backwards?"]

        # The fake keeps two turns: a third pushes the first out.
        client.post(f"{path}/messages", json={"question": "with a step?"}, headers=A)
        kept = client.get(path, headers=A).json()
        assert [t["question"] for t in kept["turns"]] == ["backwards?", "with a step?"]


def test_another_key_sees_no_conversation_of_this_one() -> None:
    fake = FakeSynopsis()
    with _client(fake) as client:
        path = f"/conversations/{client.post('/conversations', headers=A).json()['id']}"
        for method, body in (("GET", None), ("DELETE", None), ("POST", {"question": "x?"})):
            url = f"{path}/messages" if method == "POST" else path
            response = client.request(method, url, json=body, headers=B)
            assert response.status_code == 404, (method, response.text)
        assert client.get(path, headers=A).status_code == 200  # still there


def test_delete_then_404_and_bad_bodies_are_400() -> None:
    fake = FakeSynopsis()
    with _client(fake) as client:
        path = f"/conversations/{client.post('/conversations', headers=A).json()['id']}"
        for body in ({}, {"question": ""}, {"question": "ok", "k": 3}, {"question": 7}):
            response = client.post(f"{path}/messages", json=body, headers=A)
            assert response.status_code == 400, (body, response.text)
        assert fake.conversations.saved[path.rsplit("/", 1)[1]].turns == ()

        assert client.delete(path, headers=A).json() == {"deleted": path.rsplit("/", 1)[1]}
        assert client.get(path, headers=A).status_code == 404
        assert client.get("/conversations/not-a-uuid", headers=A).status_code == 404
