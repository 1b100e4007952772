"""`synopsis docs` and `synopsis summarize`: the indexed documents, listed, deleted and
summarized whole."""

from __future__ import annotations

import json

import click

from service.cli import session
from service.settings import Settings

__all__ = ["docs", "summarize"]


@click.group()
def docs() -> None:
    """List and delete indexed sources."""


@docs.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def docs_list(settings: Settings, as_json: bool) -> None:
    """Every indexed source with its chunk count, status, summaries still pending, version
    and last ingest time."""
    with session.open_synopsis(settings) as synopsis:
        records = synopsis.sources()
        stats = synopsis.stats()
    if as_json:
        rows = [
            {
                "source": r.source,
                "title": r.title,
                "chunks": r.chunks,
                "pending": r.pending,
                "status": r.status,
                "version": r.version or None,
                "ingested_at": r.ingested_at.isoformat(),
                "indexed_at": r.ingested_at.isoformat(),
            }
            for r in records
        ]
        click.echo(json.dumps({"sources": rows, "stats": stats}, default=str, indent=2))
        return
    for r in records:
        label = f"  version {r.version}" if r.version else ""
        click.echo(
            f"{r.chunks:5} chunks  {r.status:9}  {r.pending:5} summaries pending  "
            f"{r.ingested_at:%Y-%m-%d %H:%M}  {r.source}{label}"
        )
    click.echo(
        f"{len(records)} sources, {stats.get('originals')} originals, "
        f"{stats.get('summaries')} summaries {stats.get('summaries_by_kind', {})}"
    )
    reasons = stats.get("summaries_by_reason") or {}
    if reasons:
        click.echo(f"flagged by the summary guard (kind:reason): {reasons}")


@docs.command("delete")
@click.argument("source")
@click.pass_obj
def docs_delete(settings: Settings, source: str) -> None:
    """Remove SOURCE's originals and summaries from the index."""
    with session.open_synopsis(settings) as synopsis:
        originals, summaries = synopsis.delete_source(source)
    if originals == summaries == 0:
        raise click.ClickException(f"{source} is not indexed (see `synopsis docs list`)")
    click.echo(f"deleted {originals} originals and {summaries} summaries of {source}")


@click.command("summarize")
@click.argument("source")
@click.option(
    "--style",
    type=click.Choice(["brief", "detailed"]),
    default="brief",
    show_default=True,
    help="brief: one paragraph; detailed: a sentence or two per main part.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_obj
def summarize(settings: Settings, source: str, style: str, as_json: bool) -> None:
    """Summarize the whole of SOURCE from its chunks' summaries.

    The answer model writes it on first request (one call per group of sections that fits
    its prompt); it is cached until the document changes. A reply that fails the grounding
    check is replaced by the document's outline, quoted from the index.
    """
    import dataclasses

    with session.open_synopsis(settings) as synopsis:
        summary = synopsis.document_summary(
            source, style="detailed" if style == "detailed" else "brief"
        )
    if as_json:
        click.echo(json.dumps(dataclasses.asdict(summary), indent=2))
        return
    click.echo(summary.text)
    origin = "cached" if summary.cached else f"{summary.llm_calls} model calls"
    kind = (
        f"generated, grounding support {summary.support or 0:.2f}"
        if summary.kind == "generated"
        else "extractive: the document's outline, quoted from the index"
    )
    click.echo(
        f"\n({kind}; {summary.style}; {summary.sections} sections; {origin}; {summary.model})"
    )
