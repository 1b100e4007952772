"""`synopsis sources`: register sources and keep the index in sync with them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from service.cli import session
from service.cli.output import err, note, print_event
from service.settings import Settings

if TYPE_CHECKING:
    import datetime as dt

__all__ = ["sources"]


@click.group()
def sources() -> None:
    """Register sources (a directory, a sitemap, an llms.txt, a site, a git repository) and
    keep the index in sync with them."""


@sources.command("add")
@click.argument("name")
@click.argument("location")
@click.option(
    "--kind",
    type=click.Choice(["auto", "directory", "sitemap", "llms-txt", "site", "git"]),
    default="auto",
    show_default=True,
    help="What LOCATION is; auto: a directory if it is one, a sitemap for a URL ending in "
    ".xml, an llms.txt index (its list items link the pages) for one ending in "
    "/llms.txt, else a site crawled from that URL; git (never guessed): a local "
    "repository, read at --ref under --subpath.",
)
@click.option(
    "--ref",
    default="",
    help="For a git source: the branch, tag or commit to sync (default: HEAD).",
)
@click.option(
    "--subpath",
    default="",
    help="For a git source: the directory of the repository to sync (default: all of it).",
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
def sources_add(
    settings: Settings,
    name: str,
    location: str,
    kind: str,
    crawl_depth: int,
    max_pages: int,
    ref: str,
    subpath: str,
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
        ref=ref,
        subpath=subpath,
    )
    with session.open_synopsis(settings) as synopsis:
        synopsis.registered_sources.add(source)
    every = f", synced every {format_interval(source.interval_seconds)}" if interval else ""
    label = f", version {version}" + (f" of {group}" if group else "") if version else ""
    click.echo(f"registered {name}: {source.kind} {source.location}{label}{every}")


@sources.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def sources_list(settings: Settings, as_json: bool) -> None:
    """Every registered source with its page count and its last sync."""
    from service.sources import format_interval, next_sync_at

    with session.open_synopsis(settings) as synopsis:
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
                "ref": s.ref or None,
                "subpath": s.subpath or None,
                "commit": s.commit or None,
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
        where = s.location
        if s.kind == "git":  # the ref and sub-path synced, and the commit last indexed
            where += f"@{s.ref or 'HEAD'}" + (f"/{s.subpath}" if s.subpath else "")
            where += f" ({s.commit[:12]})" if s.commit else ""
        click.echo(f"{s.name}  {s.kind:9}  {len(s.pages):5} pages  {synced}  {where}{label}{every}")
        if s.last_report is not None:
            click.echo(f"    last sync: {s.last_report.summary_line()}")
    click.echo(f"{len(registered)} registered sources")


def _iso(moment: dt.datetime | None) -> str | None:
    return moment.isoformat() if moment else None


@sources.command("sync")
@click.argument("names", nargs=-1)
@click.pass_obj
def sources_sync(settings: Settings, names: tuple[str, ...]) -> None:
    """Sync NAMES (every registered source when none is named): fetch what changed, ingest
    it, and remove the pages that are gone, once the sync completed."""
    incomplete = 0
    with session.open_synopsis(settings) as synopsis:
        registry = synopsis.registered_sources
        todo = [registry.require(name) for name in names] if names else registry.list()
        if not todo:
            raise click.ClickException("no source is registered (see `synopsis sources add`)")
        for source in todo:
            note(f"syncing {source.name} ({source.kind} {source.location})")
            synced = synopsis.sync_registered(source.name, on_event=print_event)
            report = synced.last_report
            assert report is not None  # every sync leaves one
            click.echo(f"{source.name}: {report.summary_line()}")
            for failure in report.failed:
                err.print(f"[red]failed[/red] {failure}")
            incomplete += not report.completed
    if incomplete:
        raise click.ClickException(
            f"{incomplete} of {len(todo)} syncs did not complete: nothing of theirs was "
            "removed; sync again once the failures above are fixed"
        )


@sources.command("edit")
@click.argument("name")
@click.option(
    "--interval",
    default=None,
    help="Sync it this long after its last sync ended (1d, 6h, 1h30m, 15m; at least 1m); "
    "off: only when asked.",
)
@click.option(
    "--version",
    "version",
    default=None,
    metavar="LABEL",
    help="The version label its chunks carry; '' for none (then no --group either).",
)
@click.option("--group", default=None, help="The docs it is one version of; '' for none.")
@click.pass_obj
def sources_edit(
    settings: Settings,
    name: str,
    interval: str | None,
    version: str | None,
    group: str | None,
) -> None:
    """Change the interval, version or group of the source NAME in place (what is not
    given stays as it is). A new version or group relabels the pages its syncs indexed:
    no fetch, no embedding, no model call. Refused while a sync of it runs."""
    from service.sources import format_interval

    if interval is None and version is None and group is None:
        raise click.UsageError("give --interval, --version or --group")
    with session.open_synopsis(settings) as synopsis:
        source = synopsis.edit_registered(name, interval=interval, version=version, group=group)
    label = f"version {source.version}" if source.version else "no version"
    if source.group:
        label += f" of {source.group}"
    every = format_interval(source.interval_seconds)
    when = f"synced every {every}" if source.interval_seconds else "synced when asked"
    click.echo(f"edited {name}: {label}, {when}; {len(source.pages)} pages")


@sources.command("remove")
@click.argument("name")
@click.option(
    "--keep-documents",
    is_flag=True,
    help="Keep its pages in the index (only forget the registration).",
)
@click.pass_obj
def sources_remove(settings: Settings, name: str, keep_documents: bool) -> None:
    """Forget the source NAME and remove its pages from the index (refused while a sync
    of it runs)."""
    with session.open_synopsis(settings) as synopsis:
        removed = synopsis.remove_registered(name, keep_documents=keep_documents)
    kept = " (its pages kept)" if keep_documents else f"; {removed} pages removed from the index"
    click.echo(f"removed {name}{kept}")
