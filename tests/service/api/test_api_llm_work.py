"""LLM work (answers, conversation turns, streamed answers) on an executor of its own, with
a per-key limit: slow model calls must not take the threads that searches, listings and job
polls run on, and one key must not take every model slot."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import httpx
import pytest
from litestar.testing import AsyncTestClient

from service.api import create_app
from service.errors import ConfigurationError
from service.query.answer import Answer
from service.query.search import SearchRequest
from service.settings import Settings
from service.synopsis import Synopsis
from tests.service.api.test_api import FakeSynopsis, _ollama, _ollama_ok
from tests.service.serving import IN_PROCESS_URL

KEYS = [f"llm-key-{n:02d}-0123456789" for n in range(10)]
#: More slow asks than the default executor has threads on any machine this runs on
#: (min(32, cpus + 4)).
SLOW_ASKS = 8
WAIT = 20.0  # seconds a request that should not wait is given (it takes milliseconds)


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


class SlowSynopsis(FakeSynopsis):
    """A core whose model calls (ask, converse, a streamed answer) wait for `release`."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.waiting = 0  # model calls begun (`started` counts the fake's conversations)
        self._lock = threading.Lock()

    def _wait(self) -> None:
        with self._lock:
            self.waiting += 1
        assert self.release.wait(timeout=120), "the test never released the model"

    def ask(self, question: str, request: SearchRequest | None = None) -> Answer:
        self._wait()
        return super().ask(question, request)

    async def aask_stream(
        self, question: str, request: SearchRequest | None = None
    ) -> AsyncIterator[str | Answer]:
        events = await super().aask_stream(question, request)

        async def slow() -> AsyncIterator[str | Answer]:
            await asyncio.to_thread(self._wait)  # a thread here only to wait on the event
            async for item in events:
                yield item

        return slow()


def _app(fake: FakeSynopsis, **settings: Any) -> Any:
    configured = Settings().with_overrides(api_read_keys=",".join(KEYS), **settings)
    fake.settings = configured
    return create_app(
        configured, synopsis=cast(Synopsis, fake), ollama_http=_ollama(_ollama_ok), background=False
    )


@asynccontextmanager
async def _client(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    """Requests to `app` on this event loop, concurrently (Litestar's AsyncTestClient sends
    one at a time); its lifespan runs through an AsyncTestClient meanwhile."""
    async with (
        AsyncTestClient(app, base_url=IN_PROCESS_URL),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=IN_PROCESS_URL) as http,
    ):
        yield http


async def _until(predicate: Any, what: str) -> None:
    for _ in range(400):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_searches_and_listings_answer_while_slow_asks_hold_the_model() -> None:
    fake = SlowSynopsis()

    async def run() -> None:
        app = _app(fake, api_llm_workers=SLOW_ASKS, api_llm_per_key=1)
        async with _client(app) as client:
            asks = [
                asyncio.create_task(
                    client.post("/ask", json={"question": "How do I loop?"}, headers=_auth(key))
                )
                for key in KEYS[:SLOW_ASKS]
            ]
            await _until(lambda: fake.waiting == SLOW_ASKS, "every ask to reach the model")
            try:
                search = await asyncio.wait_for(
                    client.post("/search", json={"query": "range()"}, headers=_auth(KEYS[-1])),
                    WAIT,
                )
                sources = await asyncio.wait_for(
                    client.get("/sources", headers=_auth(KEYS[-1])), WAIT
                )
                conversation = await asyncio.wait_for(
                    client.post("/conversations", headers=_auth(KEYS[-1])), WAIT
                )
            finally:
                fake.release.set()
            assert search.status_code == 200, search.text
            assert sources.status_code == 200, sources.text
            assert conversation.status_code == 201, conversation.text
            answered = await asyncio.gather(*asks)
            assert [response.status_code for response in answered] == [200] * SLOW_ASKS

    asyncio.run(run())


@pytest.mark.parametrize("stream", [False, True])
def test_a_key_past_its_limit_of_model_calls_is_429_with_retry_after(stream: bool) -> None:
    fake = SlowSynopsis()
    body = {"question": "How do I loop?", "stream": stream}

    async def run() -> None:
        app = _app(fake, api_llm_workers=4, api_llm_per_key=2)
        async with _client(app) as client:
            first = [
                asyncio.create_task(client.post("/ask", json=body, headers=_auth(KEYS[0])))
                for _ in range(2)
            ]
            await _until(lambda: fake.waiting == 2, "two asks to reach the model")
            try:
                third = await client.post("/ask", json=body, headers=_auth(KEYS[0]))
                conversation = (await client.post("/conversations", headers=_auth(KEYS[0]))).json()
                turn = await client.post(
                    f"/conversations/{conversation['id']}/messages",
                    json={"question": "And then?"},
                    headers=_auth(KEYS[0]),
                )
                other = asyncio.create_task(client.post("/ask", json=body, headers=_auth(KEYS[1])))
                await _until(lambda: fake.waiting == 3, "another key's ask to reach the model")
            finally:
                fake.release.set()
            for refused in (third, turn):
                assert refused.status_code == 429, refused.text
                assert refused.headers["retry-after"].isdigit()
                body_json = refused.json()
                assert body_json["error"] == "TooManyRequestsError"
                assert "SYNOPSIS_API_LLM_PER_KEY" in body_json["detail"]
            assert (await other).status_code == 200
            assert [(await task).status_code for task in first] == [200, 200]
            # Once its calls ended, the key may ask again.
            again = await client.post("/ask", json=body, headers=_auth(KEYS[0]))
            assert again.status_code == 200, again.text

    asyncio.run(run())


def test_model_calls_beyond_the_workers_wait_for_a_slot() -> None:
    fake = SlowSynopsis()

    async def run() -> None:
        app = _app(fake, api_llm_workers=2, api_llm_per_key=5)
        async with _client(app) as client:
            asks = [
                asyncio.create_task(
                    client.post("/ask", json={"question": "Why?"}, headers=_auth(KEYS[0]))
                )
                for _ in range(3)
            ]
            await _until(lambda: fake.waiting == 2, "two asks to reach the model")
            await asyncio.sleep(0.5)
            assert fake.waiting == 2  # the third waits for one of the two slots
            fake.release.set()
            answered = await asyncio.gather(*asks)
            assert [response.status_code for response in answered] == [200, 200, 200]
            assert fake.waiting == 3

    asyncio.run(run())


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"api_llm_workers": 0}, "SYNOPSIS_API_LLM_WORKERS must be at least 1"),
        ({"api_llm_per_key": 0}, "SYNOPSIS_API_LLM_PER_KEY must be at least 1"),
    ],
)
def test_the_limits_are_checked(settings: dict[str, int], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        Settings().with_overrides(**settings)  # type: ignore[arg-type]
