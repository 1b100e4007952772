"""Benchmark: the HTML loader's speed, code fidelity and boilerplate, before and after.

Run from the repository root, when no other CPU-heavy job runs (it converts the full
Python docs twice):

    uv run python benchmarks/bench_loaders.py [--docs DIR] [--baseline REV] [--no-write]

* Speed: CPU seconds (`time.process_time`, one core) of HTML → Markdown over every page
  of DIR (default: Debian's python3.11-doc), with `loaders.html` as it is and as it was
  at REV (read with `git show`, imported under another name, so both run in this
  process on the same pages); MB of HTML per CPU second, and the slowest pages.
* Code fidelity: `<pre>` blocks of the Python docs and of the generator fixtures not
  found byte-exact as a fenced block of their page's Markdown.
* Refused pages: `loaders.load` errors over the Python docs, the fixtures and the
  held-out pages of every installed generator package.
* Boilerplate: `loaders.quality.boilerplate_report` per generator on the fixture pages
  and on up to 40 held-out pages of its package, before (REV's converter, no cross-page
  dedup) and after (`loaders.load` of the directory, or of the page list).
* Packing: chunk counts with `chunk_documents(pack_small_sections=...)` off and on for
  the fixtures, the Python tutorial and the MkDocs pages of eval/mkdocs.sources.
* The Python tutorial's chunks before and after (count, identical, changed).

The goals are printed with their verdict and the figures go into docs/splitting.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from bs4 import XMLParsedAsHTMLWarning
from langchain_core.documents import Document
from report import cpu_model, load_text, write_section

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.loaders.generators

from loaders import load  # noqa: E402
from loaders.boilerplate import drop_repeated_blocks  # noqa: E402
from loaders.documents import HTML, make_document  # noqa: E402
from loaders.files import iter_files  # noqa: E402
from loaders.html import html_to_markdown  # noqa: E402
from loaders.quality import BoilerplateReport, boilerplate_report  # noqa: E402
from splitters import chunk_documents  # noqa: E402
from tests.loaders.generators import (  # noqa: E402
    FIXTURES,
    GENERATORS,
    held_out_pages,
    missing_code_blocks,
)

DEFAULT_DOCS = Path("/usr/share/doc/python3.11/html")
#: The last commit before the generic main-content extraction.
DEFAULT_BASELINE = "6d4bc41"
REPORT = ROOT / "docs" / "splitting.md"
MKDOCS_SOURCES = ROOT / "eval" / "mkdocs.sources"
#: HTML → Markdown goal, MB of HTML per CPU second.
SPEED_GOAL = 1.0
#: Boilerplate goal on the fixture pages of every generator.
BOILERPLATE_GOAL = 0.01

Convert = Callable[..., object]


def baseline_module(rev: str) -> ModuleType:
    """`loaders/html.py` as it was at `rev` (a revision before it became the package
    `loaders/html/`), imported as `baseline_html`."""
    source = subprocess.run(
        ["git", "show", f"{rev}:loaders/html.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "baseline_html.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("baseline_html", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def html_pages(directory: Path) -> list[Path]:
    return [path for path in iter_files(directory) if path.suffix.lower() in (".html", ".htm")]


@dataclass
class Speed:
    name: str
    megabytes: float
    cpu: float
    slowest: list[tuple[float, Path]]

    @property
    def rate(self) -> float:
        return self.megabytes / self.cpu if self.cpu else 0.0


def timed(
    name: str, convert: Convert, pages: list[tuple[Path, str, int]]
) -> tuple[Speed, dict[Path, str]]:
    markdown: dict[Path, str] = {}
    per_page: list[tuple[float, Path]] = []
    total = 0.0
    for path, html, _ in pages:
        started = time.process_time()
        page = convert(html, base_url=path.as_uri())
        seconds = time.process_time() - started
        total += seconds
        per_page.append((seconds, path))
        markdown[path] = str(getattr(page, "markdown", ""))
    size = sum(n for _, _, n in pages) / 1e6
    return Speed(name, size, total, sorted(per_page, reverse=True)[:5]), markdown


def baseline_documents(convert: Convert, paths: Iterable[Path]) -> list[Document]:
    """Documents as REV's converter made them (no cross-page dedup)."""
    documents = []
    for path in paths:
        html = path.read_bytes().decode("utf-8", errors="replace")
        page = convert(html, base_url=path.as_uri())
        markdown = str(getattr(page, "markdown", ""))
        if markdown:
            documents.append(
                make_document(markdown, source=str(path), title=path.stem, content_type=HTML)
            )
    return documents


