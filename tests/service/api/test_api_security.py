"""API keys: loading, the read/write guards on every route, constant-time comparison, no
key in a log line or a body, and the refusal to serve an open API beyond loopback."""

from __future__ import annotations

import hmac
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from litestar import Request, get
from litestar.testing import TestClient

from service.api import create_app, security
from service.api.security import (
    ANONYMOUS,
    ApiKeys,
    Role,
    caller_id,
    check_bind,
    is_loopback,
    load_api_keys,
    require_read,
)
from service.errors import ConfigurationError
from service.settings import Settings
from service.synopsis import Synopsis
from tests.service.api.test_api import FakeSynopsis, _ollama, _ollama_ok
from tests.service.serving import IN_PROCESS_URL

READ_KEY = "read-key-0123456789abcdef"
WRITE_KEY = "write-key-fedcba9876543210"
KEYED = Settings().with_overrides(
    api_read_keys=f" {READ_KEY} , other-read-key", api_write_keys=WRITE_KEY
)

# (method, path, JSON body, what the route needs: None = no key, else a role, the status of
# an allowed request). The fake core has no job queue, so a route that needs one answers a
# clean 503 (`JobsUnavailableError`) once the guard lets the request through.
JOB = "00000000-0000-0000-0000-00000000000a"
ROUTES: list[tuple[str, str, Any, Role | None, int]] = [
    ("GET", "/health", None, None, 200),
    ("GET", "/ready", None, None, 200),
    ("POST", "/conversations", None, Role.READ, 201),
    # A conversation of another key, or none: 404 either way.
    ("GET", f"/conversations/{JOB}", None, Role.READ, 404),
    ("POST", f"/conversations/{JOB}/messages", {"question": "And then?"}, Role.READ, 404),
    ("DELETE", f"/conversations/{JOB}", None, Role.READ, 404),
    ("GET", "/", None, None, 200),  # the search page: its requests carry the key
    ("GET", "/ui/app.js", None, None, 200),
    ("GET", "/ui/style.css", None, None, 200),
    ("GET", "/ui/icon.svg", None, None, 200),
    ("GET", "/metrics", None, Role.READ, 200),
    ("POST", "/search", {"query": "range()"}, Role.READ, 200),
    ("POST", "/ask", {"question": "How do I loop?"}, Role.READ, 200),
    ("GET", "/sources", None, Role.READ, 200),
    ("GET", "/sources/none", None, Role.READ, 404),
    # Refused as invalid once the guard let it through (a valid one registers once only).
    ("POST", "/sources", {"name": "a b", "location": "https://93.184.216.34/"}, Role.WRITE, 400),
    ("DELETE", "/sources/none", None, Role.WRITE, 404),
    ("POST", "/sources/none/sync", None, Role.WRITE, 503),
    ("GET", "/stats", None, Role.READ, 200),
    ("GET", "/documents", None, Role.READ, 503),
    ("POST", "/documents", {"content": "# A\n\nText.", "source": "a.md"}, Role.WRITE, 503),
    ("POST", "/documents", {"url": "https://docs.example/"}, Role.WRITE, 503),
    ("GET", "/documents/docs/a.md", None, Role.READ, 503),
    ("DELETE", "/documents/docs/a.md", None, Role.WRITE, 200),
    ("DELETE", "/documents/https%3A%2F%2Fdocs.example%2Fa.html", None, Role.WRITE, 200),
    ("GET", "/jobs", None, Role.WRITE, 503),
    ("GET", f"/jobs/{JOB}", None, Role.WRITE, 503),
    ("DELETE", f"/jobs/{JOB}", None, Role.WRITE, 503),
    ("POST", f"/jobs/{JOB}/retry", None, Role.WRITE, 503),
]

# (Authorization header, the role it grants: None = not a valid key)
CREDENTIALS: list[tuple[str | None, Role | None]] = [
    (None, None),
    (f"Bearer {READ_KEY}", Role.READ),
    (f"Bearer {WRITE_KEY}", Role.WRITE),
    (f"bearer {WRITE_KEY}", Role.WRITE),  # the scheme is case-insensitive
    ("Bearer wrong-key", None),
    (f"Basic {READ_KEY}", None),
    ("Bearer", None),
    (READ_KEY, None),
]


