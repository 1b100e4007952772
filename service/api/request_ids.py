"""Request ids: one per request, sent back as `X-Request-ID` on every response.

An incoming `X-Request-ID` (a load balancer's, a client's) is kept when it looks like an
id — up to 128 letters, digits and `._:-`, so it cannot forge log lines — else a new one
(uuid4 hex) is made. The id lives in the ASGI scope's state; error responses carry it in
their body and every 5xx log line names it.

The header is set by a `before_send` hook rather than a middleware: Litestar runs
middleware only on matched routes, while `before_send` also sees the 404 and 405
responses of the router itself.
"""

from __future__ import annotations

import re
import uuid

from litestar.datastructures import MutableScopeHeaders
from litestar.types import Message, Scope

__all__ = ["REQUEST_ID_HEADER", "request_id", "send_request_id"]

REQUEST_ID_HEADER = "X-Request-ID"

_STATE_KEY = "synopsis_request_id"
_SANE = re.compile(r"[A-Za-z0-9._:\-]{1,128}")


def _incoming(scope: Scope) -> str | None:
    wanted = REQUEST_ID_HEADER.lower().encode("latin-1")
    for name, value in scope.get("headers", ()):
        if name.lower() == wanted:
            text = value.decode("latin-1")
            return text if _SANE.fullmatch(text) else None
    return None


def request_id(scope: Scope) -> str:
    """The id of the request `scope` belongs to (made on first use, then the same)."""
    state = scope.setdefault("state", {})
    existing = state.get(_STATE_KEY)
    if isinstance(existing, str):
        return existing
    made = _incoming(scope) or uuid.uuid4().hex
    state[_STATE_KEY] = made
    return made


async def send_request_id(message: Message, scope: Scope) -> None:
    """`before_send` hook: add `X-Request-ID` to the start of every HTTP response."""
    if message["type"] == "http.response.start":
        headers = MutableScopeHeaders.from_message(message)
        headers[REQUEST_ID_HEADER] = request_id(scope)
