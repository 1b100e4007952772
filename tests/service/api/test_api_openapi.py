"""The OpenAPI document says what the app does (service/api/openapi.py), and request
bodies are decoded as it reads them (service/api/bodies.py). The fuzz run on the
real stack (test_api_fuzz.py) checks the same against every route; these pin each fix."""

from __future__ import annotations

import warnings
from typing import Any, cast

import pytest
from litestar.testing import TestClient

from service.api import create_app
from service.api.bodies import StrictBody
from service.index.queries import SearchFilters
from service.query.hits import HIT_FIELDS
from service.query.search import SearchRequest
from service.settings import Settings
from service.synopsis import Synopsis
from tests.service.api.test_api import FakeSynopsis, _ollama, _ollama_ok
from tests.service.serving import IN_PROCESS_URL


def _document(settings: Settings) -> dict[str, Any]:
    fake = FakeSynopsis()
    app = create_app(
        settings, synopsis=cast(Synopsis, fake), ollama_http=_ollama(_ollama_ok), background=False
    )
    with TestClient(app, base_url=IN_PROCESS_URL) as client:
        document: dict[str, Any] = client.get("/schema/openapi.json").json()
    return document


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return _document(
        Settings().with_overrides(api_max_k=40, api_max_query_chars=300, api_max_crawl_depth=3)
    )


@pytest.mark.parametrize(
    ("path", "method", "codes"),
    # 400 and 403 everywhere but /health: a host not served, a request from another origin
    # (`CrossSiteGuard`); 415 where a body is taken.
    [
        ("/health", "get", ["200"]),
        ("/metrics", "get", ["200", "400", "401", "403"]),
        ("/search", "post", ["200", "400", "401", "403", "409", "413", "415", "503"]),
        ("/ask", "post", ["200", "400", "401", "403", "409", "413", "415", "429", "503"]),
        ("/sources", "get", ["200", "400", "401", "403", "503"]),
        ("/sources", "post", ["201", "400", "401", "403", "409", "413", "415", "503"]),
        ("/sources/{name}", "get", ["200", "400", "401", "403", "404", "503"]),
        ("/sources/{name}", "delete", ["200", "400", "401", "403", "404", "409", "503"]),
        ("/sources/{name}/sync", "post", ["202", "400", "401", "403", "404", "409", "429", "503"]),
        ("/documents", "post", ["202", "400", "401", "403", "413", "415", "429", "503"]),
        # 409: a document summary while its ingest is still writing summaries.
        ("/documents/{source}", "get", ["200", "400", "401", "403", "404", "409", "429", "503"]),
        (
            "/documents/{source}/summary",
            "get",
            ["200", "400", "401", "403", "404", "409", "429", "503"],
        ),
        ("/documents/{source}", "delete", ["200", "400", "401", "403", "404", "409", "503"]),
        ("/jobs", "get", ["200", "400", "401", "403", "503"]),
        ("/jobs/{job_id}", "get", ["200", "400", "401", "403", "404", "503"]),
        ("/jobs/{job_id}", "delete", ["200", "400", "401", "403", "404", "409", "503"]),
        ("/jobs/{job_id}/retry", "post", ["202", "400", "401", "403", "404", "409", "429", "503"]),
        ("/conversations", "post", ["201", "400", "401", "403", "429", "503"]),
        ("/conversations/{conversation_id}", "get", ["200", "400", "401", "403", "404", "503"]),
        ("/conversations/{conversation_id}", "delete", ["200", "400", "401", "403", "404", "503"]),
        (
            "/conversations/{conversation_id}/messages",
            "post",
            ["200", "400", "401", "403", "404", "409", "413", "415", "429", "503"],
        ),
    ],
)
def test_every_error_a_route_answers_is_declared(
    document: dict[str, Any], path: str, method: str, codes: list[str]
) -> None:
    responses = document["paths"][path][method]["responses"]
    assert sorted(responses) == codes
    for code in codes[1:]:
        schema = responses[code]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/ErrorBody"}


