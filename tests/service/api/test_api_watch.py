"""The Weaviate watch: a failed readiness probe makes requests answer 503 at once."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from litestar import Litestar, get
from litestar.testing import TestClient

from service.api.app import synopsis_error_handler
from service.api.watch import WeaviateWatch, refuse_while_down, watching_weaviate
from service.settings import Settings
from tests.service.serving import IN_PROCESS_URL

READY = "http://weaviate.test/v1/.well-known/ready"


def _probe(watch: WeaviateWatch, handler: httpx.MockTransport) -> None:
    async def once() -> None:
        async with httpx.AsyncClient(transport=handler) as http:
            await watch.probe(http)

    asyncio.run(once())


def _refused(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("refused", request=request)


@pytest.mark.parametrize(
    ("answer", "down", "reason"),
    [
        (lambda request: httpx.Response(200), False, ""),
        (lambda request: httpx.Response(503), True, "HTTP 503"),
        (
            lambda request: (_ for _ in ()).throw(httpx.ConnectError("refused")),
            True,
            "ConnectError",
        ),
    ],
)
def test_a_probe_records_whether_weaviate_is_ready(answer, down: bool, reason: str) -> None:
    watch = WeaviateWatch(READY)
    _probe(watch, httpx.MockTransport(answer))
    assert (watch.down, watch.reason) == (down, reason)


def test_requests_are_refused_while_down_and_pass_once_weaviate_is_back() -> None:
    @get("/search")
    async def search() -> str:
        return "hits"

    @get("/health")
    async def health() -> str:
        return "ok"

    watch = WeaviateWatch(READY)
    app = Litestar(
        [search, health],
        before_request=refuse_while_down,
        exception_handlers={Exception: synopsis_error_handler},
    )
    app.state.weaviate_watch = watch
    with TestClient(app, base_url=IN_PROCESS_URL) as client:
        _probe(watch, httpx.MockTransport(lambda request: httpx.Response(503)))
        refused = client.get("/search")
        assert refused.status_code == 503
        assert refused.headers["retry-after"]
        assert refused.json()["dependency"] == "weaviate"
        assert client.get("/health").text == "ok"  # answers without Weaviate

        _probe(watch, httpx.MockTransport(lambda request: httpx.Response(200)))
        assert client.get("/search").text == "hits"


def test_the_app_probes_at_the_configured_interval() -> None:
    async def interval(settings: Settings) -> float:
        app = Litestar([])
        async with watching_weaviate(app, settings):
            watch: WeaviateWatch = app.state.weaviate_watch
            return watch.interval

    assert Settings().api.weaviate_probe_seconds == 2.0
    assert (
        asyncio.run(interval(Settings().with_overrides(weaviate_url="http://127.0.0.1:9"))) == 2.0
    )
    assert (
        asyncio.run(
            interval(
                Settings().with_overrides(
                    weaviate_url="http://127.0.0.1:9", api_weaviate_probe_seconds=0.2
                )
            )
        )
        == 0.2
    )