def _client(settings: Settings, fake: FakeSynopsis | None = None) -> TestClient[Any]:
    fake = fake or FakeSynopsis()
    fake.settings = fake.settings.with_overrides(**_api_fields(settings))
    app = create_app(
        settings, synopsis=cast(Synopsis, fake), ollama_http=_ollama(_ollama_ok), background=False
    )
    return TestClient(app, base_url=IN_PROCESS_URL)


def _api_fields(settings: Settings) -> dict[str, Any]:
    return {name: settings.value(name) for name in Settings.env_names() if "api" in name}


def _expected(needed: Role | None, granted: Role | None, ok: int) -> int:
    if needed is None:
        return ok
    if granted is None:
        return 401
    return ok if granted >= needed else 403


def _check_allowed(response: httpx.Response, ok: int) -> None:
    """An allowed request reached its handler: `ok`, and a 503 is the clean one."""
    assert response.status_code == ok, response.text
    if ok == 503:
        assert response.headers["retry-after"] == "5"
        body = response.json()
        assert (body["error"], body["detail"]) == (
            "JobsUnavailableError",
            "jobs are not available in this process",
        )


@pytest.fixture(scope="module")
def keyed() -> Iterator[tuple[TestClient[Any], FakeSynopsis]]:
    """One app with keys for the whole matrix (an app per case took most of its time)."""
    fake = FakeSynopsis()
    with _client(KEYED, fake) as client:
        yield client, fake


@pytest.fixture(scope="module")
def open_client() -> Iterator[TestClient[Any]]:
    """One app without keys."""
    with _client(Settings()) as client:
        yield client


@pytest.mark.parametrize("credential", CREDENTIALS)
@pytest.mark.parametrize(("method", "path", "body", "needed", "ok"), ROUTES)
def test_the_auth_matrix(
    *,
    keyed: tuple[TestClient[Any], FakeSynopsis],
    method: str,
    path: str,
    body: Any,
    needed: Role | None,
    ok: int,
    credential: tuple[str | None, Role | None],
) -> None:
    authorization, granted = credential
    headers = {"Authorization": authorization} if authorization is not None else {}
    client, fake = keyed
    fake.calls.clear()
    response = client.request(method, path, json=body, headers=headers)
    expected = _expected(needed, granted, ok)
    assert response.status_code == expected, response.text
    if expected == 401:
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert response.json()["error"] == "NotAuthorizedException"
    if expected == 403:
        assert response.json()["detail"] == "this route needs a write key"
    if expected in (401, 403):
        assert fake.calls == []  # the guard answered before the handler
    else:
        _check_allowed(response, ok)


@pytest.mark.parametrize(("method", "path", "body", "needed", "ok"), ROUTES)
def test_without_keys_every_route_is_open(
    *, open_client: TestClient[Any], method: str, path: str, body: Any, needed: Role, ok: int
) -> None:
    _check_allowed(open_client.request(method, path, json=body), ok)
    wrong = open_client.request(method, path, json=body, headers={"Authorization": "Bearer x"})
    _check_allowed(wrong, ok)


@pytest.mark.parametrize(
    ("authorization", "challenge"),
    [(None, "Bearer"), ("Bearer nope", 'Bearer error="invalid_token"')],
)
def test_401_challenges_for_a_bearer_token(authorization: str | None, challenge: str) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    with _client(KEYED) as client:
        response = client.get("/stats", headers=headers)
    assert (response.status_code, response.headers["www-authenticate"]) == (401, challenge)


