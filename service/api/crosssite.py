"""Requests that another web site makes the operator's browser send, refused before any work.

With no key configured, on loopback (the default), the API serves whoever reaches it, and
a browser reaches it on behalf of any page its user visits:

- **DNS rebinding.** A name of the attacker's that resolves to 127.0.0.1 makes the
  attacker's page same-origin with the API; its requests then name that host. Only the
  names of `api_allowed_hosts` are served (by default the loopback names and `api_host`);
  any other `Host` is a 400 `DisallowedHost`. `/health` and `/ready` answer any name: they
  take nothing and change nothing, and an orchestrator probes a pod by its address.
- **Cross-site requests.** A page may send a "simple" request (`text/plain`, a form,
  `multipart/form-data`) to any origin without asking first (no CORS preflight), and
  Litestar parses a JSON body whatever its `Content-Type`. So a request body must be JSON
  (415 `UnsupportedMediaType` otherwise), except on a route that declares other types
  (`BODY_TYPES`: the upload takes multipart); a cross-origin JSON request needs a
  preflight, which this API never grants. And a request the browser marks as coming from
  another origin (an `Origin` that is not the request's own host, or `Sec-Fetch-Site`
  `cross-site` or `same-site`) is a 403 `CrossOriginRequest`, unless it is a GET that
  opens a page (`Sec-Fetch-Mode: navigate`): following a link.

Clients that are not browsers (curl, the HTTP retriever) send neither `Origin` nor
`Sec-Fetch-*` and are served as before; with API keys, another site's page has no key to
send anyway. A reverse proxy must pass the `Host` the browser used on to the service.

Litestar's own `AllowedHostsConfig` compares the whole `Host` header, port included, with
each name (`localhost:8000` is not `localhost`), and answers with a body of its own,
outside the app's one error mapping; hence this middleware.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from litestar.datastructures import Headers
from litestar.enums import ScopeType
from litestar.exceptions import ClientException
from litestar.middleware import ASGIMiddleware
from litestar.status_codes import (
    HTTP_400_BAD_REQUEST,
    HTTP_403_FORBIDDEN,
    HTTP_415_UNSUPPORTED_MEDIA_TYPE,
)
from litestar.types import ASGIApp, Receive, Scope, Send

from service.settings import Settings

__all__ = [
    "ANY_HOST",
    "BODY_TYPES",
    "JSON",
    "MULTIPART",
    "AllowedHosts",
    "CrossOriginRequest",
    "CrossSiteGuard",
    "DisallowedHost",
    "UnsupportedMediaType",
    "allowed_hosts",
    "host_allowed",
]

#: Route `opt` key: the media types a route's body may have (default: JSON only).
BODY_TYPES = "body_types"
#: Route `opt` key: the route answers whatever the `Host` (health probes).
ANY_HOST = "any_host"
JSON = "application/json"
MULTIPART = "multipart/form-data"

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_OTHER_SITES = frozenset({"cross-site", "same-site"})
_DEFAULT_PORTS = {"http": "80", "https": "443"}
_NAME = re.compile(r"[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?")
# A refusal quotes at most this much of what the request sent.
_QUOTE = 100


class DisallowedHost(ClientException):
    """The request's `Host` names a host this API does not serve (400)."""

    status_code = HTTP_400_BAD_REQUEST


class CrossOriginRequest(ClientException):
    """A browser sent the request on behalf of a page of another origin (403)."""

    status_code = HTTP_403_FORBIDDEN


class UnsupportedMediaType(ClientException):
    """The request's body is not of a type the route takes (415)."""

    status_code = HTTP_415_UNSUPPORTED_MEDIA_TYPE


@dataclass(frozen=True, slots=True)
class AllowedHosts:
    """The host names served: `names` exactly, the names under `domains` (each with its
    leading dot), every loopback name when `loopback`, any name when `any`."""

    names: frozenset[str] = frozenset()
    domains: tuple[str, ...] = ()
    loopback: bool = False
    any: bool = False


def _unbracketed(name: str) -> str:
    return name[1:-1] if name.startswith("[") and name.endswith("]") else name


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def allowed_hosts(settings: Settings) -> AllowedHosts:
    """The hosts `settings` serve: `api_allowed_hosts`, else the loopback names and
    `api_host` (unless it is a wildcard address such as 0.0.0.0, which names no host)."""
    configured = settings.api.allowed_host_names
    if not configured:
        host = _unbracketed(settings.api.host.strip().lower().rstrip("."))
        address = _ip(host)
        wildcard = not host or (address is not None and address.is_unspecified)
        return AllowedHosts(names=frozenset(() if wildcard else (host,)), loopback=True)
    return AllowedHosts(
        names=frozenset(_unbracketed(name) for name in configured if not name.startswith("*")),
        domains=tuple(name[1:] for name in configured if name.startswith("*.")),
        any="*" in configured,
    )


