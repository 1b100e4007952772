"""The loaders' own HTTP client (`loaders.deadlines.deadline_client`): its TLS context."""

from __future__ import annotations

import ssl
from typing import Any

from loaders.deadlines import deadline_client


def _tls_context(client: Any) -> Any:
    """The TLS context of the connection pool under `client`'s transport."""
    return client._transport._pool._ssl_context


def test_every_client_verifies_certificates_with_one_context_built_once() -> None:
    with deadline_client() as first, deadline_client() as second:
        context = _tls_context(first)
        assert _tls_context(second) is context
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
