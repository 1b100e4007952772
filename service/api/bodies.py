"""JSON request bodies, decoded once, as the OpenAPI document reads them.

Litestar converts a body into its Struct laxly (`strict=False`, which query strings
need), so `{"alpha": "0"}` became `alpha=0.0` although the document says a number.
`convert_body` converts strictly, with one allowance JSON Schema makes: a whole float
(`2.0`) is an integer. A body that does not fit is Litestar's own 400
(`ValidationException`) naming the field, as Litestar would; one that is not JSON is
Litestar's own 400 (`ClientException`) saying why.

A handler's `data` is decoded so by `StrictBody`, the app's DTO (`create_app`): the body
is read and decoded once, before the handler, and its Struct is the request body of the
route's OpenAPI operation as without a DTO.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

import msgspec
from litestar.dto import AbstractDTO
from litestar.exceptions import ClientException, ValidationException

if TYPE_CHECKING:
    from litestar import Request
    from litestar._openapi.schema_generation import SchemaCreator
    from litestar.dto.data_structures import DTOFieldDefinition
    from litestar.openapi.spec import Reference, Schema
    from litestar.types.serialization import LitestarEncodableType
    from litestar.typing import FieldDefinition

__all__ = ["StrictBody", "convert_body", "decode_body", "invalid_body"]

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


def convert_body(value: Any, kind: type[T], *, where: str, whole: str = "body") -> T:
    """A decoded JSON `value` as a `kind`, strictly (no string to number);
    `ValidationException` naming the field if it does not fit (`whole` when the message
    names no path: the body as a whole, or one of its fields by name)."""
    try:
        return msgspec.convert(_whole(value), type=kind)
    except msgspec.ValidationError as exc:
        message = str(exc)
        named = "at `$." in message
        field = message.rpartition("at `$.")[2].rstrip("`").split(".")[0].split("[")[0]
        raise invalid_body(where, field if named else whole, message) from None


def decode_body(raw: bytes, kind: type[T], *, where: str) -> T:
    """`raw` as a `kind`, strictly (`convert_body`); `ValidationException` if it is not
    JSON or does not fit."""
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise invalid_body(where, "body", f"the body is not valid JSON: {exc}") from None
    return convert_body(value, kind, where=where)


class StrictBody(AbstractDTO[Any]):
    """The app's DTO: a handler's `data` decoded from the request body once, strictly
    (`convert_body`), into the type its signature declares.

    Litestar hands the body to `decode_bytes` (an empty one never: `data` is then
    missing, Litestar's 400); nothing else of a DTO is used: a handler returns its own
    Structs, and the OpenAPI request body is the declared type's schema.
    """

    # The `data` type of each route handler (by Litestar's handler id) this DTO serves.
    _kinds: ClassVar[dict[str, Any]] = {}

    @classmethod
    def generate_field_definitions(
        cls, model_type: type[Any]
    ) -> Generator[DTOFieldDefinition, None, None]:
        """No transfer model is built: none of its fields are needed."""
        yield from ()

    @classmethod
    def detect_nested_field(cls, field_definition: FieldDefinition) -> bool:
        """No transfer model is built: nothing is nested in one."""
        return False

    @classmethod
    def is_supported_model_type_field(cls, field_definition: FieldDefinition) -> bool:
        """Never a return type: responses are encoded as Litestar encodes them."""
        return False

    @classmethod
    def create_for_field_definition(
        cls, field_definition: FieldDefinition, handler_id: str, backend_cls: Any = None
    ) -> None:
        """Keep the type a handler's `data` declares."""
        cls._kinds[handler_id] = field_definition.annotation

    @classmethod
    def create_openapi_schema(
        cls, field_definition: FieldDefinition, handler_id: str, schema_creator: SchemaCreator
    ) -> Reference | Schema:
        """The declared type's schema, as Litestar gives it without a DTO."""
        return schema_creator.for_field_definition(field_definition)

    def decode_bytes(self, value: bytes) -> Any:
        """The body as the handler's `data` type; Litestar's `ClientException` when it is
        not JSON, `ValidationException` naming the field when it does not fit."""
        request = cast("Request[Any, Any, Any]", self.asgi_connection)  # a body: HTTP
        kind = self._kinds[request.route_handler.handler_id]
        try:
            decoded = msgspec.json.decode(value)
        except msgspec.DecodeError as exc:
            raise ClientException(str(exc)) from None  # as Litestar answers it without a DTO
        path = request.scope.get("path_template") or request.url.path
        # "data", Litestar's name for the body: the error's field is then read from the
        # message (`field_of`), as for Litestar's own errors ("missing required field `k`").
        where = f"{request.method} {path}"
        return convert_body(decoded, kind, where=where, whole="data")

    def decode_builtins(self, value: dict[str, Any]) -> Any:
        """Form data: no route takes it as `data`."""
        raise NotImplementedError("StrictBody decodes JSON bodies only")

    def data_to_encodable_type(self, data: Any) -> LitestarEncodableType:
        """Never called: it serves no return type (`is_supported_model_type_field`)."""
        raise NotImplementedError("StrictBody encodes no response")
