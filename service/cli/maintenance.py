"""`synopsis resummarize`, `reattach` and `reindex`: rework the stored index without
ingesting its sources again."""

from __future__ import annotations

import click

from service.cli import session
from service.cli.output import note
from service.settings import Settings

__all__ = ["reattach", "reindex", "resummarize"]


@click.command("resummarize")
@click.option(
    "--kind",
    type=click.Choice(["extractive", "llm", "invented", "all"]),
    default="extractive",
    show_default=True,
    help="Which stored summaries to regenerate: the extractive fallbacks, the LLM ones, the "
    "LLM ones that the summary guard's faithfulness check flags now, or all.",
)
@click.option(
    "--model",
    default=None,
    help="Chat model to summarize with (default: SYNOPSIS_CHAT_MODEL). Summaries record it.",
)
@click.pass_obj
def resummarize(settings: Settings, kind: str, model: str | None) -> None:
    """Regenerate stored summaries in place (no re-ingest): each original keeps one summary."""

    if model:
        settings = settings.with_overrides(chat_model=model)
    with session.open_synopsis(settings) as synopsis:
        report = synopsis.resummarize(
            kind=None if kind == "all" else kind,
            on_progress=lambda done, total: note(f"  resummarized {done}/{total}"),
        )
    click.echo(report.summary_line())


@click.command("reattach")
@click.pass_obj
def reattach(settings: Settings) -> None:
    """Apply SYNOPSIS_SUMMARY_MIN_SIMILARITY and the faithfulness check to the stored
    summaries again (no LLM call).

    With the summary guard on (SYNOPSIS_SUMMARY_GUARD), a generated summary that states
    what its chunk does not say is replaced by the chunk's extractive summary (reason
    "invented"; `resummarize --kind extractive` writes new ones with the model). Each
    summary is attached to its chunk (its text joins the chunk's BM25, its vector the
    chunk's `summary` vector, and the summary embedded with the chunk its `context`
    vector: one embedding each) or, below the threshold, left out. An index built before
    chunks had `context` vectors gets them.
    """
    with session.open_synopsis(settings) as synopsis:
        click.echo(synopsis.reattach().summary_line())


@click.command("reindex")
@click.option(
    "--from-prefix",
    required=True,
    help="Collection prefix of the index to copy ('' for the unprefixed collections).",
)
@click.pass_obj
def reindex(settings: Settings, from_prefix: str) -> None:
    """Copy an index into the configured collections with the configured embedding model.

    Chunks and summaries are embedded again; no summary is written again (0 LLM calls).
    Use it to switch SYNOPSIS_EMBEDDING_MODEL: set a new SYNOPSIS_COLLECTION_PREFIX and
    the new model, then `synopsis reindex --from-prefix OLD`.
    """
    with session.open_synopsis(settings) as synopsis:
        click.echo(synopsis.reindex(from_prefix, on_progress=note).summary_line())
