"""JSON request bodies, decoded as the OpenAPI document reads them.

Litestar converts a body into its Struct laxly (`strict=False`, which query strings
need), so `{"alpha": "0"}` became `alpha=0.0` although the document says a number.
`decode_body` decodes strictly, with one allowance JSON Schema makes: a whole float
(`2.0`) is an integer. A body that does not fit is Litestar's own 400
(`ValidationException`) naming the field, as Litestar would.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from litestar import Request
from litestar.exceptions import ValidationException

__all__ = ["decode_body", "invalid_body", "strict_body"]

T = TypeVar("T")


def invalid_body(where: str, field: str, message: str) -> ValidationException:
    """The 400 of a body that does not fit: `where` is the route ("POST /documents")."""
    return ValidationException(
        detail=f"Validation failed for {where}: {message}",
        extra=[{"key": field, "message": message, "source": "body"}],
    )


def _whole(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)  # an int field takes it; a float field takes an int back as float
    if isinstance(value, dict):
        return {key: _whole(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole(item) for item in value]
    return value


def decode_body(raw: bytes, kind: type[T], *, where: str) -> T:
    """`raw` as a `kind`, strictly (no string to number); `ValidationException` if not."""
    try:
        return msgspec.convert(_whole(msgspec.json.decode(raw)), type=kind)
    except msgspec.ValidationError as exc:
        message = str(exc)
        named = "at `$." in message
        field = message.rpartition("at `$.")[2].rstrip("`").split(".")[0].split("[")[0]
        raise invalid_body(where, field if named else "body", message) from None
    except msgspec.DecodeError as exc:
        raise invalid_body(where, "body", f"the body is not valid JSON: {exc}") from None


async def strict_body(request: Request[Any, Any, Any], kind: type[T]) -> T:
    """The request's JSON body as a `kind`, decoded by `decode_body`."""
    where = f"{request.method} {request.scope.get('path_template') or request.url.path}"
    return decode_body(await request.body(), kind, where=where)
