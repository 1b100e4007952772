"""Every relative link of README.md and docs/ points at a file of the repository, and
a `#fragment` into a Markdown file at one of its headings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#+\s+(.*?)\s*$", re.MULTILINE)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces → `-`."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _prose(path: Path) -> str:
    return _FENCE.sub("", path.read_text(encoding="utf-8"))


def broken_links(page: Path) -> list[str]:
    """The relative links of `page` whose file or heading does not exist."""
    broken = []
    for target in _LINK.findall(_prose(page)):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # http:, https:, mailto:
        path, _, fragment = target.partition("#")
        destination = (page.parent / path) if path else page
        if not destination.exists():
            broken.append(target)
        elif fragment and destination.suffix == ".md":
            headings = {slug(h) for h in _HEADING.findall(_prose(destination))}
            if fragment not in headings:
                broken.append(target)
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    assert broken_links(page) == []


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("The local stack", "the-local-stack"),
        ("HTTP API limits", "http-api-limits"),
        ("External Weaviate and Ollama, replication", "external-weaviate-and-ollama-replication"),
        ("`synopsis stack up`", "synopsis-stack-up"),
    ],
)
def test_slug(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_a_missing_file_and_heading_are_found(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("# Only heading\n", encoding="utf-8")
    page = tmp_path / "a.md"
    page.write_text(
        "[ok](b.md) [ok](b.md#only-heading) [no](c.md) [no](b.md#other) [web](https://x.org/y)\n"
        "```\n[in a fence](d.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page) == ["c.md", "b.md#other"]
