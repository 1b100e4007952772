"""What the OpenAPI document (`/schema/openapi.json`) declares beyond Litestar's defaults.

Litestar documents a route's success response and, for routes with parameters or a
body, its own 400. The API answers more than that, so each route declares the errors it
can answer (`error_responses`), all with the app's one `ErrorBody`:

| status | when |
|---|---|
| 400 | invalid body or parameter, over a count/length limit (`field` names it); a host not served |
| 401 | no valid key, when keys are configured |
| 403 | a read key on a write route; a browser request from another origin |
| 404 | no such source or job (jobs: of this key) |
| 409 | the job's state does not allow it; the index was built with another embedding model |
| 413 | a body or file over its size limit |
| 415 | a body that is not JSON (an upload: or multipart) |
| 429 | the job queue or this key's share of it is full, or its model calls (`Retry-After`) |
| 503 | Weaviate or Ollama unavailable (`dependency`), or no job queue here (`Retry-After`) |

A request body (a Struct that refuses unknown fields) is declared as the app checks it by
`ClosedStructSchemaPlugin`: closed, with its fields' bounds, the configured limits among
them, so that a client generated from the document does not send what the API refuses.
A fuzz run checks the document against the app (tests/service/api/test_api_fuzz.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

# Litestar's own schema of a Struct; this plugin adds one keyword to what it builds.
from litestar._openapi.schema_generation.plugins.struct import StructSchemaPlugin
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import (
    Components,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Reference,
    Schema,
    SecurityRequirement,
    SecurityScheme,
)

from service.api.schemas import AnswerToken, AskDone, ErrorBody
from service.settings import Settings

if TYPE_CHECKING:
    from litestar._openapi.schema_generation import SchemaCreator
    from litestar.typing import FieldDefinition

__all__ = [
    "ERROR_DESCRIPTIONS",
    "KEY_REQUIRED",
    "SECURITY_COMPONENTS",
    "ClosedStructSchemaPlugin",
    "EventStreamOperation",
    "error_responses",
    "struct_schema",
]

#: The routes that take an API key declare it (a client generated from the document then
#: sends `Authorization: Bearer <key>`); /health, /ready, the page and the schema do not.
_BEARER = "apiKey"
KEY_REQUIRED: list[SecurityRequirement] = [{_BEARER: []}]
SECURITY_COMPONENTS = Components(
    security_schemes={
        _BEARER: SecurityScheme(
            type="http",
            scheme="bearer",
            description="A read key (search, ask, list) or a write key (also ingest and "
            "delete), from SYNOPSIS_API_READ_KEYS / SYNOPSIS_API_WRITE_KEYS; needed only "
            "when keys are configured",
        )
    }
)

ERROR_DESCRIPTIONS: dict[int, str] = {
    400: "The request is invalid or over a limit (`field` names what), or names a host this "
    "API does not serve",
    401: "No valid API key (`Authorization: Bearer <key>`)",
    403: "A browser request from another origin, or a read key on a write route",
    404: "Not found (a source that is not indexed, a job that is not this key's)",
    409: "Not now: the job's state does not allow it, or the index was built with another "
    "embedding model",
    413: "The body (or an uploaded file) is over its size limit",
    415: "The body is not JSON (an upload: or `multipart/form-data`)",
    429: "The job queue, or this key's share of it, is full, or this key has as many model "
    "calls running as it may; retry after `Retry-After` s",
    503: "Weaviate or Ollama is unavailable (`dependency`), or this process has no job "
    "queue; retry after `Retry-After` s",
}


#: What every route behind `CrossSiteGuard` may answer: a host not served, another origin.
_EVERY_ROUTE = (400, 403)


def error_responses(*codes: int) -> dict[int, ResponseSpec]:
    """The OpenAPI responses of these error statuses, and of 400 and 403 (`CrossSiteGuard`
    refuses a request to any route with them): an `ErrorBody` each."""
    return {
        code: ResponseSpec(ErrorBody, description=ERROR_DESCRIPTIONS[code], generate_examples=False)
        for code in sorted({*codes, *_EVERY_ROUTE})
    }


# JSON Schema keywords of msgspec's schemas, as Litestar's `Schema` names them.
_KEYWORDS = {
    "title": "title",
    "description": "description",
    "type": "type",
    "properties": "properties",
    "required": "required",
    "enum": "enum",
    "items": "items",
    "anyOf": "any_of",
    "default": "default",
}


def _schema(value: dict[str, Any]) -> Schema:
    """Litestar's `Schema` of a JSON Schema dict (the keywords of `_KEYWORDS` only)."""
    fields: dict[str, Any] = {}
    for key, item in value.items():
        name = _KEYWORDS[key]  # another keyword is a new field type this does not know yet
        if key == "type":
            fields[name] = OpenAPIType(item)
        elif key == "properties":
            fields[name] = {field: _schema(sub) for field, sub in item.items()}
        elif key == "items":
            fields[name] = _schema(item)
        elif key == "anyOf":
            fields[name] = [_schema(sub) for sub in item]
        else:
            fields[name] = item
    return Schema(**fields)


