"""The `synopsis` command line.

Every command takes its configuration from `Settings.from_env()` (variables
`SYNOPSIS_*`); errors are shown as one line on stderr with a non-zero exit code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click
from rich.console import Console

from service.errors import SynopsisError
from service.settings import Settings
from service.stack import LocalStack, StackStatus

__all__ = ["main"]

F = TypeVar("F", bound=Callable[..., Any])

_err = Console(stderr=True, highlight=False)


def _report(message: str) -> None:
    _err.print(f"[dim]{message}[/dim]")


def _one_line_errors(command: F) -> F:
    """Turn a SynopsisError into a click error: one clear message, exit code 1."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except SynopsisError as exc:
            raise click.ClickException(str(exc)) from exc

    return wrapper  # type: ignore[return-value]


@click.group()
@click.version_option(package_name="synopsis")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Synopsis: summary-to-original retrieval for technical documentation."""
    try:
        ctx.obj = Settings.from_env()
    except SynopsisError as exc:
        raise click.ClickException(str(exc)) from exc


@main.group()
def stack() -> None:
    """Manage the local Weaviate and Ollama (used when no external URL is configured)."""


@stack.command("up")
@click.pass_obj
@_one_line_errors
def stack_up(settings: Settings) -> None:
    """Build (first run only), start and check the local stack, then import its models."""
    status = LocalStack(settings, progress=_report).up()
    _print_status(status)
    if not status.ready:
        raise click.ClickException("the stack is not ready; see `synopsis stack status`")


@stack.command("down")
@click.pass_obj
@_one_line_errors
def stack_down(settings: Settings) -> None:
    """Stop the local servers that this data directory's stack started."""
    stopped = LocalStack(settings).down()
    click.echo(f"stopped: {', '.join(stopped)}" if stopped else "nothing was running")


@stack.command("status")
@click.pass_obj
@_one_line_errors
def stack_status(settings: Settings) -> None:
    """Show whether Weaviate and Ollama are running and where. Exit code 3 if not ready."""
    status = LocalStack(settings).status()
    _print_status(status)
    if not status.ready:
        raise SystemExit(3)


def _print_status(status: StackStatus) -> None:
    for component in (status.weaviate, status.ollama):
        pid = f" pid {component.pid}" if component.pid else ""
        click.echo(f"{component.name:9} {component.detail:12} {component.url}{pid}")
