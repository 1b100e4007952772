"""The MCP tools with the SDK's own clients against a real `synopsis serve` (Streamable
HTTP at /mcp) and a real `synopsis mcp` (stdio), over the session's ingest of the
"More Control Flow Tools" page (collections `TestCore`, tests/service/conftest.py).

Nothing here asks the chat model to write: `ask` is asked a question the index cannot
answer, which is refused before any model call.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from loaders import load
from service.ingest.report import IngestReport
from service.mcp import INSTRUCTIONS, TOOL_NAMES
from service.query.injection import CLOSE_TAG, DATA_NOTE
from service.synopsis import Synopsis
from splitters.encoding import count_tokens
from tests.service.serving import SYNOPSIS, free_port, kill_group, start_serve, wait_healthy
from tests.support.corpus import CONTROLFLOW, CORE_PREFIX

pytestmark = pytest.mark.integration

READ_KEY = "mcp-integration-read-key"
WRITE_KEY = "mcp-integration-write-key"
#: A question about another language: refused before the model (`missing_terms`).
OUT_OF_SCOPE = "How do I write a Go program that prints the numbers from 1 to 30?"
SECTION = "4.7. Defining Functions"
TIMEOUT = httpx2.Timeout(120.0)
_FENCE = re.compile(r"^```[^\n]*\n.*?^```$", re.MULTILINE | re.DOTALL)


@pytest.fixture(scope="module")
def page_code() -> list[str]:
    """The fenced code blocks of the page as the loader makes it (what was indexed)."""
    [page] = load([CONTROLFLOW])
    return _FENCE.findall(page.page_content)


@pytest.fixture(scope="module")
def mcp_url(controlflow: IngestReport, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`synopsis serve` over the session's collections, with keys; its /mcp URL."""
    port = free_port()
    env = {
        "SYNOPSIS_COLLECTION_PREFIX": CORE_PREFIX,
        "SYNOPSIS_API_READ_KEYS": READ_KEY,
        "SYNOPSIS_API_WRITE_KEYS": WRITE_KEY,
    }
    log = tmp_path_factory.mktemp("mcp-serve") / "serve.log"
    process = start_serve(port, env, log)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, process, log)
        yield f"{base}/mcp"
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    finally:
        kill_group(process)


