"""Benchmark: what a re-sync of an unchanged registered site costs, against its first sync.

Run from the repository root (the local stack must be up, or startable):

    uv run python benchmarks/bench_resync.py [--pages 100] [--kind sitemap|site]

A site of `--pages` generated pages (one heading and two paragraphs each: one chunk) is
served on loopback by this script, with ETags, and registered as a `sitemap` (or as a
`site` crawled from an index page that links every page: one page more) in collections
of their own (`collection_prefix="BenchResync"`, dropped first and at the end), so
nothing is cached: the first sync embeds and summarizes every page with the configured
models. Then:

* a re-sync of the unchanged site with ETags: every page one request answered `304`;
* the same site served without ETags and re-synced: every page one full request, found
  unchanged by the hash of its bytes.

Reported, and written to the "resync" section of docs/benchmarks.md: each sync's wall
time, requests, 304s, LLM calls and chunks embedded, and each re-sync's time as a share
of the first sync's (issue 26's goals: at most 3 % with ETags, 10 % without).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path

from report import cpu_model, load_text, write_section

from service.settings import Settings
from service.sources import RegisteredSource, SourceKind, SyncReport
from service.synopsis import Synopsis
from tests.service.sources.site import Site, serve

REPORT = Path("docs/benchmarks.md")
COMMAND = "uv run python benchmarks/bench_resync.py"
PREFIX = "BenchResync"
WORDS = [
    "widget",
    "gadget",
    "lever",
    "spring",
    "valve",
    "gear",
    "piston",
    "rotor",
    "bracket",
    "socket",
    "hinge",
    "sprocket",
    "flange",
    "gasket",
    "nozzle",
    "shaft",
]


def _page(number: int) -> str:
    """A small documentation page of its own words (one chunk)."""
    a, b = WORDS[number % len(WORDS)], WORDS[(number * 7 + 3) % len(WORDS)]
    title = f"Installing the {a} {number}"
    return (
        f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1>"
        f"<p>The {a} {number} is fastened to the {b} with two screws before it is oiled; "
        f"tighten them by hand, then a quarter turn with the key.</p>"
        f"<p>Check that the {a} turns freely, and replace the {b} {number} when it "
        f"squeaks after the first hundred hours of use.</p></main></body></html>"
    )


def _site(pages: int) -> Site:
    paths = {f"/docs/page-{n:03d}.html": _page(n) for n in range(pages)}
    links = " ".join(f'<a href="{p.rsplit("/", 1)[1]}">{p}</a>' for p in sorted(paths))
    index = f"<html><body><main><h1>Widget manual</h1><p>Pages: {links}</p></main></body></html>"
    # The index is for the crawl: the sitemap lists the pages only.
    return Site(pages={"/docs/index.html": index, **paths}, unlisted={"/docs/index.html"})


def _row(label: str, report: SyncReport, first: float | None) -> str:
    share = "" if first is None else f"{100 * report.seconds / first:.1f} %"
    return (
        f"| {label} | {report.seconds:.2f} | {report.requests} | {report.not_modified} | "
        f"{report.llm_calls} | {report.embedded_chunks} | "
        f"{report.unchanged}/{report.changed}/{report.added}/{report.removed} | {share} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100, help="pages of the site")
    parser.add_argument("--kind", choices=["sitemap", "site"], default="sitemap")
    args = parser.parse_args()
    kind: SourceKind = args.kind

    settings = Settings.from_env().with_overrides(collection_prefix=PREFIX)
    synopsis = Synopsis.open(settings)
    synopsis.store.drop()
    synopsis.registered_sources.drop()
    site = _site(args.pages)
    rows: list[str] = []
    try:
        with serve(site):
            location = site.sitemap_url if kind == "sitemap" else site.url("/docs/index.html")
            synopsis.registered_sources.add(
                RegisteredSource(
                    name="bench",
                    kind=kind,
                    location=location,
                    crawl_depth=1 if kind == "site" else 0,
                    created_at=dt.datetime.now(dt.UTC),
                )
            )
            reports: list[tuple[str, SyncReport]] = []
            for label, etags in (
                ("first sync (ETags)", True),
                ("re-sync, unchanged, ETags", True),
                ("re-sync, unchanged, no ETags", False),
            ):
                site.etags = etags
                clock = time.perf_counter()
                report = synopsis.sync_registered("bench").last_report
                wall = time.perf_counter() - clock
                assert report is not None
                if not report.completed:
                    print(f"{label}: INCOMPLETE: {report.failed[:3]}", file=sys.stderr)
                    return 1
                print(f"{label}: {report.summary_line()} (wall {wall:.2f} s)")
                reports.append((label, report))
        first = reports[0][1].seconds
        for index, (label, report) in enumerate(reports):
            rows.append(_row(label, report, None if index == 0 else first))
    finally:
        synopsis.store.drop()
        synopsis.registered_sources.drop()
        synopsis.close()

    with_etags, without = (100 * r.seconds / first for _, r in reports[1:])
    print(f"re-sync with ETags: {with_etags:.1f} % of the first (goal <= 3 %)")
    print(f"re-sync without ETags: {without:.1f} % of the first (goal <= 10 %)")
    body = "\n".join(
        [
            f"## Re-sync of an unchanged {args.pages}-page site ({kind})",
            "",
            f"`{COMMAND} --pages {args.pages} --kind {kind}`, one run on "
            f"{dt.date.today().isoformat()}: {cpu_model()}, load average {load_text()} "
            f"at the end; chat model `{settings.models.chat_model}`, embeddings "
            f"`{settings.models.embedding_model}`. Seconds are the sync's own (its report).",
            "",
            "| sync | seconds | requests | 304s | LLM calls | chunks embedded | "
            "unchanged/changed/added/removed | share of the first |",
            "|---|---|---|---|---|---|---|---|",
            *rows,
            "",
            f"Goals (issue 26): with ETags at most 3 % of the first sync ({with_etags:.1f} %), "
            f"without ETags at most 10 % ({without:.1f} %).",
        ]
    )
    write_section(REPORT, "resync", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
