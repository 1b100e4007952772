"""One deadline for a whole fetch, under httpx's per-operation timeouts.

httpx's timeouts bound each network operation: a server that sends one byte of its
status line or headers every few seconds never trips a read timeout, and the response
headers are read before any code of ours runs. So the loaders' own client
(`deadline_client`) connects through a network backend whose every connect, read and
write waits at most until the deadline of the fetch in progress (`fetch_deadline`, a
context variable: each fetch thread has its own), then fails with a timeout.
"""

from __future__ import annotations

import functools
import ssl
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpcore
import httpx

__all__ = ["deadline_client", "deadline_passed", "fetch_deadline"]

_DEADLINE: ContextVar[float | None] = ContextVar("synopsis_fetch_deadline", default=None)


@contextmanager
def fetch_deadline(deadline: float) -> Iterator[None]:
    """Within this block, network operations of `deadline_client` end by `deadline` (a
    `time.monotonic()` value)."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def deadline_passed(deadline: float) -> bool:
    """True once `deadline` (a `time.monotonic()` value) is reached."""
    return time.monotonic() >= deadline


def _bounded(timeout: float | None, error: type[Exception]) -> float | None:
    """`timeout`, or the time left before the deadline when that is shorter."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("the fetch deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, bounded))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        stream = self._backend.connect_tcp(host, port, bounded, local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._backend.connect_unix_socket(path, bounded, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (certificate verification on), built once: loading the
    trusted certificates takes tens of milliseconds of CPU, and one context serves any
    number of connections and threads."""
    return httpx.create_ssl_context()


class _DeadlineTransport(httpx.HTTPTransport):
    """httpx's own transport (its request mapping and error translation), over a
    connection pool whose network backend keeps the deadline."""

    def __init__(self) -> None:
        # httpx's pool, replaced below, is built with the same context: not a second one.
        super().__init__(verify=_tls_context())
        limits = httpx.Limits()
        self._pool = httpcore.ConnectionPool(
            ssl_context=_tls_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_DeadlineBackend(),
        )


def deadline_client() -> httpx.Client:
    """An httpx client whose requests inside `fetch_deadline` end by its deadline."""
    return httpx.Client(transport=_DeadlineTransport())