def struct_schema(struct: type[msgspec.Struct]) -> Schema:
    """The schema of a Struct of scalar fields (an event's `data`), from msgspec's own."""
    generated = msgspec.json.schema(struct)
    return _schema(generated["$defs"][struct.__name__])


# One server-sent event of `POST /ask`; `data` is JSON: a token (a draft while unchecked),
# the citations, the checked answer (which says what became of the draft), or an `ErrorBody`.
_EVENT = Schema(
    type=OpenAPIType.OBJECT,
    required=["event", "data"],
    properties={
        "event": Schema(type=OpenAPIType.STRING, enum=["token", "citations", "done", "error"]),
        "data": Schema(
            type=OpenAPIType.STRING,
            description="JSON: `token` → AnswerToken, `citations` → a list of SearchHit, "
            "`done` → AskDone, `error` → ErrorBody",
            content_media_type="application/json",
            content_schema=Schema(
                one_of=[
                    struct_schema(AnswerToken),
                    Schema(
                        type=OpenAPIType.ARRAY, items=Reference("#/components/schemas/SearchHit")
                    ),
                    struct_schema(AskDone),
                    Reference("#/components/schemas/ErrorBody"),
                ]
            ),
        ),
        "id": Schema(type=OpenAPIType.STRING),
        "retry": Schema(type=OpenAPIType.INTEGER),
    },
)


@dataclass
class EventStreamOperation(Operation):
    """An operation whose 200 response may also be server-sent events (`text/event-stream`,
    what `POST /ask` answers with `"stream": true`), besides its JSON."""

    def __post_init__(self) -> None:
        success = (self.responses or {}).get("200")
        if isinstance(success, OpenAPIResponse):
            success.content = {
                **(success.content or {}),
                "text/event-stream": OpenAPIMediaType(schema=_EVENT),
            }


class ClosedStructSchemaPlugin(StructSchemaPlugin):
    """The schema of a request Struct (one with `forbid_unknown_fields`) as the app checks it.

    Closed (`additionalProperties: false`); every numeric bound of its fields, including
    the zero ones Litestar leaves out (`ge=0.0`); and the bounds that are settings: a field
    whose `msgspec.Meta` has `extra={"setting": name}` gets `maximum` (a number) or
    `maxLength` (a string) from `settings.<name>`, the lower of it and a fixed bound.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def is_plugin_supported_field(self, field_definition: FieldDefinition) -> bool:
        if not super().is_plugin_supported_field(field_definition):
            return False
        info = msgspec.inspect.type_info(field_definition.type_)
        return isinstance(info, msgspec.inspect.StructType) and info.forbid_unknown_fields

    def to_openapi_schema(
        self, field_definition: FieldDefinition, schema_creator: SchemaCreator
    ) -> Schema:
        schema = super().to_openapi_schema(field_definition, schema_creator)
        schema.additional_properties = False
        info = msgspec.inspect.type_info(field_definition.type_)
        assert isinstance(info, msgspec.inspect.StructType)
        for field in info.fields:
            prop = (schema.properties or {}).get(field.encode_name)
            if isinstance(prop, Schema):
                self._bound(prop, field.type)
        return schema

    def _bound(self, prop: Schema, kind: msgspec.inspect.Type) -> None:
        if isinstance(kind, msgspec.inspect.UnionType):
            arms = [t for t in kind.types if not isinstance(t, msgspec.inspect.NoneType)]
            if len(arms) != 1:
                return
            kind = arms[0]
        setting = None
        if isinstance(kind, msgspec.inspect.Metadata):
            setting = (kind.extra or {}).get("setting")
            kind = kind.type
        limit = None if setting is None else int(self.settings.value(setting))
        if isinstance(kind, msgspec.inspect.IntType | msgspec.inspect.FloatType):
            if kind.ge is not None:
                prop.minimum = kind.ge
            if kind.gt is not None:
                prop.exclusive_minimum = kind.gt
            if kind.le is not None:
                prop.maximum = kind.le
            if kind.lt is not None:
                prop.exclusive_maximum = kind.lt
            if limit is not None:
                prop.maximum = limit if prop.maximum is None else min(prop.maximum, limit)
        elif isinstance(kind, msgspec.inspect.StrType) and limit is not None:
            bound = kind.max_length
            prop.max_length = limit if bound is None else min(bound, limit)
