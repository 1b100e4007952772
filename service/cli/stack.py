"""`synopsis stack`: build, start, stop and check the local Weaviate and Ollama."""

from __future__ import annotations

import click

from service.cli.defaults import default_of
from service.cli.output import note
from service.settings import Settings
from service.stack import LocalStack, StackStatus

__all__ = ["stack"]


@click.group()
def stack() -> None:
    """Manage the local Weaviate and Ollama (used when no external URL is configured)."""


@stack.command("build")
@click.pass_obj
def stack_build(settings: Settings) -> None:
    """Build the local servers' binaries if they are not cached yet (minutes, first run only)."""
    LocalStack(settings, progress=note).build()
    click.echo("local stack binaries are ready")


@stack.command("up")
@click.option(
    "--nodes",
    type=click.Choice(["1", "3"]),
    default=None,
    help="Weaviate servers: 1, or a 3-node cluster on loopback whose node i listens on the "
    f"configured ports + 10·i (default {default_of('weaviate_nodes')}).",
)
@click.pass_obj
def stack_up(settings: Settings, nodes: str | None) -> None:
    """Build (first run only), start and check the local stack, then import its models."""
    if nodes is not None:
        settings = settings.with_overrides(weaviate_nodes=int(nodes))
    status = LocalStack(settings, progress=note).up()
    _print_status(status)
    if not status.ready:
        raise click.ClickException("the stack is not ready; see `synopsis stack status`")


@stack.command("down")
@click.pass_obj
def stack_down(settings: Settings) -> None:
    """Stop the local servers that this data directory's stack started."""
    stopped = LocalStack(settings).down()
    click.echo(f"stopped: {', '.join(stopped)}" if stopped else "nothing was running")


@stack.command("status")
@click.pass_obj
def stack_status(settings: Settings) -> None:
    """Show whether Weaviate and Ollama are running and where. Exit code 3 if not ready."""
    status = LocalStack(settings).status()
    _print_status(status)
    if not status.ready:
        raise SystemExit(3)


def _print_status(status: StackStatus) -> None:
    width = max(9, *(len(component.name) for component in status.components))
    for component in status.components:
        pid = f" pid {component.pid}" if component.pid else ""
        click.echo(f"{component.name:{width}} {component.detail:12} {component.url}{pid}")
