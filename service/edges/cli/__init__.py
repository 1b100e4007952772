"""The `synopsis` command line.

Every command takes its configuration from `Settings.from_env()` (variables
`SYNOPSIS_*`); errors are shown as one line on stderr with a non-zero exit code.

One module per group of commands (`stack`, `ingest`: chunk and ingest, `query`: search
and ask, `serve`: serve and mcp, `docs`: docs and summarize, `sources`, `maintenance`:
resummarize, reattach and reindex, `evaluate`: eval); `session` and `output` hold what
they share.
"""

from __future__ import annotations

import click

from service.edges.cli import docs, evaluate, ingest, maintenance, query, serve, sources, stack
from service.errors import SynopsisError
from service.settings import Settings

__all__ = ["main"]


@click.group()
@click.version_option(package_name="synopsis")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Synopsis: summary-to-original retrieval for technical documentation."""
    try:
        ctx.obj = Settings.from_env()
    except SynopsisError as exc:
        raise click.ClickException(str(exc)) from exc


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
