"""Requests a web page on another site makes the operator's browser send: a rebound host
name, a `text/plain` JSON body, a form upload, a cross-site GET. Each is refused before the
handler runs; the API's own page (same origin, JSON) and clients that are not browsers are
served as before."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from service.api.crosssite import allowed_hosts, host_allowed
from service.errors import ConfigurationError
from service.settings import Settings
from tests.service.api.apps import client_over
from tests.service.api.test_api import FakeSynopsis, _ollama, _ollama_ok
from tests.service.api.test_api_security import ROUTES

LOCAL = "http://127.0.0.1:8000"
ATTACKER = "http://attacker.example"
SEARCH = {"query": "range()"}


def _client(settings: Settings | None = None, fake: FakeSynopsis | None = None) -> TestClient[Any]:
    fake = fake or FakeSynopsis()
    if settings is not None:
        fake.settings = settings
    # The app for these settings, built once (tests/service/api/apps.py).
    return client_over(fake, _ollama(_ollama_ok), base_url=LOCAL)


def _refused(response: httpx.Response, status: int, error: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["error"] == error
    assert body["request_id"] == response.headers["x-request-id"]
    return body


# -- the measured holes ---------------------------------------------------------------------


def test_a_text_plain_search_from_another_site_gets_no_results() -> None:
    fake = FakeSynopsis()
    with _client(fake=fake) as client:
        response = client.post(
            "/search",
            content=b'{"query": "range()"}',
            headers={"Content-Type": "text/plain", "Origin": ATTACKER},
        )
    assert response.status_code != 200
    assert fake.calls == []


def test_a_rebound_host_name_is_refused() -> None:
    fake = FakeSynopsis()
    with _client(fake=fake) as client:
        response = client.post("/search", json=SEARCH, headers={"Host": "attacker.example"})
    body = _refused(response, 400, "DisallowedHost")
    assert "attacker.example" in body["detail"]
    assert "SYNOPSIS_API_ALLOWED_HOSTS" in body["detail"]
    assert fake.calls == []


# -- host names -----------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "body", "needed", "ok"), ROUTES)
def test_every_route_but_health_refuses_a_host_it_does_not_serve(
    method: str, path: str, body: Any, needed: Any, ok: int
) -> None:
    with _client() as client:
        response = client.request(
            method, path, json=body, headers={"Host": "attacker.example:8000"}
        )
    if path in ("/health", "/ready"):  # probes reach a pod by its address; nothing to take
        assert response.status_code == ok, response.text
    else:
        _refused(response, 400, "DisallowedHost")


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "localhost:8000",
        "LOCALHOST:8000",
        "localhost.:8000",
        "docs.localhost:8000",  # *.localhost is loopback in every browser (RFC 6761)
        "127.0.0.1:8000",
        "127.0.0.2",
        "[::1]:8000",
        "[::1]",
    ],
)
def test_loopback_names_are_served_by_default(host: str) -> None:
    with _client() as client:
        response = client.post("/search", json=SEARCH, headers={"Host": host})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    "host",
    [
        "attacker.example",
        "localhost.attacker.example",
        "127.0.0.1.attacker.example",
        "0.0.0.0:8000",
        "192.168.1.5:8000",
        "[::]:8000",
        "",
        ":8000",
        "localhost:8000@attacker.example",
    ],
)
def test_other_names_are_refused_by_default(host: str) -> None:
    with _client() as client:
        response = client.post("/search", json=SEARCH, headers={"Host": host})
    _refused(response, 400, "DisallowedHost")


@pytest.mark.parametrize(
    ("settings", "host", "served"),
    [
        # The configured api_host is served, unless it is a wildcard address.
        (Settings().with_overrides(api_host="docs.internal"), "docs.internal:8000", True),
        (Settings().with_overrides(api_host="10.1.2.3"), "10.1.2.3:8000", True),
        (Settings().with_overrides(api_host="0.0.0.0"), "0.0.0.0:8000", False),
        # An explicit list replaces the default names.
        (
            Settings().with_overrides(api_allowed_hosts="docs.corp, search.corp"),
            "search.corp",
            True,
        ),
        (Settings().with_overrides(api_allowed_hosts="docs.corp"), "localhost:8000", False),
        (Settings().with_overrides(api_allowed_hosts="*.corp"), "docs.corp", True),
        (Settings().with_overrides(api_allowed_hosts="*.corp"), "a.b.corp:443", True),
        (Settings().with_overrides(api_allowed_hosts="*.corp"), "corp", False),
        (Settings().with_overrides(api_allowed_hosts="*.corp"), "evilcorp", False),
        (Settings().with_overrides(api_allowed_hosts="*"), "anything.example", True),
    ],
)
def test_allowed_hosts_come_from_the_settings(settings: Settings, host: str, served: bool) -> None:
    assert host_allowed(host, allowed_hosts(settings)) is served


@pytest.mark.parametrize("value", ["http://docs.corp", "docs.corp:8000", "a*.corp", "*", "a b"])
def test_a_malformed_allowed_host_is_a_configuration_error(value: str) -> None:
    if value == "*":
        Settings().with_overrides(api_allowed_hosts=value)  # any host, on purpose
        return
    with pytest.raises(ConfigurationError, match="SYNOPSIS_API_ALLOWED_HOSTS"):
        Settings().with_overrides(api_allowed_hosts=value)


# -- bodies ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/search", b'{"query": "range()"}'),
        ("/ask", b'{"question": "How do I loop?"}'),
        ("/documents", b'{"content": "# A\\n\\nText.", "source": "a.md"}'),
        ("/conversations/00000000-0000-0000-0000-000000000001/messages", b'{"question": "Why?"}'),
    ],
)
@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded", None],
)
def test_a_json_route_refuses_another_content_type(
    path: str, body: bytes, content_type: str | None
) -> None:
    fake = FakeSynopsis()
    headers = {} if content_type is None else {"Content-Type": content_type}
    with _client(fake=fake) as client:
        response = client.post(path, content=body, headers=headers)
    detail = _refused(response, 415, "UnsupportedMediaType")["detail"]
    assert "application/json" in detail
    assert fake.calls == []


def test_json_with_a_charset_is_json() -> None:
    with _client() as client:
        response = client.post(
            "/search",
            content=b'{"query": "range()"}',
            headers={"Content-Type": "Application/JSON; charset=utf-8"},
        )
    assert response.status_code == 200, response.text


def test_only_the_upload_takes_multipart() -> None:
    fake = FakeSynopsis()
    with _client(fake=fake) as client:
        search = client.post("/search", files={"query": ("q.txt", b"range()")})
        upload = client.post("/documents", files={"files": ("a.md", b"# A\n\nText.")})
    _refused(search, 415, "UnsupportedMediaType")
    # Past the check: the fake core has no job queue, so the upload's handler answers 503.
    assert upload.status_code == 503, upload.text
    assert upload.json()["error"] == "JobsUnavailableError"


# -- browsers' own marks: Origin and Sec-Fetch-Site -----------------------------------------


# (headers a browser sends, refused?) for a POST
BROWSER_POSTS: list[tuple[dict[str, str], bool]] = [
    ({"Origin": ATTACKER}, True),
    ({"Origin": "null"}, True),  # a sandboxed frame or a file:// page
    ({"Origin": "http://127.0.0.1:3000"}, True),  # another server on the same machine
    ({"Origin": "https://127.0.0.1:8000"}, False),  # a TLS proxy in front: the same host
    ({"Origin": LOCAL}, False),  # the API's own page
    ({"Origin": LOCAL, "Sec-Fetch-Site": "same-origin"}, False),
    ({"Sec-Fetch-Site": "cross-site"}, True),
    ({"Sec-Fetch-Site": "same-site"}, True),
    ({"Sec-Fetch-Site": "same-origin"}, False),
    ({"Sec-Fetch-Site": "none"}, False),  # typed by the user
    ({}, False),  # not a browser: curl, the HTTP retriever
]


@pytest.mark.parametrize(("headers", "refused"), BROWSER_POSTS)
def test_a_json_request_from_another_origin_is_refused(
    headers: dict[str, str], refused: bool
) -> None:
    fake = FakeSynopsis()
    with _client(fake=fake) as client:
        response = client.post("/search", json=SEARCH, headers=headers)
    if refused:
        assert "another origin" in _refused(response, 403, "CrossOriginRequest")["detail"]
        assert fake.calls == []
    else:
        assert response.status_code == 200, response.text


@pytest.mark.parametrize(("headers", "refused"), BROWSER_POSTS)
def test_an_upload_from_another_origin_is_refused_with_or_without_keys(
    headers: dict[str, str], refused: bool
) -> None:
    write = "write-key-0123456789"
    for settings, auth in ((Settings(), {}), (Settings().with_overrides(api_write_keys=write), {})):
        with _client(settings) as client:
            response = client.post(
                "/documents",
                files={"files": ("a.md", b"# A\n\nText.")},
                headers={**headers, **auth},
            )
        if refused:
            _refused(response, 403, "CrossOriginRequest")
        elif settings.api.write_keys:
            assert response.status_code == 401, response.text  # and then it needs the key
        else:
            assert response.status_code == 503, response.text  # reached the handler


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        # An <img> or <script> of another site: refused (a summary costs a model call).
        ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, 403),
        ({"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors"}, 403),
        # A link followed from another site opens the page, or a JSON view, as before.
        ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}, 200),
        ({"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"}, 200),
        ({}, 200),
    ],
)
def test_a_cross_site_subresource_get_is_refused(headers: dict[str, str], status: int) -> None:
    with _client() as client:
        for path in ("/sources", "/"):
            response = client.get(path, headers=headers)
            assert response.status_code == status, (path, response.text)


def test_the_page_calls_the_api_as_a_same_origin_json_request() -> None:
    """What the page's fetch() sends (Chromium, checked in test_page_browser.py)."""
    browser = {"Origin": LOCAL, "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"}
    with _client() as client:
        search = client.post("/search", json=SEARCH, headers=browser)
        ask = client.post("/ask", json={"question": "How do I loop?"}, headers=browser)
    assert search.status_code == 200, search.text
    assert ask.status_code == 200, ask.text


def test_the_refusals_are_declared_in_the_openapi_document() -> None:
    with _client() as client:
        document = client.get("/schema/openapi.json").json()
    search = document["paths"]["/search"]["post"]["responses"]
    upload = document["paths"]["/documents"]["post"]["responses"]
    assert {"403", "415"} <= set(search)
    assert {"403", "415"} <= set(upload)
