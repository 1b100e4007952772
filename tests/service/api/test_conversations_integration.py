"""A conversation on the real stack: a question, then a follow-up that the real chat
model rewrites from it, both answered from the index; the turns survive a restart of the
service (a new app over the same Weaviate); another key cannot see them."""

from __future__ import annotations

import pytest
from litestar.testing import TestClient

from service.api import create_app
from service.ingest.report import IngestReport
from service.query.answer import DONT_KNOW
from service.settings import Settings
from tests.service.serving import IN_PROCESS_URL
from tests.support.corpus import CONTROLFLOW
from tests.support.models import CHEAP_ANSWER_MAX_TOKENS

pytestmark = pytest.mark.integration

KEYS = "conv-read-a, conv-read-b"
A = {"Authorization": "Bearer conv-read-a"}
B = {"Authorization": "Bearer conv-read-b"}
FIRST = "How do I loop over a sequence of numbers in Python?"
FOLLOW_UP = "and how do I make it count down instead?"


def test_a_follow_up_is_rewritten_answered_and_kept_across_a_restart(
    core_settings: Settings, controlflow: IngestReport
) -> None:
    # The answers' words are not what this test checks (the CLI's `ask` and
    # tests/service/test_default_model_integration.py check answers at full length), so
    # they are short, from two passages, not five (the prompt of five took the smallest
    # model about 18 s to read, of two about 3 s). The model's rewrite shares the length
    # limit, which a usable one (at most the two questions' length plus 20 characters)
    # stays under.
    settings = core_settings.with_overrides(
        api_read_keys=KEYS,
        jobs_workers=0,
        conversation_rewrite="model",
        answer_max_tokens=CHEAP_ANSWER_MAX_TOKENS,
        search_k=2,
    )
    with TestClient(create_app(settings), base_url=IN_PROCESS_URL) as client:
        conversation = client.post("/conversations", headers=A).json()
        path = f"/conversations/{conversation['id']}"
        first = client.post(f"{path}/messages", json={"question": FIRST}, headers=A)
        assert first.status_code == 200, first.text
        assert first.json()["turn"]["rewrite"] == "none"
        second = client.post(f"{path}/messages", json={"question": FOLLOW_UP}, headers=A)
        assert second.status_code == 200, second.text
        turn = second.json()["turn"]
        # The real model wrote the query, or its reply was unusable and the previous
        # question leads; which one differs between machines, each is exact.
        if turn["rewrite"] == "model":
            assert turn["query"] not in (FOLLOW_UP, f"{FIRST} {FOLLOW_UP}")
            assert turn["query"].strip()
            assert "\n" not in turn["query"]
        else:
            assert (turn["rewrite"], turn["query"]) == ("previous", f"{FIRST} {FOLLOW_UP}")
        answer = second.json()["answer"]
        assert turn["answer"] == answer["answer"]
        if answer["kind"] == "refusal":
            assert (answer["answer"], answer["citations"]) == (DONT_KNOW, [])
        else:
            assert answer["kind"] in ("generated", "extractive")
            assert answer["citations"]
            assert {c["source"] for c in answer["citations"]} == {CONTROLFLOW}

    # A new app (a restarted service) reads the same turns from Weaviate.
    with TestClient(create_app(settings), base_url=IN_PROCESS_URL) as client:
        kept = client.get(path, headers=A)
        assert kept.status_code == 200
        assert [t["question"] for t in kept.json()["turns"]] == [FIRST, FOLLOW_UP]
        assert kept.json()["turns"][1]["query"] == turn["query"]
        assert client.get(path, headers=B).status_code == 404
        assert client.delete(path, headers=A).status_code == 200
        assert client.get(path, headers=A).status_code == 404
