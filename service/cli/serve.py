"""`synopsis serve` and `synopsis mcp`: the HTTP API with uvicorn, the MCP tools over stdio."""

from __future__ import annotations

import click

from service.cli import session
from service.cli.defaults import default_of
from service.settings import Settings

__all__ = ["mcp", "serve"]


@click.command("serve")
@click.option(
    "--host",
    default=None,
    help=f"Interface to listen on (default {default_of('api_host')}; 0.0.0.0 in a container). "
    "A non-loopback host needs API keys, or SYNOPSIS_API_ALLOW_OPEN=true.",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=None,
    help=f"TCP port to listen on (default {default_of('api_port')}).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=None,
    help=f"Worker processes (default {default_of('api_workers')}); metrics add up across them.",
)
@click.pass_obj
def serve(settings: Settings, host: str | None, port: int | None, workers: int | None) -> None:
    """Serve the HTTP API with uvicorn (OpenAPI at /schema)."""
    from service.api.serving import (
        check_metrics_directory,
        log_config,
        use_multiprocess_metrics,
    )

    check_metrics_directory()  # before the API's metrics exist
    import uvicorn

    from service.api.security import check_bind, load_api_keys

    host = host or settings.api.host
    port = port or settings.api.port
    processes = workers or settings.api.workers
    check_bind(host, load_api_keys(settings), settings)
    # The app checks its host too (another ASGI server may build it): the one served here.
    settings = settings.with_overrides(api_host=host)
    # Open before listening, so an unreachable stack is one line and a non-zero exit.
    with session.open_synopsis(settings) as synopsis:
        if processes == 1:
            from service.api import create_app

            app = create_app(settings, synopsis=synopsis)
            uvicorn.run(app, host=host, port=port, log_config=log_config())
            return
    # Each worker builds its app from the environment (the same settings, and the host
    # served here) and opens its own connections; the parent only checked above that the
    # stack answers.
    import os

    os.environ[Settings.env_names()["api_host"]] = host
    use_multiprocess_metrics(settings, port)
    uvicorn.run(
        "service.api:create_app",
        factory=True,
        workers=processes,
        host=host,
        port=port,
        log_config=log_config(),
    )


@click.command("mcp")
@click.pass_obj
def mcp(settings: Settings) -> None:
    """Serve the MCP tools over stdio, for an editor on this machine (docs/mcp.md).

    The editor starts this command and speaks MCP on its stdin and stdout; it ends when the
    editor closes its stdin. It reads the same settings as every other command and needs no
    API key. Over the network, `synopsis serve` serves the same tools at /mcp.
    """
    from service.mcp.stdio import serve_stdio

    with session.open_synopsis(settings) as synopsis:
        serve_stdio(synopsis)