def test_request_bodies_are_closed_with_their_bounds_and_the_configured_limits(
    document: dict[str, Any],
) -> None:
    schemas = document["components"]["schemas"]
    search = schemas["SearchRequestBody"]
    assert search["additionalProperties"] is False
    assert (search["properties"]["k"]["minimum"], search["properties"]["k"]["maximum"]) == (1, 40)
    assert search["properties"]["query"]["maxLength"] == 300
    assert search["properties"]["alpha"]["minimum"] == 0.0  # Litestar leaves out a zero bound
    ask = schemas["AskRequestBody"]
    assert ask["additionalProperties"] is False
    assert ask["properties"]["k"]["maximum"] == 20  # the lower of 20 and api_max_k
    assert ask["properties"]["max_vector_distance"]["minimum"] == 0.0
    assert "additionalProperties" not in schemas["SearchHit"]  # a response: open


def test_post_documents_declares_its_json_and_multipart_bodies(document: dict[str, Any]) -> None:
    # The app's component, which carries its configured limits.
    reference = document["paths"]["/documents"]["post"]["requestBody"]
    assert reference == {"$ref": "#/components/requestBodies/DocumentCreate"}
    body = document["components"]["requestBodies"]["DocumentCreate"]
    assert body["required"] is True
    by_url, inline = body["content"]["application/json"]["schema"]["oneOf"]
    assert (by_url["required"], inline["required"]) == (["url"], ["content", "source"])
    assert by_url["additionalProperties"] is inline["additionalProperties"] is False
    depth = by_url["properties"]["crawl_depth"]["oneOf"][0]
    assert (depth["minimum"], depth["maximum"]) == (0, 3)
    files = body["content"]["multipart/form-data"]["schema"]["properties"]["files"]
    assert (files["minItems"], files["maxItems"]) == (1, 50)


def test_ask_declares_its_event_stream(document: dict[str, Any]) -> None:
    content = document["paths"]["/ask"]["post"]["responses"]["200"]["content"]
    assert sorted(content) == ["application/json", "text/event-stream"]
    event = content["text/event-stream"]["schema"]
    assert event["properties"]["event"]["enum"] == ["token", "citations", "done", "error"]
    data = event["properties"]["data"]
    assert data["contentMediaType"] == "application/json"
    token, citations, done, error = data["contentSchema"]["oneOf"]
    # A token says whether it is a draft (unchecked); `done` what became of the draft.
    assert (token["title"], sorted(token["properties"])) == ("AnswerToken", ["draft", "text"])
    assert token["properties"]["draft"] == {"type": "boolean", "default": True}
    assert citations == {"type": "array", "items": {"$ref": "#/components/schemas/SearchHit"}}
    assert done["title"] == "AskDone"
    assert done["properties"]["draft"]["enum"] == ["accepted", "none", "replaced"]
    assert "draft" in done["required"]
    assert error == {"$ref": "#/components/schemas/ErrorBody"}
    assert {"SearchHit", "ErrorBody"} <= set(document["components"]["schemas"])


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"query": "x", "alpha": "0"}, 400, "alpha"),  # Litestar alone took the string
        ({"query": "x", "k": "3"}, 400, "k"),
        ({"query": "x", "k": 3.0}, 200, None),  # JSON Schema's integer
        ({"query": "x", "alpha": 1}, 200, None),
    ],
)
def test_search_bodies_are_decoded_strictly(
    body: dict[str, Any], status: int, field: str | None
) -> None:
    fake = FakeSynopsis()
    app = create_app(
        synopsis=cast(Synopsis, fake), ollama_http=_ollama(_ollama_ok), background=False
    )
    with TestClient(app, base_url=IN_PROCESS_URL) as client:
        response = client.post("/search", json=body)
    assert response.status_code == status, response.text
    if field is not None:
        assert response.json()["field"] == field
        assert fake.calls == []
    else:
        assert fake.requests[0].k in (3, 7)


@pytest.mark.parametrize("path", ["/jobs?offset=9901", "/documents/a.md?offset=9801"])
def test_offsets_stay_within_what_weaviate_reads(path: str) -> None:
    # Weaviate refuses offset + limit over 10,000 (a 5xx, found by the fuzz run).
    app = create_app(
        synopsis=cast(Synopsis, FakeSynopsis()), ollama_http=_ollama(_ollama_ok), background=False
    )
    with TestClient(app, base_url=IN_PROCESS_URL) as client:
        client.app.state.job_queue = client.app.state.jobs = object()  # never reached
        response = client.get(path)
    assert (response.status_code, response.json()["field"]) == (400, "offset")


