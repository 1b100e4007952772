"""`synopsis chunk` and `synopsis ingest`: load and split sources, and index them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from service.cli import session
from service.cli.defaults import default_of
from service.cli.output import err, note, print_event
from service.errors import SynopsisError
from service.settings import Settings

if TYPE_CHECKING:  # the heavy modules load only in the commands that need them
    from loaders import LoadOptions

__all__ = ["chunk", "ingest"]


def _load_options(
    settings: Settings, crawl_depth: int | None, max_pages: int | None
) -> LoadOptions:
    from service.ingest.load_options import load_options

    return load_options(settings, crawl_depth=crawl_depth, max_pages=max_pages)


_crawl_depth = click.option(
    "--crawl-depth",
    type=click.IntRange(min=0),
    default=None,
    help="For URLs: follow same-site links under the URL's path this many levels deep "
    f"(default {default_of('crawl_depth')}).",
)
_max_pages = click.option(
    "--max-pages",
    type=click.IntRange(min=1),
    default=None,
    help=f"For crawls: stop after this many pages (default {default_of('max_pages')}).",
)


@click.command("chunk")
@click.argument("sources", nargs=-1, required=True)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=16),
    default=None,
    help=f"Largest chunk in cl100k_base tokens (default: {default_of('max_tokens')}).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per chunk.")
@_crawl_depth
@_max_pages
@click.pass_obj
def chunk(
    settings: Settings,
    sources: tuple[str, ...],
    max_tokens: int | None,
    as_json: bool,
    crawl_depth: int | None,
    max_pages: int | None,
) -> None:
    """Load and split SOURCES (files, directories, URLs) without indexing them."""
    from loaders import load
    from loaders.documents import SOURCE
    from service.index.records import header_path
    from splitters import chunk_documents
    from splitters.base.metadata import ANCHOR, CHUNK_INDEX, HEADERS, PAGE_END, PAGE_START, TOKENS

    failures: list[str] = []

    def failed(error: SynopsisError) -> None:
        failures.append(str(error))
        err.print(f"[red]skipped[/red] {error}")

    documents = load(
        list(sources), options=_load_options(settings, crawl_depth, max_pages), on_error=failed
    )
    chunks = chunk_documents(documents, max_tokens=max_tokens or settings.ingest.max_tokens)
    count = tokens = 0
    per_source: dict[str, int] = {}
    for piece in chunks:
        meta = piece.metadata
        count += 1
        tokens += int(meta[TOKENS])
        per_source[meta[SOURCE]] = per_source.get(meta[SOURCE], 0) + 1
        if as_json:
            record = {
                "source": meta[SOURCE],
                "headers": list(meta.get(HEADERS) or []),
                "content": piece.page_content,
                "tokens": meta[TOKENS],
                "chunk_index": meta[CHUNK_INDEX],
            }
            if PAGE_START in meta:  # PDFs: the pages this chunk's text is on
                record |= {"page_start": meta[PAGE_START], "page_end": meta[PAGE_END]}
            if meta.get(ANCHOR):  # the section's id in its page
                record["anchor"] = meta[ANCHOR]
            click.echo(json.dumps(record, ensure_ascii=False))
        else:
            path = header_path(meta.get(HEADERS) or []) or "(no header)"
            preview = " ".join(piece.page_content.split())[:160]
            click.echo(f"[{meta[CHUNK_INDEX]}] {meta[SOURCE]} § {path} ({meta[TOKENS]} tokens)")
            click.echo(f"    {preview}")
    if not as_json:
        click.echo(f"{count} chunks, {tokens} tokens, from {len(per_source)} documents")
    if failures and count == 0:
        raise click.ClickException(f"no chunks: {len(failures)} sources failed")


@click.command("ingest")
@click.argument("sources", nargs=-1, required=True)
@_crawl_depth
@_max_pages
@click.option(
    "--version",
    "version",
    default="",
    metavar="LABEL",
    help="Label every chunk with this version (a search with `--version LABEL` reads "
    "them). For versions that a default search tells apart, register each one as a "
    "source of a group: `synopsis sources add --version --group`.",
)
@click.pass_obj
def ingest(
    settings: Settings,
    sources: tuple[str, ...],
    crawl_depth: int | None,
    max_pages: int | None,
    version: str,
) -> None:
    """Index SOURCES: load, chunk, summarize, embed and store them in Weaviate."""
    from service.index.versions import check_version

    check_version(version)  # before the stack is started or reached
    with session.open_synopsis(settings) as synopsis:
        report = synopsis.ingest(
            list(sources),
            options=_load_options(settings, crawl_depth, max_pages),
            on_event=print_event,
            version=version,
        )
    stages = ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in report.seconds.items())
    click.echo(report.summary_line())
    note(f"time per stage: {stages}")
    if model_line := report.model_line():
        note(model_line)
    if report.failed and report.sources == 0:
        raise click.ClickException("nothing was ingested: every source failed")
