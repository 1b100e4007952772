"""API keys: loading them from the settings, and the guards that check them.

A request presents a key as `Authorization: Bearer <key>`. Read keys may search, ask and
list; write keys may also ingest, delete and manage jobs. Keys come from
`SYNOPSIS_API_READ_KEYS` / `SYNOPSIS_API_WRITE_KEYS` (comma-separated) and from the file
`SYNOPSIS_API_KEYS_FILE` (`read <key>` / `write <key>` lines, `#` comments), loaded once by
`create_app` onto `app.state.api_keys`.

Only SHA-256 digests of the keys are kept; a presented key is hashed and compared with
`hmac.compare_digest` against every configured digest, without stopping at a match, so the
time taken says nothing about which key (or how much of one) matched. No key, nor any part
of one, reaches a log line or an error body: a caller is named by `caller_id`, a short
digest prefix that cannot be turned back into the key.

With no key configured every route is open to connections that arrive on a loopback
address: `synopsis serve` and `create_app` refuse a non-loopback host unless
`SYNOPSIS_API_ALLOW_OPEN=true` (`check_bind`), and a request that arrives on another
address of the machine (a server bound to 0.0.0.0 by its own options) is refused with 403.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from litestar.handlers.base import BaseRouteHandler

from service.errors import ConfigurationError
from service.settings import Settings

__all__ = [
    "ANONYMOUS",
    "ApiKeys",
    "Role",
    "caller_id",
    "check_bind",
    "is_loopback",
    "load_api_keys",
    "require_read",
    "require_write",
]

#: The caller id of every request when no key is configured.
ANONYMOUS = "anonymous"

# Where a request's resolved caller is cached (in the ASGI scope's state), so the guard and
# `caller_id` compare the key once per request.
_CALLER_STATE_KEY = "synopsis_caller"
_BEARER = "bearer"


class Role(IntEnum):
    """What a key may do; a higher role includes the lower ones."""

    READ = 1
    WRITE = 2


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def _owner(digest: bytes) -> str:
    return "key:" + digest.hex()[:12]


@dataclass(frozen=True, slots=True)
class _Caller:
    owner: str
    role: Role


@dataclass(frozen=True, slots=True, repr=False)
class ApiKeys:
    """The configured keys, as SHA-256 digests with their roles. Build with `load_api_keys`."""

    entries: tuple[tuple[bytes, Role], ...] = ()

    def __repr__(self) -> str:
        counts = {role: sum(1 for _, r in self.entries if r is role) for role in Role}
        return f"ApiKeys(read={counts[Role.READ]}, write={counts[Role.WRITE]})"

    @property
    def configured(self) -> bool:
        """True when at least one key is configured (else every route is open)."""
        return bool(self.entries)

    @classmethod
    def of(
        cls, *, read: list[str] | tuple[str, ...] = (), write: list[str] | tuple[str, ...] = ()
    ) -> ApiKeys:
        """Keys given directly (tests, or code that has them from elsewhere)."""
        roles: dict[bytes, Role] = {}
        for role, keys in ((Role.READ, read), (Role.WRITE, write)):
            for key in keys:
                _check_key(key)
                digest = _digest(key)
                roles[digest] = max(role, roles.get(digest, role))
        return cls(tuple(roles.items()))

    def role_of(self, key: str) -> Role | None:
        """The role of `key`, or None when it is not a configured key.

        Compares against every configured digest (constant time per comparison, no early
        exit), so timing reveals neither which key matched nor whether one did early.
        """
        presented = _digest(key)
        found = 0
        for digest, role in self.entries:
            # int(...) * role: no branch on the secret comparison's outcome.
            found |= int(hmac.compare_digest(presented, digest)) * int(role)
        return Role(max(r for r in Role if found & r)) if found else None

    def caller(self, key: str) -> _Caller | None:
        """The caller presenting `key`, or None when the key is unknown."""
        role = self.role_of(key)
        return None if role is None else _Caller(_owner(_digest(key)), role)


def _check_key(key: str) -> None:
    if not key or any(char.isspace() for char in key):
        # Never echo the key: say only what is wrong with it.
        raise ConfigurationError("an API key is empty or contains whitespace")


def _split(raw: str) -> list[str]:
    return [part.strip() for part in raw.split(",") if part.strip()]


def _read_keys_file(path: Path, var: str) -> tuple[list[str], list[str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"{var}: cannot read {path}: {exc.strerror}") from None
    read: list[str] = []
    write: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        parts = stripped.split()
        if len(parts) != 2 or parts[0].lower() not in ("read", "write"):
            # The line may hold a key: name the line, never its content.
            raise ConfigurationError(
                f"{var}: {path} line {number}: expected `read <key>` or `write <key>`"
            )
        (read if parts[0].lower() == "read" else write).append(parts[1])
    return read, write


def load_api_keys(settings: Settings) -> ApiKeys:
    """Every key of `api_read_keys`, `api_write_keys` and `api_keys_file`.

    Raises `ConfigurationError` (naming the variable or file line, never a key) for an
    unreadable file, a malformed line, or a key that is empty or contains whitespace.
    """
    read = _split(settings.api.read_keys)
    write = _split(settings.api.write_keys)
    if settings.api.keys_file:
        var = Settings.env_names()["api_keys_file"]
        file_read, file_write = _read_keys_file(Path(settings.api.keys_file).expanduser(), var)
        read += file_read
        write += file_write
    return ApiKeys.of(read=read, write=write)


def is_loopback(host: str) -> bool:
    """True when `host` only accepts connections from this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve to anything