def test_keys_are_compared_in_constant_time_against_every_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compared: list[tuple[bytes, bytes]] = []
    original = hmac.compare_digest

    def compare_digest(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return original(a, b)

    monkeypatch.setattr(security.hmac, "compare_digest", compare_digest)
    keys = ApiKeys.of(read=["k1", "k2"], write=["k3"])
    assert keys.role_of("k1") is Role.READ  # the first key matches: the others are compared too
    assert len(compared) == 3
    assert all(len(a) == len(b) == 32 for a, b in compared)  # digests: equal lengths
    compared.clear()
    assert keys.role_of("nope") is None
    assert len(compared) == 3


@pytest.mark.parametrize(
    ("read", "write", "key", "role"),
    [
        (["r"], ["w"], "r", Role.READ),
        (["r"], ["w"], "w", Role.WRITE),
        (["both"], ["both"], "both", Role.WRITE),  # a key listed twice keeps the higher role
        (["r"], [], "R", None),
        (["r"], [], "", None),
        ([], [], "r", None),
    ],
)
def test_role_of(read: list[str], write: list[str], key: str, role: Role | None) -> None:
    assert ApiKeys.of(read=read, write=write).role_of(key) is role


def test_keys_come_from_both_lists_and_the_file(tmp_path: Path) -> None:
    keys_file = tmp_path / "keys"
    keys_file.write_text(
        "# the team's keys\n\nread file-read\n  WRITE   file-write  \n# write old-key\n",
        encoding="utf-8",
    )
    settings = Settings().with_overrides(
        api_read_keys="a,,b", api_write_keys="c", api_keys_file=str(keys_file)
    )
    keys = load_api_keys(settings)
    assert repr(keys) == "ApiKeys(read=3, write=2)"
    assert [keys.role_of(k) for k in ("a", "b", "c", "file-read", "file-write", "old-key")] == [
        Role.READ,
        Role.READ,
        Role.WRITE,
        Role.READ,
        Role.WRITE,
        None,
    ]
    assert load_api_keys(Settings()).configured is False


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("read\n", "line 1: expected `read <key>` or `write <key>`"),
        ("# ok\nadmin secret-key-value\n", "line 2: expected `read <key>` or `write <key>`"),
        ("read a secret-key-value\n", "line 1: expected `read <key>` or `write <key>`"),
    ],
)
def test_a_malformed_keys_file_names_the_line_not_the_key(
    tmp_path: Path, content: str, message: str
) -> None:
    keys_file = tmp_path / "keys"
    keys_file.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigurationError, match=message) as raised:
        load_api_keys(Settings().with_overrides(api_keys_file=str(keys_file)))
    assert "secret-key-value" not in str(raised.value)
    assert str(raised.value).startswith("SYNOPSIS_API_KEYS_FILE: ")


