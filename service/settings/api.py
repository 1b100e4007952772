"""The HTTP API's settings: where `synopsis serve` listens, its workers, its keys, the
hosts it answers to."""

from __future__ import annotations

import re
from dataclasses import dataclass

from service.errors import ConfigurationError
from service.settings.fields import Section, setting

__all__ = ["ApiSettings"]

#: A name of `api_allowed_hosts`: `*`, a host name (`*.` before it: the names under it), an
#: IPv4 or an IPv6 address (with or without brackets).
_HOST_PATTERN = re.compile(
    r"\*|(\*\.)?[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?|\[?[0-9a-f]*:[0-9a-f]*:[0-9a-f:.]*\]?"
)


@dataclass(frozen=True, kw_only=True)
class ApiSettings(Section):
    """The HTTP API (`SYNOPSIS_API_*` but its limits)."""

    TOPIC = "HTTP API"
    PREFIX = "api_"

    host: str = setting(
        "127.0.0.1", "The address `synopsis serve` listens on (a container sets 0.0.0.0)."
    )
    port: int = setting(8000, "The port `synopsis serve` listens on.")
    workers: int = setting(
        1,
        "Worker processes of `synopsis serve`; each opens its own connections, and the "
        "metrics add up across them.",
    )
    read_keys: str = setting(
        "",
        "API keys (comma-separated) that may search, ask and list; never printed.",
        secret=True,
    )
    write_keys: str = setting(
        "",
        "API keys (comma-separated) that may also ingest, delete and manage jobs; never printed.",
        secret=True,
    )
    keys_file: str = setting(
        "",
        "A file of `read <key>` / `write <key>` lines (`#` comments) whose keys add to the "
        "two lists; empty: none.",
    )
    allow_open: bool = setting(
        False,
        "Let `synopsis serve` listen on a non-loopback host with no API key configured (open "
        "to anyone who reaches it).",
    )
    # A name not served is a 400, so a name of an attacker's that resolves to this machine
    # (DNS rebinding) gets nothing (service/api/crosssite.py).
    allowed_hosts: str = setting(
        "",
        "Host names the API answers to (comma-separated; `*.corp`: every name under corp, "
        "`*`: any); empty: the loopback names and `api_host`. /health and /ready answer any.",
    )
    weaviate_probe_seconds: float = setting(
        2.0,
        "How often (seconds) each service process probes Weaviate; while the last probe "
        "failed, requests that need it are answered 503 at once.",
    )

    def check(self) -> None:
        names = self.variables()
        if self.workers < 1:
            raise ConfigurationError(f"{names['workers']} must be at least 1")
        for host in self.allowed_host_names:
            if not _HOST_PATTERN.fullmatch(host):
                raise ConfigurationError(
                    f"{names['allowed_hosts']}: {host!r} is not a host name (no scheme, "
                    "no port; a leading *. for a domain's names, or * alone for any)"
                )

    @property
    def allowed_host_names(self) -> tuple[str, ...]:
        """The names of `api_allowed_hosts`, lower-cased (empty when it is not set)."""
        return tuple(
            name.strip().lower().rstrip(".")
            for name in self.allowed_hosts.split(",")
            if name.strip()
        )