def _host_name(host: str) -> str | None:
    """The name of a `Host` header (lower case, port and brackets dropped), or None when
    it is not one: empty, a port that is not a number, characters no host name has."""
    host = host.strip().lower()
    if host.startswith("["):
        name, bracket, port = host[1:].partition("]")
        if not bracket or (port and not re.fullmatch(r":\d+", port)):
            return None
        return name if _ip(name) is not None else None
    name, colon, port = host.rpartition(":")
    if not colon:
        name = port
    elif not port.isdigit():
        return None
    name = name.rstrip(".")
    return name if _NAME.fullmatch(name) else None


def host_allowed(host: str, allowed: AllowedHosts) -> bool:
    """Whether a request whose `Host` header is `host` is served."""
    name = _host_name(host)
    if name is None:
        return False
    if allowed.any or name in allowed.names or name.endswith(allowed.domains):
        return True
    if allowed.loopback:
        address = _ip(name)
        return (
            name == "localhost"
            or name.endswith(".localhost")
            or bool(address is not None and address.is_loopback)
        )
    return False


def _without_default_port(netloc: str, scheme: str) -> str:
    default = _DEFAULT_PORTS.get(scheme)
    return netloc.removesuffix(f":{default}") if default else netloc


def _same_origin(origin: str, host: str) -> bool:
    """Whether `origin` (an `Origin` header) is the origin of a request to `host`. The
    scheme is not compared: behind a TLS proxy the page is https and the request http."""
    parts = urlsplit(origin.strip().lower())
    if parts.scheme not in _DEFAULT_PORTS or not parts.netloc:
        return False  # "null": a sandboxed frame, a file:// page
    ours = _without_default_port(host.strip().lower(), parts.scheme)
    return _without_default_port(parts.netloc, parts.scheme) == ours


def _quote(text: str) -> str:
    return text if len(text) <= _QUOTE else text[: _QUOTE - 1] + "…"


def _has_body(headers: Headers) -> bool:
    length = headers.get("content-length")
    return (length is not None and length.strip() != "0") or "transfer-encoding" in headers


class CrossSiteGuard(ASGIMiddleware):
    """Refuses, before the handler, what another site can make a browser send (the module
    docstring): a host not served, a request from another origin, a body that is not JSON
    (or a type the route declares in `opt[BODY_TYPES]`)."""

    scopes = (ScopeType.HTTP,)

    def __init__(self, allowed: AllowedHosts) -> None:
        self.allowed = allowed

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        headers = Headers.from_scope(scope)
        opt: dict[str, Any] = scope["route_handler"].opt
        method = scope["method"]  # type: ignore[typeddict-item]  # `scopes`: HTTP only
        host = headers.get("host", "")
        if not opt.get(ANY_HOST) and not host_allowed(host, self.allowed):
            var = Settings.env_names()["api_allowed_hosts"]
            raise DisallowedHost(
                detail=f"this API does not serve the host {_quote(host)!r}; set {var} to serve it"
            )
        origin = headers.get("origin")
        foreign = (origin is not None and not _same_origin(origin, host)) or (
            headers.get("sec-fetch-site") in _OTHER_SITES
        )
        navigation = method in ("GET", "HEAD") and headers.get("sec-fetch-mode") == "navigate"
        if foreign and not navigation:
            raise CrossOriginRequest(
                detail="a browser request from another origin "
                f"({_quote(origin or headers.get('sec-fetch-site') or '')}) is refused: the API "
                "serves its own page and clients that are not browsers"
            )
        if method not in _SAFE_METHODS and _has_body(headers):
            accepted: tuple[str, ...] = opt.get(BODY_TYPES, (JSON,))
            media_type = headers.get("content-type", "").partition(";")[0].strip().lower()
            if media_type not in accepted:
                raise UnsupportedMediaType(
                    detail=f"the body must be {' or '.join(accepted)}, not "
                    f"{_quote(media_type) if media_type else 'untyped'}"
                )
        await next_app(scope, receive, send)
