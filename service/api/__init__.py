"""The HTTP API of Synopsis (Litestar): `create_app(settings)`; served by `synopsis serve`.

Endpoints: health and readiness, `POST /search`, `POST /ask`, `/documents` (what is
indexed, a document's summary, and ingests as jobs), `/jobs`, `/sources` (registered
sources and their syncs), `/conversations`, `GET /stats`, `GET /metrics` (Prometheus),
the search page at `/`, the MCP tools at `/mcp`; OpenAPI at `/schema`.

`create_app` is imported on first use: the MCP tools (`service.mcp`) use this
package's schemas and limits, and the app mounts the MCP endpoint, so importing a
submodule must not build the app module.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.api.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name != "create_app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = importlib.import_module("service.api.app").create_app
    globals()[name] = value  # later look-ups skip this function
    return value