@asynccontextmanager
async def http_session(url: str, key: str | None = READ_KEY) -> AsyncIterator[ClientSession]:
    """An initialized session of the SDK's Streamable HTTP client, with `key`."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=TIMEOUT) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def _text(result: CallToolResult) -> str:
    [content] = result.content
    return str(content.text)  # type: ignore[union-attr]


def _call(url: str, name: str, arguments: dict[str, Any]) -> CallToolResult:
    async def call() -> CallToolResult:
        async with http_session(url) as session:
            return await session.call_tool(name, arguments)

    return anyio.run(call)


def test_initialize_and_list_the_tools(mcp_url: str) -> None:
    async def run() -> tuple[Any, list[Any]]:
        async with http_session(mcp_url) as session:
            initialized = await session.initialize()  # the handshake's result, kept
            tools = await session.list_tools()
            return initialized, tools.tools

    initialized, tools = anyio.run(run)
    assert (initialized.server_info.name, initialized.protocol_version) == (
        "synopsis",
        "2025-11-25",
    )
    assert initialized.instructions == INSTRUCTIONS
    assert tuple(tool.name for tool in tools) == TOOL_NAMES
    assert all(tool.annotations.read_only_hint for tool in tools)


def test_search_docs_gives_the_pages_code_byte_exact_within_the_budget(
    mcp_url: str, page_code: list[str]
) -> None:
    [fib] = [block for block in page_code if "def fib(n):" in block]
    budget = 4000  # its section (~1,400 tokens) fits beside the largest other one
    result = _call(
        mcp_url,
        "search_docs",
        {
            "query": "a function that writes the Fibonacci series",
            "source_prefix": CONTROLFLOW,
            "max_tokens": budget,
        },
    )
    text = _text(result)
    assert not result.is_error, text
    assert fib in text
    assert count_tokens(text) <= budget
    assert f"Source: {CONTROLFLOW}#" in text


def test_read_section_gives_a_section_of_several_chunks_whole_and_in_order(
    mcp_url: str, core: Synopsis
) -> None:
    chunks, _ = core.store.source_chunks(CONTROLFLOW, limit=100)
    section = [chunk for chunk in chunks if chunk.headers and chunk.headers[-1] == SECTION]
    assert len(section) > 1  # the point: one section, several chunks
    result = _call(mcp_url, "read_section", {"source": CONTROLFLOW, "section": SECTION})
    text = _text(result)
    assert not result.is_error, text
    assert f"The whole section {' > '.join(section[0].headers)}: chunks 0-" in text
    positions = [text.index(chunk.content) for chunk in section]
    assert positions == sorted(positions)
    assert text.index(f"## {SECTION}") < positions[0]
    # Fenced as data, with the section's header path (the answer prompt's fence).
    fence = f'<passage id="1" source="{CONTROLFLOW}" section="{" > ".join(section[0].headers)}">'
    assert text.index(DATA_NOTE) < text.index(fence) < positions[0]
    assert positions[-1] < text.index(CLOSE_TAG)


@pytest.mark.parametrize(
    ("authorization", "status"),
    [(None, 401), ("Bearer not-a-key", 401), (f"Bearer {READ_KEY}", 200)],
)
def test_no_key_is_401_and_a_read_key_works(
    mcp_url: str, authorization: str | None, status: int
) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    if authorization:
        headers["Authorization"] = authorization
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    response = httpx.post(mcp_url, json=initialize, headers=headers, timeout=60)
    assert response.status_code == status, response.text


def test_an_invalid_argument_is_a_tool_error_naming_it(mcp_url: str) -> None:
    result = _call(mcp_url, "search_docs", {"query": "range()", "max_tokens": 10})
    assert result.is_error
    assert "max_tokens" in _text(result)


def test_ask_out_of_scope_is_the_refusal_post_ask_gives(mcp_url: str) -> None:
    result = _call(mcp_url, "ask", {"question": OUT_OF_SCOPE})
    assert not result.is_error, _text(result)
    rest = httpx.post(
        mcp_url.removesuffix("/mcp") + "/ask",
        json={"question": OUT_OF_SCOPE},
        headers={"Authorization": f"Bearer {READ_KEY}"},
        timeout=120,
    ).json()
    assert result.structured_content == rest
    assert (rest["kind"], rest["llm_called"]) == ("refusal", False)


def _stdio_env() -> dict[str, str]:
    """What the stdio server needs of this environment: the SYNOPSIS_* settings."""
    env = {key: value for key, value in os.environ.items() if key.startswith("SYNOPSIS_")}
    return {**env, "SYNOPSIS_COLLECTION_PREFIX": CORE_PREFIX}


def test_stdio_serves_the_same_tools_and_exits_cleanly_when_its_client_closes(
    controlflow: IngestReport, page_code: list[str], tmp_path: Path
) -> None:
    exit_file = tmp_path / "exit-code"
    # A shell records the server's exit code: written only if it exits by itself once
    # its stdin closes (the client kills it after a grace period otherwise).
    server = StdioServerParameters(
        command="/bin/sh",
        args=["-c", f'"{SYNOPSIS}" mcp; echo $? > "{exit_file}"'],
        env=_stdio_env(),
    )

    async def run() -> tuple[list[str], CallToolResult]:
        async with (
            stdio_client(server) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = await session.list_tools()
            result = await session.call_tool(
                "search_docs",
                {"query": "a function that writes the Fibonacci series", "max_tokens": 4000},
            )
            return [tool.name for tool in tools.tools], result

    names, result = anyio.run(run)
    assert tuple(names) == TOOL_NAMES
    [fib] = [block for block in page_code if "def fib(n):" in block]
    assert fib in _text(result)
    assert exit_file.read_text().strip() == "0"


# -- the configuration snippets of docs/mcp.md and the README -----------------------------

ROOT = Path(__file__).resolve().parents[3]
#: Where the snippets are, and how many of each transport each must show.
SNIPPETS = {"docs/mcp.md": {"http": 3, "stdio": 3}, "README.md": {"http": 1, "stdio": 1}}
#: What the snippets write for what a reader fills in.
DOCUMENTED_URL = "http://127.0.0.1:8000/mcp"
KEY_PLACEHOLDER = "<read key>"
_BLOCK = re.compile(r"^```(json|sh)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Snippet:
    """One way to reach the server that a snippet configures."""

    transport: str  # "http" or "stdio"
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()


def _claude(line: str) -> Snippet:
    """`claude mcp add [options] NAME URL [options]` or `… NAME -- COMMAND ARGS`; each
    option takes one value."""
    words = shlex.split(line)
    assert words[:3] == ["claude", "mcp", "add"], line
    options: dict[str, list[str]] = {}
    positional: list[str] = []
    rest = words[3:]
    while rest and rest[0] != "--":
        if rest[0].startswith("--"):
            options.setdefault(rest[0], []).append(rest[1])
            rest = rest[2:]
        else:
            positional.append(rest.pop(0))
    name, *target = positional
    assert name == "synopsis", line
    env = tuple((k, v) for k, _, v in (pair.partition("=") for pair in options.get("--env", [])))
    if rest[:1] == ["--"]:
        assert target == [], line
        command, *args = rest[1:]
        return Snippet("stdio", command=command, args=tuple(args), env=env)
    assert options.get("--transport") == ["http"], line
    headers = tuple((k, v) for k, _, v in (h.partition(": ") for h in options.get("--header", [])))
    [url] = target
    return Snippet("http", url=url, headers=headers)


def _json(config: dict[str, Any]) -> list[Snippet]:
    """The servers of an `mcpServers` (Claude Code, Cursor) or `servers` (VS Code) file."""
    servers = config.get("mcpServers") or config["servers"]
    inputs = {item["id"] for item in config.get("inputs", []) if item["type"] == "promptString"}
    found = []
    for entry in servers.values():
        if "url" in entry:
            assert entry.get("type", "http") == "http", entry
            headers = {
                name: re.sub(r"\$\{input:([^}]+)\}", lambda m: _input(m.group(1), inputs), value)
                for name, value in entry.get("headers", {}).items()
            }
            found.append(Snippet("http", url=entry["url"], headers=tuple(headers.items())))
        else:
            assert entry.get("type", "stdio") == "stdio", entry
            env = tuple(entry.get("env", {}).items())
            found.append(
                Snippet("stdio", command=entry["command"], args=tuple(entry["args"]), env=env)
            )
    return found


def _input(name: str, declared: set[str]) -> str:
    assert name in declared, f"${{input:{name}}} is not declared in `inputs`"
    return KEY_PLACEHOLDER


def _snippets(path: str) -> list[Snippet]:
    found: list[Snippet] = []
    for kind, body in _BLOCK.findall((ROOT / path).read_text(encoding="utf-8")):
        if kind == "sh":
            found += [_claude(line) for line in body.splitlines() if line.startswith("claude ")]
            continue
        config = json.loads(body)
        if "mcpServers" in config or "servers" in config:
            found += _json(config)
    return found


def test_every_configuration_snippet_runs_with_its_transport(mcp_url: str, tmp_path: Path) -> None:
    shown = {path: _snippets(path) for path in SNIPPETS}
    for path, expected in SNIPPETS.items():
        counts = Counter(snippet.transport for snippet in shown[path])
        assert counts == expected, path
    distinct = {snippet for snippets in shown.values() for snippet in snippets}

    async def connect(snippet: Snippet) -> list[str]:
        if snippet.transport == "http":
            assert snippet.url == DOCUMENTED_URL
            headers = {k: v.replace(KEY_PLACEHOLDER, READ_KEY) for k, v in snippet.headers}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=TIMEOUT) as http,
                streamable_http_client(mcp_url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return [tool.name for tool in (await session.list_tools()).tools]
        assert snippet.command == "synopsis"
        server = StdioServerParameters(
            command=SYNOPSIS,  # the `synopsis` of this environment
            args=list(snippet.args),
            env={**dict(snippet.env), **_stdio_env()},
        )
        async with (
            stdio_client(server) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return [tool.name for tool in (await session.list_tools()).tools]

    for snippet in distinct:
        assert tuple(anyio.run(connect, snippet)) == TOOL_NAMES, snippet
