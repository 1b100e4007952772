"""The HTTP API of Synopsis (Litestar): `create_app(settings)`; served by `synopsis serve`.

Endpoints: `GET /health`, `POST /search`, `POST /ask`, `GET /sources`,
`DELETE /sources?source=…`, `GET /stats`; OpenAPI at `/schema`.
"""

from __future__ import annotations

from service.edges.api.app import create_app

__all__ = ["create_app"]
