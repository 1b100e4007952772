"""`/mcp`: the MCP server over Streamable HTTP, inside the API's Litestar app.

`McpEndpoint` builds the server over the app's `Synopsis` and gives `create_app` two
things: the route (a Litestar ASGI handler at `/mcp` behind `require_read`, so a read key
suffices and a request without a valid key is the API's 401) and the lifespan that runs
the SDK's session manager while the app serves.

`ask`'s model call runs on the app's `LlmWork` (`app.state.llm_work`, as POST /ask's) as
a call of the key the /mcp request presents: the route puts its `caller_id` in a context
variable that the SDK's tasks for the request inherit.

The transport is stateless with JSON responses: each request is complete in itself, so
any worker or replica behind a load balancer can answer it (no session to pin), as with
the REST API.

Host and Origin are checked as the MCP specification asks, against DNS rebinding (a
name of an attacker's that resolves to this machine makes the attacker's page
same-origin with the server), by the app's `CrossSiteGuard`, which runs in front of
every route, this one included: a `Host` that is not a name of `api_allowed_hosts`
(default: the loopback names and `api_host`) is a 400, a request from another origin a
403 (service/api/crosssite.py). The SDK's own check is off: it knows neither
that setting nor its `*.` names, and would refuse with 421 what the app serves.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

import anyio
from litestar import asgi
from litestar.connection import ASGIConnection
from litestar.handlers import ASGIRouteHandler
from litestar.types import Receive, Scope, Send
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from service.api.llm_work import LlmWork
from service.api.security import caller_id, require_read
from service.mcp.server import build_server
from service.settings import Settings
from service.synopsis import Synopsis
from splitters.encoding import cl100k_base

__all__ = ["MCP_PATH", "McpEndpoint", "transport_security"]

MCP_PATH = "/mcp"

#: The caller of the /mcp request being served (set by its route, read by `ask`).
_CALLER: ContextVar[str] = ContextVar("synopsis_mcp_caller")


def _current_caller() -> str:
    # Every tool call comes through the route, which sets it; a call without it is a bug.
    return _CALLER.get()


def transport_security() -> TransportSecuritySettings:
    """The SDK's Host and Origin check, off: the app's `CrossSiteGuard` makes it, with the
    hosts the rest of the API serves (the module docstring). The SDK still refuses a POST
    whose body is not JSON."""
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


class McpEndpoint:
    """The MCP server of one app: its route and its lifespan."""

    def __init__(
        self,
        synopsis: Callable[[], Synopsis],
        settings: Settings,
        *,
        llm_work: Callable[[], LlmWork],
    ) -> None:
        self.server: MCPServer[Any] = build_server(
            synopsis, llm_work=llm_work, caller=_current_caller
        )
        self.settings = settings
        self.sessions: StreamableHTTPSessionManager = self._session_manager()

    def _session_manager(self) -> StreamableHTTPSessionManager:
        """A new session manager (the Starlette app made for it is not used): a manager
        runs once only, and an app's lifespan may run more than once (tests, reloads)."""
        self.server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=True,
            max_request_body_size=self.settings.api_limits.max_body_bytes,
            transport_security=transport_security(),
        )
        return self.server.session_manager

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Runs a session manager while the app serves; loads the tokenizer first, so
        that the first search does not wait for it."""
        await anyio.to_thread.run_sync(cl100k_base)
        self.sessions = self._session_manager()
        async with self.sessions.run():
            yield

    def route(self) -> ASGIRouteHandler:
        """The `/mcp` route: every method the transport takes, behind a read key."""
        endpoint = self

        @asgi(MCP_PATH, guards=[require_read], copy_scope=True)
        async def mcp(scope: Scope, receive: Receive, send: Send) -> None:
            # The guard has resolved the caller; its id reaches `ask` through the context
            # that the SDK's tasks for this request copy.
            token = _CALLER.set(caller_id(ASGIConnection(scope, receive, send)))
            try:
                await endpoint.sessions.handle_request(scope, receive, send)  # type: ignore[arg-type]
            finally:
                _CALLER.reset(token)

        return mcp
