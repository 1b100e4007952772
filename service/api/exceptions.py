"""Exceptions → responses: how every error a request raises reaches the client.

| raised                                        | status                     | body adds        |
|-----------------------------------------------|----------------------------|------------------|
| Weaviate refused the request itself (REST 400 | 400 or 422                 |                  |
| or 422, gRPC INVALID_ARGUMENT/OUT_OF_RANGE,   |                            |                  |
| the client's input check), raised or wrapped  |                            |                  |
| `SynopsisError`                               | `STATUS_CODES`             | `field`; for     |
|                                               |                            | Ollama/Weaviate  |
|                                               |                            | `dependency`     |
| a weaviate-client (or gRPC) error             | 503                        | `dependency`     |
| an Ollama client error, an httpx transport    | 503                        | `dependency`     |
| error (the Ollama clients' transport)         |                            |                  |
| Litestar's `HTTPException`s (400 validation,  | their own                  | `field`, `extra` |
| 401, 403, 404, 405, 413)                      |                            |                  |
| anything else                                 | 500, generic detail        |                  |

Every body is an `ErrorBody` with the request's id (also in `X-Request-ID`), and every
503 carries `Retry-After`. A refusal of Weaviate's is not retried by a client (it would be
refused again), so it is a 4xx with Weaviate's own message; other Weaviate answers (401 or
403: our credentials, 404, 408, 429, 5xx) are its state, a 503. Weaviate's gRPC query API
answers every query error with UNKNOWN, indistinguishable from a failure: such errors stay
503, and the requests Weaviate is known to refuse are checked before the call (offsets,
word-less titles, prefix wildcards). No traceback reaches a client: an unexpected error's detail is
a generic sentence, while the log gets the traceback and the request id. Every 5xx is
logged with the request id (a 503 as a warning without traceback: it is the dependency's
state, not a bug).

Recovery needs no restart: the weaviate client sends each REST call on httpx's pool,
which drops connections the server closed, and its gRPC channel reconnects by itself
(`service.connections` caps the channel's reconnect backoff so that this takes seconds);
the Ollama clients are httpx too. So once a dependency is back the next request works.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

import grpc
import httpx
import weaviate.exceptions
from litestar import Request, Response
from litestar.exceptions import HTTPException

from service.api.request_ids import request_id
from service.api.schemas import ErrorBody
from service.errors import (
    ConversationLimitError,
    EmbeddingMismatchError,
    InvalidSourceError,
    JobNotFoundError,
    JobStateError,
    JobsUnavailableError,
    ModelError,
    QueueFullError,
    RequestLimitError,
    SearchError,
    SourceExistsError,
    SourceNotFoundError,
    SourceNotReadyError,
    StackError,
    StoreError,
    SynopsisError,
    TooManyRequestsError,
    UnsafeUrlError,
)

__all__ = [
    "RETRY_AFTER_SECONDS",
    "STATUS_CODES",
    "dependency_of",
    "error_response",
    "field_of",
    "refusal_of",
    "status_code_for",
    "synopsis_error_handler",
]

#: What a 503 tells the client to wait before trying again.
RETRY_AFTER_SECONDS = 5

_log = logging.getLogger(__name__)

_NAMES = {"weaviate": "Weaviate", "ollama": "Ollama"}
# Top-level packages whose exceptions mean "this dependency failed".
_PACKAGES = {"weaviate": "weaviate", "grpc": "weaviate", "ollama": "ollama"}
_BACKTICKED = re.compile(r"field `([^`]+)`")
_QUOTED_PARAMETER = re.compile(r"parameter '([^']+)'")


def dependency_of(exc: BaseException) -> str | None:
    """`"weaviate"` or `"ollama"` when `exc` says that server failed or is unreachable."""
    if isinstance(exc, ModelError):
        return "ollama"
    if isinstance(exc, StoreError):
        return "weaviate"
    if isinstance(exc, SynopsisError):
        # e.g. a StackError raised from the weaviate client's connection error
        return dependency_of(exc.__cause__) if exc.__cause__ is not None else None
    for kind in type(exc).__mro__:
        package = kind.__module__.partition(".")[0]
        if package in _PACKAGES:
            return _PACKAGES[package]
    # The weaviate client wraps its own httpx errors, so a bare one is an Ollama client's.
    if isinstance(exc, httpx.TransportError):
        return "ollama"
    return None


#: Weaviate's REST statuses that refuse the request itself, passed on as they are.
_REFUSING_STATUSES = (400, 422)
#: gRPC codes that refuse the request itself (Weaviate's query API answers UNKNOWN instead).
_REFUSING_CODES = (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.OUT_OF_RANGE)
# A refusal quotes at most this much of Weaviate's message.
_REFUSAL_QUOTE = 300


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it was raised from or while handling, outermost first."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def refusal_of(exc: BaseException) -> tuple[int, str] | None:
    """(status, Weaviate's message) when `exc` is, or was raised from, Weaviate refusing the
    request itself: a client would be refused again, so it must not be told to retry."""
    for link in _chain(exc):
        if isinstance(link, weaviate.exceptions.UnexpectedStatusCodeError):
            status = link.status_code
            if status in _REFUSING_STATUSES:  # REST; a gRPC status is a code below 100
                return status, _refusal_message(link.error, str(link))
            if status in [code.value[0] for code in _REFUSING_CODES]:
                return 400, _refusal_message(link.error, str(link))
        elif isinstance(link, weaviate.exceptions.WeaviateInvalidInputError):
            return 400, _refusal_message(None, str(link))
        elif isinstance(link, grpc.RpcError) and _grpc_code(link) in _REFUSING_CODES:
            return 400, _refusal_message(getattr(link, "details", lambda: None)(), str(link))
    return None


def _grpc_code(error: grpc.RpcError) -> grpc.StatusCode | None:
    code = getattr(error, "code", None)  # the calls' errors have it, the base class not
    return code() if callable(code) else None


def _refusal_message(error: object, fallback: str) -> str:
    """Weaviate's own words: the `message` of its error body, else the exception's text."""
    messages: list[str] = []
    if isinstance(error, dict):
        for item in error.get("error") or []:
            if isinstance(item, dict) and item.get("message"):
                messages.append(str(item["message"]))
    elif isinstance(error, str) and error:
        messages.append(error)
    text = " ".join(" ".join(messages or [fallback]).split())
    return text if len(text) <= _REFUSAL_QUOTE else text[: _REFUSAL_QUOTE - 1] + "…"


def field_of(exc: HTTPException) -> str | None:
    """The request field a 4xx is about (`body` for the body as a whole), when known."""
    if exc.status_code == 413:
        return "body"
    extra = exc.extra
    if isinstance(extra, list) and extra and isinstance(extra[0], dict):
        key = str(extra[0].get("key", ""))
        if key and key != "data":  # Litestar's name for the whole body
            return key
        named = _BACKTICKED.search(str(extra[0].get("message", "")))
        return named.group(1) if named else "body"
    named = _QUOTED_PARAMETER.search(exc.detail)
    return named.group(1) if named else None


def error_response(
    request: Request[Any, Any, Any],
    exc: Exception,
    *,
    status_of: Callable[[SynopsisError], int],
) -> Response[ErrorBody]:
    """The response for `exc`, logged when it is a 5xx (see the module docstring)."""
    rid = request_id(request.scope)
    where = f"{request.method} {request.scope.get('path_template') or request.url.path}"
    headers: dict[str, str] = {}
    field: str | None = None
    extra: Any = None
    dependency = dependency_of(exc)
    refusal = refusal_of(exc) if dependency == "weaviate" else None
    if refusal is not None:
        code, error = refusal[0], type(exc).__name__
        detail = f"Weaviate refused the request: {refusal[1]}"
    elif isinstance(exc, SynopsisError):
        code, error, detail = status_of(exc), type(exc).__name__, str(exc)
        field = getattr(exc, "field", None)  # RequestLimitError, InvalidSourceError
        # QueueFullError, ConversationLimitError, TooManyRequestsError
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
    elif isinstance(exc, HTTPException):
        code, error, detail = exc.status_code, type(exc).__name__, exc.detail
        headers.update(exc.headers or {})
        field, extra = field_of(exc), exc.extra
        if code == 500:  # Litestar's own internal errors may describe the code
            detail = f"internal error (request {rid})"
    elif dependency is not None:
        code, error = 503, type(exc).__name__
        detail = f"{_NAMES[dependency]} is unavailable; retry later (request {rid})"
    else:
        code, error, detail = 500, "InternalServerError", f"internal error (request {rid})"

    if code == 503:
        headers.setdefault("Retry-After", str(RETRY_AFTER_SECONDS))
        _log.warning(
            "request %s: %s answered 503 (%s unavailable): %s: %s",
            rid,
            where,
            dependency or "a dependency",
            type(exc).__name__,
            " ".join(str(exc).split()),
        )
    elif code >= 500:
        _log.error("request %s: %s failed with %s", rid, where, type(exc).__name__, exc_info=exc)

    body = ErrorBody(
        status_code=code,
        error=error,
        detail=detail,
        request_id=rid,
        field=field,
        dependency=dependency if code == 503 else None,
        extra=extra,
    )
    return Response(body, status_code=code, headers=headers)


#: The one error → status mapping, most specific class first.
STATUS_CODES: tuple[tuple[type[SynopsisError], int], ...] = (
    (SearchError, 400),
    (UnsafeUrlError, 400),
    (RequestLimitError, 400),  # 413 when the limit is a size (`too_large`)
    (JobNotFoundError, 404),
    (InvalidSourceError, 400),
    (SourceNotFoundError, 404),
    (SourceExistsError, 409),
    (SourceNotReadyError, 409),
    (JobStateError, 409),
    (QueueFullError, 429),
    (ConversationLimitError, 429),
    (TooManyRequestsError, 429),
    (JobsUnavailableError, 503),
    (EmbeddingMismatchError, 409),
    (StackError, 503),
    (ModelError, 503),
    (StoreError, 503),
    (SynopsisError, 500),
)


def status_code_for(error: SynopsisError) -> int:
    """The HTTP status of a Synopsis error."""
    if isinstance(error, RequestLimitError) and error.too_large:
        return 413
    return next(code for kind, code in STATUS_CODES if isinstance(error, kind))


def synopsis_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[ErrorBody]:
    """Every exception a request raises, as a status code and a JSON body: a
    `SynopsisError` by `status_code_for`, the rest as described above."""
    return error_response(request, exc, status_of=status_code_for)
