"""Connections to Weaviate and Ollama: external when configured, else the local stack."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import urlsplit

import weaviate
from weaviate.classes.init import AdditionalConfig, Auth, GrpcConfig, Timeout

from service.errors import ConfigurationError, StackError
from service.settings import Settings
from service.stack import LocalStack
from service.stack.progress import Progress, silent

__all__ = [
    "close_ollama_clients",
    "connect_weaviate",
    "ensure_stack",
    "ollama_base_url",
]


def ensure_stack(settings: Settings, *, progress: Progress = silent) -> None:
    """Start the local components that are configured as local and not yet running."""
    if settings.uses_local_weaviate or settings.uses_local_ollama:
        status = LocalStack(settings, progress=progress).up()
        if not status.ready:
            # Name what is down: with one component external, "the local stack" misleads.
            down = ", ".join(
                f"{component.name} at {component.url} ({component.detail})"
                for component in status.components
                if not component.running
            )
            raise StackError(f"the stack is not ready: {down}; see `synopsis stack status`")


def ollama_base_url(settings: Settings) -> str:
    """The Ollama URL in use: the configured one, or the local stack's."""
    return settings.resolved_ollama_url


# gRPC backs off between reconnects up to 120 s by default: after a 150 s Weaviate outage
# a channel took 45 s to serve again, capped at 5 s it took 4 s (grpcio 1.78, measured).
# A long-running service must come back soon after Weaviate does, without a restart.
_GRPC = GrpcConfig(channel_options=[("grpc.max_reconnect_backoff_ms", 5000)])


def connect_weaviate(settings: Settings) -> weaviate.WeaviateClient:
    """A connected Weaviate client (the caller closes it)."""
    timeout = Timeout(
        init=settings.deadlines.weaviate_init_timeout,
        query=settings.deadlines.weaviate_query_timeout,
        insert=settings.deadlines.weaviate_insert_timeout,
    )
    try:
        if settings.uses_local_weaviate:
            return weaviate.connect_to_local(
                host="127.0.0.1",
                port=settings.stack.local_weaviate_port,
                grpc_port=settings.stack.local_weaviate_grpc_port,
                additional_config=AdditionalConfig(timeout=timeout, grpc_config=_GRPC),
                skip_init_checks=False,
            )
        parts = urlsplit(settings.external.weaviate_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigurationError(
                f"SYNOPSIS_WEAVIATE_URL={settings.external.weaviate_url!r} is not an http(s) URL"
            )
        secure = parts.scheme == "https"
        return weaviate.connect_to_custom(
            http_host=parts.hostname,
            http_port=parts.port or (443 if secure else 80),
            http_secure=secure,
            grpc_host=settings.external.weaviate_grpc_host or parts.hostname,
            grpc_port=settings.external.weaviate_grpc_port,
            grpc_secure=secure,
            auth_credentials=(
                Auth.api_key(settings.external.weaviate_api_key)
                if settings.external.weaviate_api_key
                else None
            ),
            additional_config=AdditionalConfig(timeout=timeout, grpc_config=_GRPC),
        )
    except weaviate.exceptions.WeaviateBaseError as exc:
        where = (
            settings.external.weaviate_url
            or f"the local stack (port {settings.stack.local_weaviate_port})"
        )
        # The client's message spans lines; the CLI shows errors as one line.
        detail = " ".join(str(exc).split())
        raise StackError(f"cannot connect to Weaviate at {where}: {detail}") from exc


def close_ollama_clients(model: object, loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Close the HTTP clients of a langchain-ollama model (it offers no close of its own).

    The async client is closed on `loop` when it ran there (its connections belong to
    that loop), otherwise on a new loop. Without this, each client's sockets stay open
    until exit, which Python reports as ResourceWarnings.
    """
    sync_client = getattr(model, "_client", None)
    if sync_client is not None:
        sync_client.close()
    async_client = getattr(model, "_async_client", None)
    if async_client is None:
        return
    if loop is not None and loop.is_running():
        future = asyncio.run_coroutine_threadsafe(async_client.close(), loop)
        with contextlib.suppress(Exception):  # closing must not mask the caller's error
            future.result(timeout=10)
        return
    # A loop of its own, in a thread of its own: the caller may be inside a running loop.
    closer = threading.Thread(target=_run_quietly, args=(async_client.close,), daemon=True)
    closer.start()
    closer.join(timeout=10)


def _run_quietly(close: Callable[[], Coroutine[Any, Any, None]]) -> None:
    with contextlib.suppress(Exception):
        asyncio.run(close())
