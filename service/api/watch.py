"""Fail fast while Weaviate is down, and notice at once when it is back.

The weaviate client retries a gRPC call that finds the server unavailable with
exponential backoff, five times (about a minute, not configurable), so a request that
reaches a dead Weaviate would hang rather than answer. A `WeaviateWatch` probes
Weaviate's readiness endpoint every `interval` seconds (one short HTTP GET) in the
background; while the last probe failed, every request that needs Weaviate is answered
`503` with `Retry-After` before it touches the client (`refuse_while_down`, a Litestar
`before_request` hook). Once a probe succeeds again, requests go through as before: no
restart. A request already in flight when Weaviate dies still waits for the client.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from litestar import Litestar, Request
from litestar.datastructures import State

from service.api.background import running_beside
from service.errors import StoreError
from service.settings import Settings

__all__ = [
    "UNWATCHED_PATHS",
    "WeaviateWatch",
    "refuse_while_down",
    "watching_weaviate",
    "weaviate_watch",
]

#: Routes that answer without Weaviate (or report its state themselves).
UNWATCHED_PATHS = ("/health", "/ready", "/metrics", "/schema", "/ui/")


def weaviate_ready_url(settings: Settings) -> str:
    """Weaviate's readiness endpoint: the external one, or the local stack's."""
    base = (
        settings.external.weaviate_url or f"http://127.0.0.1:{settings.stack.local_weaviate_port}"
    )
    return base.rstrip("/") + "/v1/.well-known/ready"


class WeaviateWatch:
    """The outcome of the last readiness probe of Weaviate."""

    def __init__(self, url: str, *, interval: float = 2.0, timeout: float = 2.0) -> None:
        self.url = url
        self.interval = interval
        self.timeout = timeout
        self.down_since: float | None = None  # monotonic time of the first failed probe
        self.reason = ""

    @property
    def down(self) -> bool:
        """True while the last probe failed."""
        return self.down_since is not None

    async def probe(self, http: httpx.AsyncClient) -> None:
        """Probe once and record the outcome."""
        try:
            response = await http.get(self.url, timeout=self.timeout)
            ok = response.is_success
            reason = "" if ok else f"HTTP {response.status_code}"
        except httpx.HTTPError as exc:
            ok, reason = False, f"{type(exc).__name__}"
        if ok:
            self.down_since, self.reason = None, ""
        else:
            self.failed(reason)

    def failed(self, reason: str) -> None:
        """Record that Weaviate did not answer, as a failed probe does (`/ready` found it
        down: requests fail fast from then on, not after the next probe)."""
        self.down_since = self.down_since or time.monotonic()
        self.reason = reason

    async def run(self, http: httpx.AsyncClient) -> None:
        """Probe every `interval` seconds until cancelled."""
        while True:
            await self.probe(http)
            await asyncio.sleep(self.interval)


@asynccontextmanager
async def watching_weaviate(app: Litestar, settings: Settings) -> AsyncIterator[None]:
    """Keep a `WeaviateWatch` probing on `app.state.weaviate_watch` while the app runs."""
    watch = WeaviateWatch(
        weaviate_ready_url(settings), interval=settings.api.weaviate_probe_seconds
    )
    app.state.weaviate_watch = watch
    async with httpx.AsyncClient() as http, running_beside(watch.run(http)):
        yield


def weaviate_watch(state: State) -> WeaviateWatch | None:
    """The watch `watching_weaviate` keeps on the app's `state`; None in an app that runs
    none (`create_app(background=False)`)."""
    watch: WeaviateWatch | None = getattr(state, "weaviate_watch", None)
    return watch


async def refuse_while_down(request: Request[Any, Any, Any]) -> None:
    """Answer 503 at once, before the handler, while Weaviate's last probe failed."""
    watch = weaviate_watch(request.app.state)
    if watch is None or not watch.down:
        return
    if request.url.path == "/" or request.url.path.startswith(UNWATCHED_PATHS):
        return
    assert watch.down_since is not None
    seconds = time.monotonic() - watch.down_since
    raise StoreError(
        f"Weaviate does not answer ({watch.reason}, for {seconds:.0f} s); try again shortly"
    )
