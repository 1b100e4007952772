"""A generic check of chunks made from HTML pages: is any of them boilerplate?

The criterion names no theme, site or page; it looks only at the chunks of a set of
pages of one site:

* ``no_header``: a chunk with no header path that is not its page's intro (the intro
  is the page's first chunk; text before a page's first header that needs more than
  one chunk is evidently not the page's own). A page without any header (a source
  listing) is all intro;
* ``link_heavy``: a chunk whose prose is mostly link text (a menu, a list of pages);
  code blocks do not count;
* ``repeated``: a chunk whose text (whitespace collapsed) is also a chunk of another
  page of the set (the same menu or footer on every page).

A chunk that meets any of them counts once. `benchmarks/bench_loaders.py` reports the
share per generator, and the fixture and corpus tests assert it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from langchain_core.documents import Document

from splitters.base.markdown_syntax import iter_segments
from splitters.base.metadata import CHUNK_INDEX, HEADERS

__all__ = ["BoilerplateReport", "boilerplate_report", "link_text_share"]

#: Link text above this share of a chunk's prose makes it link-heavy...
LINK_HEAVY_SHARE = 0.6
#: ...when it has at least this many links (one "see [x](…)" line is not a menu).
LINK_HEAVY_MIN_LINKS = 3

# `[text](target)` and `![alt](src)`; the text may hold one level of brackets.
_LINK = re.compile(
    r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"  # the text
    r"\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)"  # (target "title")
)
_NOT_TEXT = re.compile(r"[\s#*_`|>\-\\]+")


def _text_length(text: str) -> int:
    return len(_NOT_TEXT.sub("", text))


def link_text_share(markdown: str) -> tuple[float, int]:
    """The share of link text in the prose of `markdown` (code left out), and the links.

    Lengths count visible characters only: link targets, whitespace and Markdown
    punctuation are left out. A chunk without prose has a share of 0.
    """
    linked = total = links = 0
    for segment in iter_segments(markdown):
        if segment.is_code:
            continue
        position = 0
        for match in _LINK.finditer(segment.text):
            links += 1
            inner = _text_length(match.group(1))
            linked += inner
            total += _text_length(segment.text[position : match.start()]) + inner
            position = match.end()
        total += _text_length(segment.text[position:])
    return (linked / total if total else 0.0), links


def _normalized(text: str) -> str:
    return " ".join(text.split())


@dataclass
class BoilerplateReport:
    """What the check found in a set of chunks; each list holds (source, chunk index)."""

    chunks: int = 0
    no_header: list[tuple[str, int]] = field(default_factory=list)
    link_heavy: list[tuple[str, int]] = field(default_factory=list)
    repeated: list[tuple[str, int]] = field(default_factory=list)

    @property
    def flagged(self) -> set[tuple[str, int]]:
        """Every chunk that meets at least one criterion."""
        return {*self.no_header, *self.link_heavy, *self.repeated}

    @property
    def navigation_share(self) -> float:
        """Chunks without header or mostly links (what navigation looks like) over all."""
        navigation = {*self.no_header, *self.link_heavy}
        return len(navigation) / self.chunks if self.chunks else 0.0

    @property
    def share(self) -> float:
        """Flagged chunks over all chunks (0 for no chunks)."""
        return len(self.flagged) / self.chunks if self.chunks else 0.0

    def summary(self) -> str:
        """One line: counts per criterion and the share."""
        return (
            f"{len(self.flagged)} of {self.chunks} chunks ({self.share:.1%}): "
            f"{len(self.no_header)} without header, {len(self.link_heavy)} link-heavy, "
            f"{len(self.repeated)} repeated across pages"
        )


def boilerplate_report(chunks: Iterable[Document]) -> BoilerplateReport:
    """Check the chunks of the pages of one site (e.g. `chunk_documents(load([dir]))`)."""
    report = BoilerplateReport()
    pages_of: defaultdict[str, set[str]] = defaultdict(set)
    keys: list[tuple[str, int, str]] = []
    headerless: list[tuple[str, int]] = []
    headed: set[str] = set()
    for chunk in chunks:
        report.chunks += 1
        source = str(chunk.metadata.get("source", ""))
        index = int(chunk.metadata.get(CHUNK_INDEX, 0))
        headers: Sequence[str] = chunk.metadata.get(HEADERS) or ()
        if headers:
            headed.add(source)
        elif index > 0:
            headerless.append((source, index))
        share, links = link_text_share(chunk.page_content)
        if share >= LINK_HEAVY_SHARE and links >= LINK_HEAVY_MIN_LINKS:
            report.link_heavy.append((source, index))
        text = _normalized(chunk.page_content)
        pages_of[text].add(source)
        keys.append((source, index, text))
    report.no_header = [(s, i) for s, i in headerless if s in headed]
    report.repeated = [(s, i) for s, i, text in keys if len(pages_of[text]) > 1]
    return report
