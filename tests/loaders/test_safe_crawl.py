"""Crawls under an `AddressPolicy`, against real HTTP servers on loopback addresses.

The allowed server listens on 127.0.0.1, the refused one on 127.0.0.2 at the same port,
so that a host name rebinding from one to the other changes only the address. The
refused server counts the connections it accepts: every test that refuses it shows it
saw none. Host names (`docs.test`) resolve through a fake resolver; the system cannot
resolve them, so a fetch of one that succeeds connected to the address that was checked.
"""

from __future__ import annotations

import datetime
import ssl
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from loaders import LoadOptions, load
from loaders.addresses import AddressPolicy
from loaders.documents import SOURCE
from service.errors import LoaderError, UnsafeUrlError

ALLOWED = "127.0.0.1"
REFUSED = "127.0.0.2"


@dataclass
class Site:
    """What one server serves (path → page, path → redirect) and what it saw."""

    pages: dict[str, str] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (Host header, path)
    connections: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    site: Site

    def do_GET(self) -> None:
        with self.site.lock:
            self.site.requests.append((self.headers.get("Host", ""), self.path))
        if self.path in self.site.redirects:
            self.send_response(302)
            self.send_header("Location", self.site.redirects[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        page = self.site.pages.get(self.path)
        if page is None:
            self.send_error(404)
            return
        data = page.encode()
        self.send_response(200)
        kind = "text/plain" if self.path.endswith(".txt") else "text/html; charset=utf-8"
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _CountingServer(ThreadingHTTPServer):
    """Counts every connection it accepts, before a request is read."""

    site: Site

    def get_request(self) -> Any:
        request = super().get_request()
        with self.site.lock:
            self.site.connections += 1
        return request


@dataclass
class Servers:
    """The allowed server (127.0.0.1) and the refused one (127.0.0.2), on one port."""

    port: int
    allowed: Site
    refused: Site


def _bind(host: str, port: int, site: Site, tls: ssl.SSLContext | None) -> _CountingServer:
    handler = type("Handler", (_Handler,), {"site": site})
    server = _CountingServer((host, port), handler)
    server.site = site
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    return server


@pytest.fixture
def serve() -> Iterator[Callable[..., Servers]]:
    """Starts the two servers (optionally over TLS); stops them after the test."""
    running: list[tuple[_CountingServer, threading.Thread]] = []

    def start(tls: ssl.SSLContext | None = None) -> Servers:
        allowed, refused = Site(), Site()
        for _ in range(20):  # the same free port on both addresses
            first = _bind(ALLOWED, 0, allowed, tls)
            port = first.server_address[1]
            try:
                second = _bind(REFUSED, port, refused, tls)
            except OSError:
                first.server_close()
                continue
            break
        else:
            pytest.fail("no port free on both loopback addresses")
        for server in (first, second):
            thread = threading.Thread(
                target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            thread.start()
            running.append((server, thread))
        return Servers(port, allowed, refused)

    yield start
    for server, thread in running:
        server.shutdown()
        server.server_close()
        thread.join()


class FakeDNS:
    """Answers each call with the next of `answers`, the last one from then on."""

    def __init__(self, *answers: Sequence[str]) -> None:
        self.answers = answers
        self.calls: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, host: str, port: int) -> Sequence[str]:
        with self._lock:
            self.calls.append(host)
            return self.answers[min(len(self.calls), len(self.answers)) - 1]


def _load(
    url: str, policy: AddressPolicy | None, client: httpx.Client | None = None, **options: Any
) -> tuple[list[str], list[LoaderError]]:
    errors: list[LoaderError] = []
    with client or httpx.Client() as http:
        documents = list(
            load(
                [url],
                options=LoadOptions(address_policy=policy, **options),
                on_error=errors.append,
                http_client=http,
            )
        )
    return [document.metadata[SOURCE] for document in documents], errors


def _policy(dns: FakeDNS | None = None) -> AddressPolicy:
    if dns is None:
        return AddressPolicy.from_allow_list(ALLOWED)
    return AddressPolicy.from_allow_list(ALLOWED, resolver=dns)


@pytest.mark.parametrize(
    ("respect_robots", "paths"),
    [(False, ["/docs/index.html"]), (True, ["/robots.txt", "/docs/index.html"])],
)
def test_each_request_resolves_once_and_connects_to_the_checked_address(
    serve: Callable[..., Servers], respect_robots: bool, paths: list[str]
) -> None:
    servers = serve()
    servers.allowed.pages["/docs/index.html"] = '<main><h1>Index</h1><a href="a.html">a</a></main>'
    # One allowed answer per request; one more resolution would answer the refused address.
    dns = FakeDNS(*[[ALLOWED]] * len(paths), [REFUSED])
    host = f"docs.test:{servers.port}"
    url = f"http://{host}/docs/index.html"
    errors: list[LoaderError] = []
    [document] = load(
        [url],
        options=LoadOptions(address_policy=_policy(dns), respect_robots=respect_robots),
        on_error=errors.append,
    )
    assert errors == []
    assert dns.calls == ["docs.test"] * len(paths)  # one per request, none by httpx
    assert servers.allowed.requests == [(host, path) for path in paths]
    assert servers.refused.connections == 0
    # The Document names the host, never the address it was fetched at.
    assert document.metadata[SOURCE] == url
    assert document.page_content == f"# Index\n\n[a](http://{host}/docs/a.html)\n"


def test_a_name_that_rebinds_mid_crawl_is_refused_for_the_later_links(
    serve: Callable[..., Servers],
) -> None:
    servers = serve()
    servers.allowed.pages.update(
        {
            "/robots.txt": "User-agent: *\nAllow: /\n",
            "/docs/index.html": '<main><h1>Index</h1><a href="a.html">a</a> '
            '<a href="sub/b.html">b</a></main>',
            "/docs/a.html": "<main><h1>A</h1></main>",
            "/docs/sub/b.html": "<main><h1>B</h1></main>",
        }
    )
    servers.refused.pages.update(servers.allowed.pages)
    dns = FakeDNS([ALLOWED], [ALLOWED], [REFUSED])  # robots.txt, the start URL, then rebound
    base = f"http://docs.test:{servers.port}"
    sources, errors = _load(f"{base}/docs/index.html", _policy(dns), crawl_depth=1)
    assert sources == [f"{base}/docs/index.html"]
    assert [str(error) for error in errors] == [
        f"{base}/docs/a.html: docs.test resolves to 127.0.0.2, which is a loopback address",
        f"{base}/docs/sub/b.html: docs.test resolves to 127.0.0.2, which is a loopback address",
    ]
    assert all(isinstance(error, UnsafeUrlError) for error in errors)
    assert len(dns.calls) == 4
    assert [path for _, path in servers.allowed.requests] == ["/robots.txt", "/docs/index.html"]
    assert servers.refused.connections == 0


def test_redirects_and_links_to_a_refused_address_make_no_connection(
    serve: Callable[..., Servers],
) -> None:
    servers = serve()
    elsewhere = f"http://{REFUSED}:{servers.port}"
    servers.allowed.pages.update(
        {
            "/docs/index.html": '<main><h1>Index</h1><a href="go-out">out</a> '
            f'<a href="go-in">in</a> <a href="{elsewhere}/docs/b.html">elsewhere</a></main>',
            "/docs/moved.html": "<main><h1>Moved</h1></main>",
        }
    )
    servers.allowed.redirects.update(
        {"/docs/go-out": f"{elsewhere}/docs/x.html", "/docs/go-in": "/docs/moved.html"}
    )
    servers.refused.pages.update(
        {"/docs/x.html": "<main><h1>X</h1></main>", "/docs/b.html": "<main><h1>B</h1></main>"}
    )
    base = f"http://{ALLOWED}:{servers.port}"
    sources, errors = _load(f"{base}/docs/index.html", _policy(), crawl_depth=1)
    assert sources == [f"{base}/docs/index.html", f"{base}/docs/moved.html"]
    assert [str(error) for error in errors] == [
        f"{base}/docs/go-out: redirected to {elsewhere}/docs/x.html: "
        "127.0.0.2 is a loopback address"
    ]
    assert isinstance(errors[0], UnsafeUrlError)
    assert servers.refused.connections == 0


def test_a_redirect_hop_that_rebinds_is_refused(serve: Callable[..., Servers]) -> None:
    servers = serve()
    servers.allowed.redirects["/docs/go-in"] = "/docs/moved.html"
    servers.allowed.pages["/docs/moved.html"] = "<main><h1>Moved</h1></main>"
    servers.refused.pages.update(servers.allowed.pages)
    host = f"docs.test:{servers.port}"
    dns = FakeDNS([ALLOWED], [REFUSED])
    sources, errors = _load(f"http://{host}/docs/go-in", _policy(dns), respect_robots=False)
    assert (sources, [str(error) for error in errors]) == (
        [],
        [
            f"http://{host}/docs/go-in: redirected to http://{host}/docs/moved.html: "
            "docs.test resolves to 127.0.0.2, which is a loopback address"
        ],
    )
    assert servers.allowed.requests == [(host, "/docs/go-in")]
    assert servers.refused.connections == 0


@pytest.mark.parametrize("respect_robots", [True, False])
@pytest.mark.parametrize(
    ("host", "reason"),
    [
        (REFUSED, "127.0.0.2 is a loopback address"),
        ("0x7f.2", "0x7f.2 is 127.0.0.2, which is a loopback address"),
        ("rebound.test", "rebound.test resolves to 127.0.0.2, which is a loopback address"),
    ],
)
def test_a_refused_start_url_fetches_nothing(
    serve: Callable[..., Servers], host: str, reason: str, respect_robots: bool
) -> None:
    servers = serve()
    servers.refused.pages["/docs/index.html"] = "<main><h1>Index</h1></main>"
    url = f"http://{host}:{servers.port}/docs/index.html"
    sources, errors = _load(url, _policy(FakeDNS([REFUSED])), respect_robots=respect_robots)
    assert (sources, [str(error) for error in errors]) == ([], [f"{url}: {reason}"])
    assert isinstance(errors[0], UnsafeUrlError)
    assert servers.refused.connections == 0


def test_robots_txt_redirects_are_followed_by_hand_and_checked(
    serve: Callable[..., Servers],
) -> None:
    servers = serve()
    base = f"http://{ALLOWED}:{servers.port}"
    servers.allowed.pages.update(
        {
            "/docs/index.html": '<main><h1>Index</h1><a href="private/s.html">s</a></main>',
            "/docs/private/s.html": "<main><h1>S</h1></main>",
            "/real-robots.txt": "User-agent: *\nDisallow: /docs/private/\n",
        }
    )
    servers.allowed.redirects["/robots.txt"] = "/real-robots.txt"
    sources, errors = _load(f"{base}/docs/index.html", _policy(), crawl_depth=1)
    assert sources == [f"{base}/docs/index.html"]
    assert [str(error) for error in errors] == [
        f"{base}/docs/private/s.html: disallowed by robots.txt"
    ]

    servers.allowed.redirects["/robots.txt"] = f"http://{REFUSED}:{servers.port}/robots.txt"
    servers.refused.pages["/robots.txt"] = "User-agent: *\nAllow: /\n"
    sources, errors = _load(f"{base}/docs/index.html", _policy(), crawl_depth=1)
    assert (sources, [str(error) for error in errors]) == (
        [],
        [
            f"{base}/docs/index.html: robots.txt redirected to "
            f"http://{REFUSED}:{servers.port}/robots.txt: 127.0.0.2 is a loopback address"
        ],
    )
    assert isinstance(errors[0], UnsafeUrlError)
    assert servers.refused.connections == 0


def test_without_a_policy_any_address_is_fetched(serve: Callable[..., Servers]) -> None:
    servers = serve()
    servers.refused.pages["/docs/index.html"] = "<main><h1>Index</h1></main>"
    url = f"http://{REFUSED}:{servers.port}/docs/index.html"
    assert _load(url, None) == ([url], [])
    assert servers.refused.connections >= 1


_CA_KEY_USAGE = x509.KeyUsage(
    digital_signature=True,
    content_commitment=False,
    key_encipherment=False,
    data_encipherment=False,
    key_agreement=False,
    key_cert_sign=True,
    crl_sign=True,
    encipher_only=False,
    decipher_only=False,
)


def _tls_contexts(tmp_path: Path, name: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a certificate for `name`, and a client context trusting it."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Synopsis test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_CA_KEY_USAGE, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    chain = tmp_path / "server.pem"
    chain.write_bytes(
        certificate.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(chain)
    client = ssl.create_default_context(
        cadata=ca.public_bytes(serialization.Encoding.PEM).decode("ascii")
    )
    return server, client


def test_https_sends_the_host_name_as_tls_server_name_and_verifies_it(
    serve: Callable[..., Servers], tmp_path: Path
) -> None:
    """httpx's real transport, connecting to 127.0.0.1: SNI and the certificate check
    use the host name (`sni_hostname`), so a certificate for another name is refused."""
    server_tls, client_tls = _tls_contexts(tmp_path, "docs.test")
    server_names: list[str | None] = []
    server_tls.sni_callback = lambda _socket, name, _context: server_names.append(name)
    servers = serve(tls=server_tls)
    servers.allowed.pages["/docs/index.html"] = "<main><h1>Index</h1></main>"
    host = f"docs.test:{servers.port}"
    dns = FakeDNS([ALLOWED])

    sources, errors = _load(
        f"https://{host}/docs/index.html", _policy(dns), httpx.Client(verify=client_tls)
    )
    assert (sources, errors) == ([f"https://{host}/docs/index.html"], [])
    assert servers.allowed.requests == [(host, "/robots.txt"), (host, "/docs/index.html")]
    assert set(server_names) == {"docs.test"}

    other = f"other.test:{servers.port}"
    sources, errors = _load(
        f"https://{other}/docs/index.html",
        _policy(dns),
        httpx.Client(verify=client_tls),
        respect_robots=False,
    )
    assert sources == []
    [error] = errors
    assert "certificate is not valid for 'other.test'" in str(error)
    assert set(server_names) == {"docs.test", "other.test"}
    assert servers.refused.connections == 0