def check_bind(host: str, keys: ApiKeys, settings: Settings) -> None:
    """Refuse to serve an open API on a non-loopback `host`.

    Raises `ConfigurationError` when no key is configured, `host` is not loopback and
    `api_allow_open` is false.
    """
    if keys.configured or settings.api.allow_open or is_loopback(host):
        return
    names = Settings.env_names()
    raise ConfigurationError(
        f"refusing to serve on {host} without API keys: set {names['api_read_keys']}, "
        f"{names['api_write_keys']} or {names['api_keys_file']}, or "
        f"{names['api_allow_open']}=true to serve an open API on purpose"
    )


def _keys_of(connection: ASGIConnection) -> ApiKeys:  # type: ignore[type-arg]
    keys = getattr(connection.app.state, "api_keys", None)
    if not isinstance(keys, ApiKeys):
        # Fail closed: an app that did not load its keys must not serve as if it had none.
        raise RuntimeError("app.state.api_keys is not loaded (build the app with create_app)")
    return keys


def _bearer(connection: ASGIConnection) -> str | None:  # type: ignore[type-arg]
    header = connection.headers.get("authorization")
    if header is None:
        return None
    scheme, _, credentials = header.strip().partition(" ")
    if scheme.lower() != _BEARER or not credentials.strip():
        return ""
    return credentials.strip()


def _resolve(connection: ASGIConnection) -> _Caller | None:  # type: ignore[type-arg]
    """The request's caller (cached per request); None when keys are configured and the
    request presents no valid one. With no keys configured, the anonymous writer."""
    state = connection.state
    if _CALLER_STATE_KEY in state:
        cached: _Caller | None = state[_CALLER_STATE_KEY]
        return cached
    keys = _keys_of(connection)
    if not keys.configured:
        _check_open_to(connection)
        resolved: _Caller | None = _Caller(ANONYMOUS, Role.WRITE)
    else:
        token = _bearer(connection)
        resolved = keys.caller(token) if token else None
    state[_CALLER_STATE_KEY] = resolved
    return resolved


def _check_open_to(connection: ASGIConnection) -> None:  # type: ignore[type-arg]
    """Without keys: refuse a request that arrived on a non-loopback address of this machine
    (the ASGI scope's `server`), unless the app is open on purpose (`api_allow_open`)."""
    if getattr(connection.app.state, "api_allow_open", False):
        return
    server = connection.scope.get("server")
    if server is None or is_loopback(str(server[0])):  # None: a Unix socket
        return
    names = Settings.env_names()
    raise PermissionDeniedException(
        detail=f"this API has no keys, so it answers connections to loopback only, not to "
        f"{server[0]}: set {names['api_read_keys']}, {names['api_write_keys']} or "
        f"{names['api_keys_file']}, or {names['api_allow_open']}=true"
    )


def _authenticate(connection: ASGIConnection) -> _Caller:  # type: ignore[type-arg]
    caller = _resolve(connection)
    if caller is not None:
        return caller
    presented = connection.headers.get("authorization") is not None
    raise NotAuthorizedException(
        detail="an API key is required" if not presented else "the API key is not valid",
        headers={"WWW-Authenticate": 'Bearer error="invalid_token"' if presented else "Bearer"},
    )


def require_read(connection: ASGIConnection, route_handler: BaseRouteHandler) -> None:  # type: ignore[type-arg]
    """Guard: a read or write key (401 without a valid one). Open when no key is configured."""
    _authenticate(connection)


def require_write(connection: ASGIConnection, route_handler: BaseRouteHandler) -> None:  # type: ignore[type-arg]
    """Guard: a write key (401 without a valid key, 403 for a read key). Open when no key is
    configured."""
    if _authenticate(connection).role < Role.WRITE:
        raise PermissionDeniedException(detail="this route needs a write key")


def caller_id(connection: ASGIConnection) -> str:  # type: ignore[type-arg]
    """A stable, non-secret id of the key the request presents (`key:` + 12 hex digits of
    its SHA-256), or `anonymous` when no key is configured.

    Meant for routes behind `require_read`/`require_write`; on an unguarded route a request
    without a valid key raises the same 401 as the guards.
    """
    return _authenticate(connection).owner
