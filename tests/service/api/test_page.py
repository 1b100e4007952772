"""The search page's files: served without a key, with their types and a strict
Content-Security-Policy, and the script renders text only (never parsed HTML)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from service.api.page import PAGE_HEADERS
from service.settings import Settings
from tests.service.api.apps import client_over
from tests.service.api.test_api import FakeSynopsis, _ollama, _ollama_ok

WEB = Path(__file__).parents[3] / "service" / "api" / "web"
KEYED = Settings().with_overrides(api_read_keys="page-read-key", api_write_keys="page-write-key")


def _client() -> TestClient[Any]:
    fake = FakeSynopsis()
    # The app for these settings, built once (tests/service/api/apps.py).
    return client_over(fake, _ollama(_ollama_ok), settings=KEYED)


@pytest.mark.parametrize(
    ("path", "media_type", "name"),
    [
        ("/", "text/html; charset=utf-8", "index.html"),
        ("/ui/app.js", "text/javascript; charset=utf-8", "app.js"),
        ("/ui/style.css", "text/css; charset=utf-8", "style.css"),
        ("/ui/icon.svg", "image/svg+xml", "icon.svg"),
    ],
)
def test_each_file_is_served_without_a_key_with_its_type_and_the_policy(
    path: str, media_type: str, name: str
) -> None:
    with _client() as client:
        response = client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == media_type
    assert response.content == (WEB / name).read_bytes()
    for header, value in PAGE_HEADERS.items():
        assert response.headers[header] == value


def test_the_policy_allows_no_inline_script_and_no_other_origin() -> None:
    policy = PAGE_HEADERS["Content-Security-Policy"]
    assert "'unsafe-inline'" not in policy
    assert "script-src 'self'" in policy
    assert "connect-src 'self'" in policy
    page = (WEB / "index.html").read_text()
    # Every script is a file of this origin, so the policy does not block the page's own.
    assert re.findall(r"<script[^>]*>", page) == ['<script src="/ui/app.js" defer>']
    assert "style=" not in page


def test_the_page_is_not_in_the_api_schema() -> None:
    with _client() as client:
        paths = client.get("/schema/openapi.json").json()["paths"]
    assert "/" not in paths
    assert not [path for path in paths if path.startswith("/ui/")]


def test_the_script_never_parses_html() -> None:
    script = (WEB / "app.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script
