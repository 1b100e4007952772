"""The app factory: `create_app(settings)` → a Litestar app over one `Synopsis`.

The lifespan opens the `Synopsis` (unless one is injected, which the caller then owns)
and an HTTP client for Ollama's health probe, keeps them on `app.state`, and closes
what it opened. Every exception is translated once, in `synopsis_error_handler`
(`service.api.exceptions`); every response carries an `X-Request-ID`
(`service.api.request_ids`); request metrics come from Litestar's Prometheus
middleware (`service.api.metrics`); API keys are loaded once onto `app.state`
(`service.api.security`); what another site can make a browser send is refused
before any handler (`service.api.crosssite`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import httpx
from litestar import Litestar, Router
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig

from loaders.addresses import AddressPolicy
from service.api.bodies import StrictBody
from service.api.controllers import (
    AskController,
    HealthController,
    MetricsController,
    ReadyController,
    SearchController,
    StatsController,
    provide_ollama_http,
    provide_synopsis,
)
from service.api.conversations import ConversationController
from service.api.crosssite import CrossSiteGuard, allowed_hosts
from service.api.document_create import document_create_components
from service.api.documents import (
    DocumentController,
    provide_address_policy,
    provide_job_store,
)
from service.api.exceptions import STATUS_CODES, status_code_for, synopsis_error_handler
from service.api.jobs import JobController, provide_job_queue, running_jobs
from service.api.llm_work import LlmWork, provide_llm_work
from service.api.metrics import metrics_lifespan, prometheus_config
from service.api.openapi import SECURITY_COMPONENTS, ClosedStructSchemaPlugin
from service.api.page import PageController
from service.api.request_ids import send_request_id
from service.api.security import check_bind, load_api_keys
from service.api.sources import RegisteredSourceController
from service.api.watch import refuse_while_down, watching_weaviate
from service.mcp.http import McpEndpoint
from service.settings import Settings
from service.synopsis import Synopsis

__all__ = ["STATUS_CODES", "create_app", "status_code_for", "synopsis_error_handler"]

_HEALTH_TIMEOUT = httpx.Timeout(5.0)


def create_app(
    settings: Settings | None = None,
    *,
    synopsis: Synopsis | None = None,
    ollama_http: httpx.AsyncClient | None = None,
    background: bool = True,
) -> Litestar:
    """Build the API.

    `settings` defaults to `Settings.from_env()`. An injected `synopsis` or `ollama_http`
    (an `httpx.AsyncClient` whose base URL is Ollama's, used by `/health`) is used as is
    and left open; otherwise the lifespan opens one at startup and closes it at shutdown.

    `background`: while the app runs, watch Weaviate (`service.api.watch`) and run the
    job workers, the scheduled syncs and the retention sweeper over the core's Weaviate
    (`service.api.jobs`). Without it `/jobs` and ingests answer 503 and nothing watches
    Weaviate: for a core that has no Weaviate of its own (a test's stand-in).

    Raises `ConfigurationError` for an unreadable keys file, or an open API (no key, no
    `api_allow_open`) on a non-loopback `api_host`.
    """
    resolved = settings or (synopsis.settings if synopsis else Settings.from_env())
    # Loaded once, here, so that a bad keys file fails at startup rather than per request;
    # and an open API on a non-loopback `api_host` does not start, whichever server runs it
    # (`synopsis serve` checks its --host the same way).
    api_keys = load_api_keys(resolved)
    check_bind(resolved.api.host, api_keys, resolved)
    # The MCP tools at /mcp, over the same `Synopsis` as every route (`service.mcp`).
    mcp = McpEndpoint(
        lambda: app.state.synopsis, resolved, llm_work=lambda: provide_llm_work(app.state)
    )

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if synopsis is None:
                opened = await asyncio.to_thread(Synopsis.open, resolved)
                stack.callback(opened.close)
                app.state.synopsis = opened
            else:
                app.state.synopsis = synopsis
            if ollama_http is None:
                app.state.ollama_http = await stack.enter_async_context(
                    httpx.AsyncClient(
                        base_url=resolved.resolved_ollama_url, timeout=_HEALTH_TIMEOUT
                    )
                )
            else:
                app.state.ollama_http = ollama_http
            # Model calls on threads of their own, with a per-key share (`llm_work`).
            app.state.llm_work = LlmWork.for_settings(resolved)
            stack.callback(app.state.llm_work.close)
            if background:
                await stack.enter_async_context(watching_weaviate(app, resolved))
                await stack.enter_async_context(running_jobs(app, app.state.synopsis, resolved))
            await stack.enter_async_context(mcp.lifespan())
            yield

    app = Litestar(
        route_handlers=[
            HealthController,
            ReadyController,
            MetricsController,
            SearchController,
            AskController,
            RegisteredSourceController,
            StatsController,
            # An upload may be larger than the other routes' bodies.
            Router(
                path="/",
                route_handlers=[DocumentController],
                request_max_body_size=resolved.api_limits.max_upload_bytes,
            ),
            JobController,
            ConversationController,
            PageController,
            mcp.route(),
        ],
        dependencies={
            "job_queue": Provide(provide_job_queue, sync_to_thread=False),
            "jobs": Provide(provide_job_store, sync_to_thread=False),
            "address_policy": Provide(provide_address_policy, sync_to_thread=False),
            "synopsis": Provide(provide_synopsis, sync_to_thread=False),
            "ollama_http": Provide(provide_ollama_http, sync_to_thread=False),
            "llm_work": Provide(provide_llm_work, sync_to_thread=False),
        },
        # Every `data` is decoded once, strictly, as the OpenAPI document reads it.
        dto=StrictBody,
        exception_handlers={Exception: synopsis_error_handler},
        lifespan=[lifespan, metrics_lifespan],
        before_send=[send_request_id],
        plugins=[ClosedStructSchemaPlugin(resolved)],
        before_request=refuse_while_down,
        # Prometheus first: it counts the refusals too.
        middleware=[prometheus_config().middleware, CrossSiteGuard(allowed_hosts(resolved))],
        request_max_body_size=resolved.api_limits.max_body_bytes,
        # Logging belongs to the process (`synopsis serve` configures it through uvicorn);
        # Litestar's default would replace the root logger's handlers.
        logging_config=None,
        openapi_config=OpenAPIConfig(
            title="Synopsis",
            version="0.1.0",
            description="Summary-to-original retrieval for technical documentation.",
            components=[SECURITY_COMPONENTS, document_create_components(resolved)],
        ),
    )
    app.state.api_keys = api_keys
    # URLs given to the API are checked against it (the job workers' fetches too).
    app.state.address_policy = AddressPolicy.from_allow_list(resolved.urls.fetch_allow)
    # Without keys, a connection that arrives on a non-loopback address is refused unless
    # this is set (a server bound beyond loopback by its own options, not `api_host`).
    app.state.api_allow_open = resolved.api.allow_open
    return app
