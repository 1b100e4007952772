"""`/mcp` inside the API app, in process over a fake Synopsis: the keys it takes, the
Hosts and Origins it serves, and the SDK's Streamable HTTP client through it (the real
`synopsis serve`: test_mcp_integration)."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import httpx2
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient, TestClient
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from service.api import create_app
from service.mcp import TOOL_NAMES
from service.query.answer import Answer
from service.query.search import SearchRequest
from service.settings import Settings
from service.synopsis import Synopsis
from tests.service.api.test_api import _ollama, _ollama_ok
from tests.service.mcp.test_mcp_tools import ToolSynopsis
from tests.service.serving import IN_PROCESS_URL

READ_KEY = "mcp-read-key"
WRITE_KEY = "mcp-write-key"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def _app(*, keys: bool) -> Litestar:
    fake = ToolSynopsis()
    if keys:
        fake.settings = Settings().with_overrides(api_read_keys=READ_KEY, api_write_keys=WRITE_KEY)
    return create_app(
        synopsis=cast(Synopsis, fake), ollama_http=_ollama(_ollama_ok), background=False
    )


@pytest.mark.parametrize(
    ("authorization", "detail"),
    [
        (None, "an API key is required"),
        ("Bearer not-a-key", "the API key is not valid"),
        (f"Basic {READ_KEY}", "the API key is not valid"),
    ],
)
def test_without_a_valid_key_mcp_is_the_apis_401(authorization: str | None, detail: str) -> None:
    headers = dict(MCP_HEADERS)
    if authorization is not None:
        headers["Authorization"] = authorization
    with TestClient(_app(keys=True), base_url=IN_PROCESS_URL) as client:
        response = client.post("/mcp", json=INITIALIZE, headers=headers)
    assert response.status_code == 401
    assert response.json()["detail"] == detail
    assert response.headers["www-authenticate"].startswith("Bearer")


@asynccontextmanager
async def _session(app: Litestar, key: str | None) -> AsyncIterator[ClientSession]:
    """An initialized SDK session to `app`'s /mcp, in process, the app's lifespan running."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        AsyncTestClient(app),  # runs the lifespan (the session manager)
        httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app),  # type: ignore[arg-type]
            base_url="http://127.0.0.1:8000",
            headers=headers,
        ) as http,
        streamable_http_client("http://127.0.0.1:8000/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@pytest.mark.parametrize(("keys", "key"), [(True, READ_KEY), (True, WRITE_KEY), (False, None)])
def test_a_read_key_suffices_and_without_keys_mcp_is_open(keys: bool, key: str | None) -> None:
    async def run() -> tuple[list[str], Any]:
        async with _session(_app(keys=keys), key) as session:
            tools = await session.list_tools()
            result = await session.call_tool("search_docs", {"query": "range()"})
            return [tool.name for tool in tools.tools], result

    names, result = anyio.run(run)
    assert tuple(names) == TOOL_NAMES
    assert not result.is_error
    assert "for i in range(3): ..." in result.content[0].text


def test_mcp_serves_again_when_the_apps_lifespan_runs_a_second_time() -> None:
    # An SDK session manager runs once only; the app makes a new one per lifespan, so
    # a second start of the same app (tests, a server's reload) serves /mcp again.
    app = _app(keys=False)
    for _ in range(2):
        with TestClient(app, base_url="http://127.0.0.1:8000") as client:
            response = client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
            assert response.status_code == 200, response.text
            assert response.json()["result"]["serverInfo"]["name"]


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "127.0.0.1:8000"}, 200),
        ({"Host": "localhost:8000", "Origin": "http://localhost:8000"}, 200),
        ({"Host": "[::1]:8000"}, 200),
        # DNS rebinding: another name that resolves to this machine.
        ({"Host": "rebound.example:8000"}, 400),
        # A page of another origin.
        ({"Host": "127.0.0.1:8000", "Origin": "http://evil.example"}, 403),
        ({"Host": "127.0.0.1:8000", "Origin": "null"}, 403),
    ],
)
def test_host_and_origin_are_checked(headers: dict[str, str], status: int) -> None:
    with TestClient(_app(keys=False), base_url=IN_PROCESS_URL) as client:
        response = client.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **headers})
    assert response.status_code == status, response.text