@pytest.mark.parametrize(
    ("title", "nothing"), [(None, False), ("", False), ("Tutorial", False), ("D¦e@)", False),
                           ("¦@)", True), ("...", True), ("Ünïcode", False)]
)  # fmt: skip
def test_a_title_without_a_word_matches_nothing(title: str | None, nothing: bool) -> None:
    assert SearchFilters(title=title).matches_nothing() is nothing
    assert SearchRequest(query="x", title=title).validate() is None


def test_routes_that_take_a_key_declare_the_bearer_scheme(document: dict[str, Any]) -> None:
    schemes = document["components"]["securitySchemes"]
    assert {name: (s["type"], s["scheme"]) for name, s in schemes.items()} == {
        "apiKey": ("http", "bearer")
    }
    secured = {
        (path, method)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if operation.get("security") == [{"apiKey": []}]
    }
    open_routes = {
        (path, method)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if "security" not in operation
    }
    assert {("/search", "post"), ("/ask", "post"), ("/documents", "post")} <= secured
    assert {("/health", "get"), ("/ready", "get")} <= open_routes
    # Every route that may answer 401 says how to send a key, and no other does.
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert ((path, method) in secured) == ("401" in operation["responses"]), path


def test_a_hits_fields_are_described_by_what_the_core_says_they_mean(
    document: dict[str, Any],
) -> None:
    properties = document["components"]["schemas"]["SearchHit"]["properties"]
    assert list(properties) == [*(spec.name for spec in HIT_FIELDS), "tokens", "section"]
    assert {spec.name: properties[spec.name].get("description") for spec in HIT_FIELDS} == {
        spec.name: spec.meaning for spec in HIT_FIELDS
    }


def test_every_parameter_is_declared_in_litestars_current_style() -> None:
    # A path parameter declared by inference (`name: str`) is deprecated in Litestar 2.25:
    # `FromPath[...]` names it a path parameter.
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        create_app(
            synopsis=cast(Synopsis, FakeSynopsis()),
            ollama_http=_ollama(_ollama_ok),
            background=False,
        )


def test_post_documents_takes_the_upload_limit_and_other_routes_the_body_limit() -> None:
    settings = Settings().with_overrides(api_max_body_bytes=1000, api_max_upload_bytes=5000)
    app = create_app(
        settings, synopsis=cast(Synopsis, FakeSynopsis()), ollama_http=_ollama(_ollama_ok)
    )
    limits = {
        (method, route.path): handler.resolve_request_max_body_size()
        for route in app.routes
        for handler in getattr(route, "route_handlers", [])
        for method in handler.http_methods
    }
    assert limits[("POST", "/documents")] == 5000
    assert limits[("GET", "/documents/{source:path}")] == 5000  # no body
    assert limits[("POST", "/search")] == limits[("POST", "/sources")] == 1000


def test_every_body_is_decoded_once_strictly_by_the_apps_dto() -> None:
    # Litestar's own decoding of `data` is lax (`{"k": "3"}` → 3): each route that takes a
    # body has it decoded by StrictBody instead, before the handler, and only so.
    app = create_app(
        synopsis=cast(Synopsis, FakeSynopsis()), ollama_http=_ollama(_ollama_ok), background=False
    )
    decoders = {
        (method, route.path): handler.resolve_data_dto()
        for route in app.routes
        for handler in getattr(route, "route_handlers", [])
        if "data" in handler.parsed_fn_signature.parameters
        for method in handler.http_methods
    }
    assert decoders == {
        ("POST", "/search"): StrictBody,
        ("POST", "/ask"): StrictBody,
        ("POST", "/sources"): StrictBody,
        ("PATCH", "/sources/{name:str}"): StrictBody,
        ("POST", "/conversations/{conversation_id:str}/messages"): StrictBody,
    }
