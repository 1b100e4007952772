"""Server-side request forgery through the HTTP API, on the real stack.

`POST /documents` with a URL is checked against the address policy before a job is
queued: a loopback, private, link-local or metadata address, however it is spelled, and a
scheme other than http(s) are a `400` that names the reason, no job is created and no
connection is made. Local test servers listen on the loopback port the refused URLs name
(on 127.0.0.1 and on ::1) and count the connections they accept: none. The app runs
with `fetch_allow` empty, as a deployment does by default.

A redirect is checked too: with `fetch_allow="127.0.0.1"`, a page there that redirects to
127.0.0.2 makes the job fail with the refusal in its errors, and the server on 127.0.0.2
sees no connection. No case reaches the LLM (nothing is loaded, so nothing is summarized).
Collections are prefixed `TestApiSsrf` and dropped before and after.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from litestar.testing import TestClient

from service.api import create_app
from service.connections import connect_weaviate
from service.index.store import Store
from service.jobs import JobStore
from service.settings import Settings
from tests.service.serving import IN_PROCESS_URL

pytestmark = pytest.mark.integration

PREFIX = "TestApiSsrf"
WRITE = {"Authorization": "Bearer ssrf-write-key"}
FINAL = {"done", "failed", "cancelled", "interrupted"}


@dataclass
class Counted:
    """What one test server saw: connections accepted and request paths."""

    connections: int = 0
    paths: list[str] = field(default_factory=list)
    redirects: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    counted: Counted

    def do_GET(self) -> None:
        with self.counted.lock:
            self.counted.paths.append(self.path)
        target = self.counted.redirects.get(self.path)
        if target is not None:
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = b"<main><h1>Secret</h1><p>Internal page.</p></main>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _CountingServer(ThreadingHTTPServer):
    counted: Counted

    def get_request(self) -> Any:
        request = super().get_request()
        with self.counted.lock:
            self.counted.connections += 1  # before a byte of the request is read
        return request


class _CountingServer6(_CountingServer):
    address_family = socket.AF_INET6


def _server(host: str, port: int, counted: Counted) -> _CountingServer:
    kind = _CountingServer6 if ":" in host else _CountingServer
    handler = type("Handler", (_Handler,), {"counted": counted})
    server = kind((host, port), handler)
    server.counted = counted
    return server


@dataclass
class Listening:
    """Servers on one port on several loopback addresses, and what each saw."""

    port: int
    sites: dict[str, Counted]

    @property
    def connections(self) -> int:
        return sum(site.connections for site in self.sites.values())


@pytest.fixture
def listening() -> Iterator[Any]:
    """`listening(*hosts)`: a counting server on each host, all on one free port."""
    started: list[tuple[_CountingServer, threading.Thread]] = []

    def start(*hosts: str) -> Listening:
        for _ in range(20):
            sites = {host: Counted() for host in hosts}
            servers: list[_CountingServer] = []
            try:
                first = _server(hosts[0], 0, sites[hosts[0]])
                servers.append(first)
                port = first.server_address[1]
                for host in hosts[1:]:
                    servers.append(_server(host, port, sites[host]))
            except OSError:
                for server in servers:
                    server.server_close()
                continue
            break
        else:
            pytest.fail(f"no port free on all of {hosts}")
        for server in servers:
            thread = threading.Thread(
                target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            thread.start()
            started.append((server, thread))
        return Listening(port, sites)

    yield start
    for server, thread in started:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _drop(settings: Settings) -> None:
    client = connect_weaviate(settings)
    try:
        Store(client, prefix=PREFIX).drop()
        JobStore(client, prefix=PREFIX).drop()
    finally:
        client.close()


@pytest.fixture(scope="module")
def ssrf_settings(settings: Settings) -> Iterator[Settings]:
    """Test collections, a write key, fast polling and an empty `fetch_allow`."""
    configured = settings.with_overrides(
        collection_prefix=PREFIX,
        jobs_poll_seconds=0.2,
        api_write_keys="ssrf-write-key",
        fetch_allow="",
    )
    _drop(configured)
    yield configured
    _drop(configured)


@pytest.fixture(scope="module")
def client(ssrf_settings: Settings) -> Iterator[TestClient[Any]]:
    """One app for every refusal: none of them may leave a job behind. It runs no jobs
    (`jobs_workers=0`): while it lives, its workers would otherwise race the redirect
    test's app for that test's job, on the same collections, with `fetch_allow` empty."""
    refusing = ssrf_settings.with_overrides(jobs_workers=0)
    with TestClient(create_app(refusing), base_url=IN_PROCESS_URL) as test_client:
        yield test_client


def _hostname_on_loopback() -> str | None:
    """This machine's host name when it resolves to loopback addresses only (as where
    /etc/hosts maps it to 127.0.0.1), else None."""
    name = socket.gethostname()
    try:
        found = {info[4][0] for info in socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)}
    except OSError:
        return None
    if found and all(ipaddress.ip_address(address).is_loopback for address in found):
        return name
    return None


# (URL with {port} for the test servers' port, words the refusal must contain)
REFUSED: list[tuple[str, str]] = [
    ("http://127.0.0.1:{port}/", "127.0.0.1 is a loopback address"),
    ("http://localhost:{port}/", "localhost resolves to 127.0.0.1, which is a loopback address"),
    ("http://LocalHost:{port}/docs/", "resolves to 127.0.0.1, which is a loopback address"),
    ("http://localhost.:{port}/", "localhost"),
    ("http://[::1]:{port}/", "::1 is a loopback address"),
    ("http://[::ffff:127.0.0.1]:{port}/", "maps to 127.0.0.1, a loopback address"),
    ("http://10.0.0.1/", "10.0.0.1 is a private address"),
    ("http://192.168.1.1:{port}/", "192.168.1.1 is a private address"),
    ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"),
    ("http://[fd00:ec2::254]/latest/meta-data/", "is a cloud metadata address"),
    ("http://2130706433:{port}/", "2130706433 is 127.0.0.1, which is a loopback address"),
    ("http://0x7f.1:{port}/", "0x7f.1 is 127.0.0.1, which is a loopback address"),
    ("http://0177.0.0.1:{port}/", "0177.0.0.1 is 127.0.0.1, which is a loopback address"),
    ("http://127.1:{port}/", "127.1 is 127.0.0.1, which is a loopback address"),
    ("http://0.0.0.0:{port}/", "0.0.0.0 is an unspecified address"),
    ("http://user:pass@127.0.0.1:{port}/", "127.0.0.1 is a loopback address"),
    ("file:///etc/passwd", "scheme 'file' is not http or https"),
    ("ftp://127.0.0.1:{port}/pub/", "scheme 'ftp' is not http or https"),
    ("gopher://127.0.0.1:{port}/", "scheme 'gopher' is not http or https"),
]


def _assert_refused(
    client: TestClient[Any], servers: Listening, url: str, reason: str
) -> dict[str, Any]:
    before = client.get("/jobs", headers=WRITE).json()["total"]
    response = client.post("/documents", json={"url": url}, headers=WRITE)
    assert response.status_code == 400, response.text
    body: dict[str, Any] = response.json()
    assert body["error"] == "UnsafeUrlError"
    assert reason in body["detail"], body["detail"]
    # Nothing queued: no job can fetch it later, so no connection can come after this.
    assert client.get("/jobs", headers=WRITE).json()["total"] == before
    assert servers.connections == 0, servers.sites
    return body


@pytest.mark.parametrize(("template", "reason"), REFUSED)
def test_a_refused_url_is_400_with_its_reason_and_no_connection(
    client: TestClient[Any], listening: Any, template: str, reason: str
) -> None:
    servers: Listening = listening("127.0.0.1", "::1")
    _assert_refused(client, servers, template.format(port=servers.port), reason)


def test_a_host_name_of_this_machine_on_loopback_is_refused(
    client: TestClient[Any], listening: Any
) -> None:
    name = _hostname_on_loopback()
    if name is None:
        pytest.skip("this machine's host name does not resolve to a non-global address")
    servers: Listening = listening("127.0.0.1")
    url = f"http://{name}:{servers.port}/"
    _assert_refused(client, servers, url, "which is a loopback address")


def test_a_crawl_of_a_refused_url_is_refused_too(client: TestClient[Any], listening: Any) -> None:
    servers: Listening = listening("127.0.0.1")
    response = client.post(
        "/documents",
        json={"url": f"http://127.0.0.1:{servers.port}/", "crawl_depth": 2, "max_pages": 5},
        headers=WRITE,
    )
    assert response.status_code == 400
    assert "loopback" in response.json()["detail"]
    assert servers.connections == 0


def _wait(client: TestClient[Any], job_id: str, *, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        job: dict[str, Any] = client.get(f"/jobs/{job_id}", headers=WRITE).json()
        if job["state"] in FINAL:
            return job
        assert time.monotonic() < deadline, f"job still {job['state']}: {job}"
        time.sleep(0.2)


def test_a_redirect_from_an_allowed_server_to_a_refused_address_fails_the_job(
    ssrf_settings: Settings, listening: Any
) -> None:
    servers: Listening = listening("127.0.0.1", "127.0.0.2")
    allowed, refused = servers.sites["127.0.0.1"], servers.sites["127.0.0.2"]
    target = f"http://127.0.0.2:{servers.port}/secret.html"
    allowed.redirects["/start.html"] = target
    url = f"http://127.0.0.1:{servers.port}/start.html"
    opened = ssrf_settings.with_overrides(fetch_allow="127.0.0.1")
    with TestClient(create_app(opened), base_url=IN_PROCESS_URL) as client:
        response = client.post("/documents", json={"url": url}, headers=WRITE)
        assert response.status_code == 202, response.text
        job = _wait(client, response.json()["id"])
        documents = client.get("/documents", headers=WRITE).json()
    assert job["state"] == "failed", job
    assert job["reason"] == "no source could be loaded (see errors)"
    assert any(
        "127.0.0.2 is a loopback address" in error and "redirect" in error
        for error in job["errors"]
    ), job["errors"]
    assert allowed.paths == ["/robots.txt", "/start.html"]  # robots first, then the page
    assert refused.connections == 0
    assert refused.paths == []
    assert [item["source"] for item in documents] == []