@pytest.mark.parametrize(
    ("settings", "served", "refused"),
    [
        (Settings().with_overrides(api_host="127.0.0.1"), "localhost:1", "10.0.0.5:8000"),
        # A wildcard address names no host.
        (
            Settings().with_overrides(api_host="0.0.0.0", api_allow_open=True),
            "127.0.0.2:8000",
            "0.0.0.0:8000",
        ),
        (
            Settings().with_overrides(api_host="docs.internal", api_allow_open=True),
            "docs.internal:8000",
            "other.internal:8000",
        ),
        (Settings().with_overrides(api_host="::1"), "[::1]:8000", "[::2]:8000"),
        # The app's SYNOPSIS_API_ALLOWED_HOSTS, as for every other route.
        (
            Settings().with_overrides(api_allowed_hosts="docs.corp"),
            "docs.corp:8000",
            "localhost:8000",
        ),
        (Settings().with_overrides(api_allowed_hosts="*.corp"), "mcp.docs.corp", "corp.example"),
    ],
)
def test_mcp_serves_the_hosts_and_origins_the_api_serves(
    settings: Settings, served: str, refused: str
) -> None:
    fake = ToolSynopsis()
    fake.settings = settings
    app = create_app(
        settings, synopsis=cast(Synopsis, fake), ollama_http=_ollama(_ollama_ok), background=False
    )
    with TestClient(app, base_url=IN_PROCESS_URL) as client:
        for host, origin, status in [
            (served, None, 200),
            (served, f"http://{served}", 200),
            (refused, None, 400),
            (served, f"http://{refused}", 403),
        ]:
            headers = {**MCP_HEADERS, "Host": host, **({"Origin": origin} if origin else {})}
            response = client.post("/mcp", json=INITIALIZE, headers=headers)
            assert response.status_code == status, (host, origin, response.text)
            assert response.headers["content-type"].startswith("application/json")


class SlowToolSynopsis(ToolSynopsis):
    """A core whose first answer waits for `release` (later ones do not: a call that should
    have been refused returns, and the test fails rather than hangs), noting the thread
    each answer ran on."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.threads: list[str] = []

    def ask(self, question: str, request: SearchRequest | None = None) -> Answer:
        self.threads.append(threading.current_thread().name)
        if len(self.threads) == 1:
            assert self.release.wait(timeout=60), "the test never released the model"
        return super().ask(question, request)


async def _until(predicate: Callable[[], bool], what: str) -> None:
    with anyio.fail_after(20, shield=False):
        while not predicate():
            await anyio.sleep(0.01)
    assert predicate(), what


def test_mcp_ask_runs_on_the_model_executor_within_the_keys_share_of_post_ask() -> None:
    # The MCP `ask` is POST /ask's model call: on the app's model threads, counted in the
    # key's SYNOPSIS_API_LLM_PER_KEY with its REST calls, never on the default executor.
    fake = SlowToolSynopsis()
    fake.settings = Settings().with_overrides(
        api_read_keys=f"{READ_KEY},{WRITE_KEY}", api_llm_workers=2, api_llm_per_key=1
    )
    app = create_app(
        synopsis=cast(Synopsis, fake), ollama_http=_ollama(_ollama_ok), background=False
    )
    question = {"question": "How do I loop?"}

    async def run() -> None:
        async with (
            AsyncTestClient(app),  # runs the lifespan (the model executor, the sessions)
            httpx2.AsyncClient(
                transport=httpx2.ASGITransport(app=app),  # type: ignore[arg-type]
                base_url="http://127.0.0.1:8000",
                headers={"Authorization": f"Bearer {READ_KEY}"},
            ) as http,
            streamable_http_client("http://127.0.0.1:8000/mcp", http_client=http) as (r, w),
            ClientSession(r, w) as session,
        ):
            await session.initialize()
            async with anyio.create_task_group() as tasks:
                first: list[Any] = []

                async def ask_first() -> None:
                    first.append(await session.call_tool("ask", question))

                tasks.start_soon(ask_first)
                try:
                    await _until(lambda: len(fake.threads) == 1, "the MCP ask to reach the model")
                    # The key's one call is taken: REST and MCP alike are refused at once.
                    rest = await http.post("/ask", json=question)
                    again = await session.call_tool("ask", question)
                finally:
                    fake.release.set()
            assert rest.status_code == 429, rest.text
            assert "SYNOPSIS_API_LLM_PER_KEY" in rest.json()["detail"]
            assert again.is_error
            assert "SYNOPSIS_API_LLM_PER_KEY" in again.content[0].text
            [answered] = first
            assert not answered.is_error, answered.content
            assert json.loads(answered.content[0].text)["kind"] == "generated"

    anyio.run(run)
    # The refused calls never reached the model; the one answer ran on a model thread.
    assert len(fake.threads) == 1, fake.threads
    assert fake.threads[0].startswith("synopsis-llm"), fake.threads