def test_an_unreadable_keys_file_fails_at_app_creation(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(ConfigurationError, match=r"SYNOPSIS_API_KEYS_FILE: cannot read .*missing"):
        create_app(
            Settings().with_overrides(api_keys_file=str(missing)),
            synopsis=cast(Synopsis, FakeSynopsis()),
        )


def test_a_key_with_whitespace_is_refused_without_echoing_it() -> None:
    with pytest.raises(ConfigurationError, match="an API key is empty or contains whitespace"):
        ApiKeys.of(read=["two words"])


def test_keys_never_reach_logs_reprs_or_bodies(caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeSynopsis()

    def stats() -> dict[str, object]:
        raise RuntimeError("a bug")

    fake.stats = stats  # type: ignore[method-assign]
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    with _client(KEYED, fake) as client:
        for authorization in (f"Bearer {READ_KEY}", f"Bearer {WRITE_KEY}", f"Bearer {READ_KEY}x"):
            headers = {"Authorization": authorization}
            for method, path, body, *_ in ROUTES:
                texts.append(client.request(method, path, json=body, headers=headers).text)
        texts.append(repr(client.app.state.api_keys))
    texts += [caplog.text, repr(KEYED), str(KEYED)]
    assert any("a bug" in record.getMessage() or record.exc_info for record in caplog.records)
    for text in texts:
        assert READ_KEY not in text
        assert WRITE_KEY not in text


def test_caller_id_is_stable_and_not_the_key() -> None:
    @get("/whoami", guards=[require_read], sync_to_thread=False)
    def whoami(request: Request[Any, Any, Any]) -> dict[str, str]:
        return {"caller": caller_id(request)}

    def ask(settings: Settings, authorization: str | None) -> httpx.Response:
        with _client(settings) as client:
            client.app.register(whoami)
            headers = {"Authorization": authorization} if authorization else {}
            return client.get("/whoami", headers=headers)

    read = ask(KEYED, f"Bearer {READ_KEY}").json()["caller"]
    assert read == ask(KEYED, f"Bearer {READ_KEY}").json()["caller"]
    assert re.fullmatch(r"key:[0-9a-f]{12}", read)
    assert READ_KEY not in read
    assert ask(KEYED, f"Bearer {WRITE_KEY}").json()["caller"] not in (read, ANONYMOUS)
    assert ask(Settings(), None).json() == {"caller": ANONYMOUS}


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("synopsis.example", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize(
    ("host", "settings", "refused"),
    [
        ("127.0.0.1", Settings(), False),
        ("0.0.0.0", Settings(), True),
        ("10.0.0.5", Settings(), True),
        ("0.0.0.0", Settings().with_overrides(api_allow_open=True), False),
        ("0.0.0.0", Settings().with_overrides(api_read_keys="r"), False),
        ("0.0.0.0", Settings().with_overrides(api_write_keys="w"), False),
    ],
)
def test_check_bind(host: str, settings: Settings, refused: bool) -> None:
    if refused:
        with pytest.raises(ConfigurationError, match=f"refusing to serve on {host} without"):
            check_bind(host, load_api_keys(settings), settings)
    else:
        check_bind(host, load_api_keys(settings), settings)


@pytest.mark.parametrize(
    ("settings", "refused"),
    [
        (Settings(), False),
        (Settings().with_overrides(api_host="0.0.0.0"), True),
        (Settings().with_overrides(api_host="10.0.0.5"), True),
        (Settings().with_overrides(api_host="0.0.0.0", api_allow_open=True), False),
        (Settings().with_overrides(api_host="0.0.0.0", api_read_keys="r"), False),
    ],
)
def test_create_app_refuses_an_open_api_beyond_loopback_as_serve_does(
    settings: Settings, refused: bool
) -> None:
    """Another ASGI server (`uvicorn --factory service.api:create_app`) builds the app
    from the settings: an open API on a non-loopback `api_host` does not start."""
    if refused:
        with pytest.raises(ConfigurationError, match=r"refusing to serve on \S+ without API keys"):
            create_app(settings, synopsis=cast(Synopsis, FakeSynopsis()))
    else:
        create_app(settings, synopsis=cast(Synopsis, FakeSynopsis()))


@pytest.mark.parametrize(
    ("settings", "status"),
    [
        (Settings().with_overrides(api_allowed_hosts="192.168.1.5"), 403),
        (Settings().with_overrides(api_allowed_hosts="192.168.1.5", api_allow_open=True), 200),
        (Settings().with_overrides(api_allowed_hosts="192.168.1.5", api_read_keys=READ_KEY), 401),
    ],
)
def test_an_open_api_answers_only_connections_that_arrive_on_loopback(
    settings: Settings, status: int
) -> None:
    """A server bound to 0.0.0.0 by other means than `api_host` (its own --host): a request
    that arrived on a non-loopback address of this machine finds an open API closed."""
    fake = FakeSynopsis()
    fake.settings = fake.settings.with_overrides(**_api_fields(settings))
    app = create_app(
        fake.settings,
        synopsis=cast(Synopsis, fake),
        ollama_http=_ollama(_ollama_ok),
        background=False,
    )
    # The test client's scope names the base URL's host as the server's address.
    with TestClient(app, base_url="http://192.168.1.5:8000") as client:
        response = client.post("/search", json={"query": "range()"})
        health = client.get("/health")
    assert response.status_code == status, response.text
    assert health.status_code == 200
    if status == 403:
        assert "SYNOPSIS_API_ALLOW_OPEN" in response.json()["detail"]
        assert fake.calls == []