def share(report: BoilerplateReport) -> str:
    return f"{len(report.flagged)} / {report.chunks} ({report.share:.1%})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--baseline", default=DEFAULT_BASELINE)
    parser.add_argument("--tutorial", type=Path, default=DEFAULT_DOCS / "tutorial")
    parser.add_argument("--no-write", action="store_true", help="do not update docs/")
    parser.add_argument(
        "--no-held-out", action="store_true", help="skip the held-out pages of the packages"
    )
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
    old = baseline_module(args.baseline)
    old_convert: Convert = old.html_to_markdown
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    # -- speed and code fidelity on the Python docs ------------------------------------
    paths = html_pages(args.docs)
    pages = []
    for path in paths:
        data = path.read_bytes()
        pages.append((path, data.decode("utf-8", errors="replace"), len(data)))
    after, markdown = timed("now", html_to_markdown, pages)
    before, _ = timed(f"at {args.baseline}", old_convert, pages)
    missing = sum(len(missing_code_blocks(html, markdown[path])) for path, html, _ in pages)
    blocks = sum(html.count("<pre") for _, html, _ in pages)
    errors: list[object] = []
    loaded = sum(1 for _ in load([str(args.docs)], on_error=errors.append))

    say(f"## HTML loader ({len(pages)} pages of `{args.docs}`, {after.megabytes:.1f} MB of HTML)")
    say()
    say("| converter | CPU s | MB/s per core |")
    say("|---|---:|---:|")
    for speed in (before, after):
        say(f"| `loaders.html` {speed.name} | {speed.cpu:.1f} | {speed.rate:.2f} |")
    say()
    slowest = ", ".join(f"{p.relative_to(args.docs)} {s:.2f} s" for s, p in after.slowest)
    say(f"- slowest pages now: {slowest}")
    say(f"- code blocks not byte-exact now: {missing} of about {blocks} `<pre>` blocks")
    say(f"- pages refused by `load`: {len(errors)} of {loaded + len(errors)}")

    # -- boilerplate per generator ---------------------------------------------------
    say()
    say(
        "| generator (Debian package) | fixture chunks flagged before | after"
        " | held-out pages | held-out flagged before | after | of which navigation-like"
        " | refused |"
    )
    say("|---|---:|---:|---:|---:|---:|---:|---:|")
    fixture_shares: dict[str, float] = {}
    fixture_missing = 0
    refused = 0
    packing_docs: list[Document] = []
    for generator in GENERATORS:
        directory = FIXTURES / generator.name
        fixture_pages = sorted(directory.glob("*.html"))
        old_report = boilerplate_report(
            chunk_documents(baseline_documents(old_convert, fixture_pages))
        )
        docs = list(load([str(directory)]))
        packing_docs.extend(docs)
        for doc in docs:
            html = Path(doc.metadata["source"]).read_text(encoding="utf-8", errors="replace")
            fixture_missing += len(missing_code_blocks(html, doc.page_content))
        new_report = boilerplate_report(chunk_documents(docs))
        fixture_shares[generator.name] = new_report.share
        held = [] if args.no_held_out else held_out_pages(generator)
        if held:
            held_errors: list[object] = []
            held_docs = list(
                drop_repeated_blocks(load([str(p) for p in held], on_error=held_errors.append))
            )
            refused += len(held_errors)
            held_old = share(
                boilerplate_report(chunk_documents(baseline_documents(old_convert, held)))
            )
            held_report = boilerplate_report(chunk_documents(held_docs))
            held_new = share(held_report)
            navigation = f"{held_report.navigation_share:.1%}"
            held_cells = (
                f"{len(held)} | {held_old} | {held_new} | {navigation} | {len(held_errors)}"
            )
        else:
            held_cells = "skipped | | | | " if args.no_held_out else "not installed | | | | "
        say(
            f"| {generator.name} ({generator.package}) | {share(old_report)} "
            f"| {share(new_report)} | {held_cells} |"
        )
    say()
    say(f"- fixture code blocks not byte-exact: {fixture_missing}")
    say(
        "- flagged: a chunk with no header path beyond its page's intro, mostly link text"
        " (>= 60 % of its prose, >= 3 links), or repeated on another page of the set"
        " (`loaders.quality`). The held-out pages go through the cross-page dedup as one"
        " site, as a load of their directory would. *Navigation-like*: without header"
        " path or mostly links; the rest of the held-out share is chunks repeated on"
        " another page."
    )

    # -- packing ---------------------------------------------------------------------
    tutorial = args.tutorial
    mkdocs = [
        Path(line.strip()) for line in MKDOCS_SOURCES.read_text().splitlines() if line.strip()
    ]
    sets = {
        "generator fixtures (16 pages)": packing_docs,
        "Python tutorial": list(load([str(tutorial)])),
        "MkDocs pages of eval/mkdocs.sources": list(load([str(p) for p in mkdocs if p.exists()])),
    }
    say()
    say("| pages | chunks | chunks with pack_small_sections | chunks under 80 tokens (off / on) |")
    say("|---|---:|---:|---:|")
    for name, docs in sets.items():
        off = list(chunk_documents(docs))
        on = list(chunk_documents(docs, pack_small_sections=True))
        small_off = sum(1 for c in off if c.metadata["tokens"] < 80)
        small_on = sum(1 for c in on if c.metadata["tokens"] < 80)
        say(f"| {name} | {len(off)} | {len(on)} | {small_off} / {small_on} |")

    # -- the tutorial's chunks before and after --------------------------------------
    key = lambda c: (c.metadata["source"], tuple(c.metadata["headers"]), c.page_content)  # noqa: E731
    old_chunks = [
        key(c) for c in chunk_documents(baseline_documents(old_convert, html_pages(tutorial)))
    ]
    new_chunks = [key(c) for c in chunk_documents(load([str(tutorial)]))]
    same = len(set(old_chunks) & set(new_chunks))
    say()
    say(
        f"- Python tutorial: {len(old_chunks)} chunks at {args.baseline}, {len(new_chunks)} now,"
        f" {same} identical (source, header path and text)"
    )

    # -- goals -----------------------------------------------------------------------
    worst = max(fixture_shares.values())
    goals = [
        (
            f"boilerplate <= 1 % on every generator's fixtures (worst {worst:.1%})",
            worst <= BOILERPLATE_GOAL,
        ),
        (f"0 real pages refused ({len(errors) + refused})", len(errors) + refused == 0),
        (
            f"0 altered code blocks ({missing} Python docs, {fixture_missing} fixtures)",
            missing + fixture_missing == 0,
        ),
        (
            f"HTML -> Markdown >= {SPEED_GOAL:.0f} MB/s per core ({after.rate:.2f})",
            after.rate >= SPEED_GOAL,
        ),
    ]
    say()
    for text, met in goals:
        say(f"- goal: {text}: {'met' if met else 'NOT met'}")
    say()
    say(f"- machine: {cpu_model()}; load averages {load_text()} (1/5/15 min) at the end")
    if not args.no_write:
        write_section(REPORT, "loaders", "\n".join(lines))
        print(f"wrote {REPORT}")


if __name__ == "__main__":
    main()
