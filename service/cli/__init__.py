"""The `synopsis` command line.

Every command takes its configuration from `Settings.from_env()` (variables
`SYNOPSIS_*`); errors are shown as one line on stderr with a non-zero exit code: the
`main` group turns a `SynopsisError` from any command into a `click.ClickException`.

One module per group of commands (`stack`, `ingest`: chunk and ingest, `query`: search
and ask, `serve`: serve and mcp, `docs`: docs and summarize, `sources`, `maintenance`:
resummarize, reattach and reindex, `evaluate`: eval); `session` and `output` hold what
they share.
"""

from __future__ import annotations

from typing import Any

import click

from service.cli import docs, evaluate, ingest, maintenance, query, serve, sources, stack
from service.errors import SynopsisError
from service.settings import Settings

__all__ = ["main"]


class _OneLineErrors(click.Group):
    """A group whose commands' `SynopsisError`s (and its own) become a click error: one
    clear message on stderr, exit code 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SynopsisError as exc:
            raise click.ClickException(str(exc)) from exc


@click.group(cls=_OneLineErrors)
@click.version_option(package_name="synopsis")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Synopsis: summary-to-original retrieval for technical documentation."""
    ctx.obj = Settings.from_env()


for _command in (
    stack.stack,
    ingest.chunk,
    ingest.ingest,
    query.search,
    query.ask,
    serve.serve,
    serve.mcp,
    docs.docs,
    sources.sources,
    docs.summarize,
    maintenance.resummarize,
    maintenance.reattach,
    maintenance.reindex,
    evaluate.evaluate,
):
    main.add_command(_command)
