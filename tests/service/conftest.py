"""Fixtures of the core integration tests: one Synopsis on test collections, the real page.

Summaries cost seconds of CPU each, so the "More Control Flow Tools" page is ingested
once per session into collections prefixed `TestCore`; tests that need other sources
write them under tmp paths (the page as Markdown has the same chunks, so it reuses the
cached summaries). The smallest local chat model writes them and the answers, whatever
the default model (`core_settings`): dozens of tests read this page, and a larger
default model would make its 34 summaries cost minutes. The default model's own text is
checked on a short document (tests/service/test_default_model_integration.py).
The collections are dropped at the end of the session (set
`SYNOPSIS_TEST_KEEP_COLLECTIONS=1` to keep them, so the next run skips the first ingest).
"""

from __future__ import annotations

import dataclasses
import os
import re
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from weaviate.classes.query import QueryReference

from loaders import load
from service.edges.cli import main
from service.index.store import Store
from service.ingest.pipeline import IngestReport
from service.settings import Settings
from service.synopsis import Synopsis
from tests.support.models import model_env

CONTROLFLOW = "/usr/share/doc/python3.11/html/tutorial/controlflow.html"
#: Chunks of CONTROLFLOW at the default 500 tokens (`synopsis chunk` lists them).
CONTROLFLOW_CHUNKS = 34
CORE_PREFIX = "TestCore"


@pytest.fixture(scope="session")
def core_settings(settings: Settings, smallest_model: str) -> Settings:
    """The shared stack's settings, on the `TestCore` collections, with the smallest local
    chat model for summaries and answers (the guard, lengths and prompts as by default)."""
    return dataclasses.replace(
        settings, collection_prefix=CORE_PREFIX, chat_model=smallest_model, answer_model=""
    )


@pytest.fixture(scope="session")
def core(core_settings: Settings) -> Iterator[Synopsis]:
    """One Synopsis on the test collections for the whole session; dropped afterwards."""
    synopsis = Synopsis.open(core_settings)
    try:
        yield synopsis
    finally:
        if not os.environ.get("SYNOPSIS_TEST_KEEP_COLLECTIONS"):
            synopsis.store.drop()
        synopsis.close()


@pytest.fixture(scope="session")
def controlflow(core: Synopsis) -> IngestReport:
    """The session's first ingest of the real page (about 34 summaries the first time)."""
    return core.ingest([CONTROLFLOW])


def cli(
    settings: Settings, *args: str, env: Mapping[str, str] | None = None
) -> tuple[int, str, str]:
    """Run `synopsis ARGS` in-process on `settings`' collections and chat models: (exit
    code, stdout, stderr)."""
    result = CliRunner().invoke(
        main,
        list(args),
        env={
            "SYNOPSIS_COLLECTION_PREFIX": settings.collection_prefix,
            **model_env(settings),
            **(env or {}),
        },
    )
    return result.exit_code, result.stdout, result.stderr


@dataclass(frozen=True, kw_only=True)
class Census:
    """What the collections hold, and every way they break the invariants."""

    originals: Counter[str]  # per source
    summaries: Counter[str]  # per source
    dangling_summaries: list[uuid.UUID]  # reference missing, not one, or not its original_id
    originals_without_one_summary: dict[uuid.UUID, int]  # original → its number of summaries
    duplicate_chunks: list[tuple[str, str]]  # (source, content hash) stored more than once
    # Originals whose attached summary id is not the id of one of their stored summaries.
    unattached_originals: list[uuid.UUID]

    @property
    def broken(self) -> bool:
        return bool(
            self.dangling_summaries or self.originals_without_one_summary or self.duplicate_chunks
        )


def census(store: Store) -> Census:
    """Read both collections whole and check the invariants of ARCHITECTURE.md."""
    originals: dict[uuid.UUID, tuple[str, str]] = {}
    attached: dict[uuid.UUID, str] = {}
    for obj in store.originals.iterator(return_properties=["source", "content_hash", "summary_id"]):
        originals[obj.uuid] = (str(obj.properties["source"]), str(obj.properties["content_hash"]))
        attached[obj.uuid] = str(obj.properties.get("summary_id") or "")
    summary_ids: dict[uuid.UUID, set[str]] = {}
    per_original: Counter[uuid.UUID] = Counter()
    summaries: Counter[str] = Counter()
    dangling: list[uuid.UUID] = []
    for obj in store.summaries.iterator(
        return_properties=["source", "original_id"],
        return_references=QueryReference(link_on="originalDocument", return_properties=[]),
    ):
        summaries[str(obj.properties["source"])] += 1
        reference = obj.references.get("originalDocument") if obj.references else None
        targets = [target.uuid for target in reference.objects] if reference else []
        original_id = uuid.UUID(str(obj.properties["original_id"]))
        if targets != [original_id] or original_id not in originals:
            dangling.append(obj.uuid)
        per_original[original_id] += 1
        summary_ids.setdefault(original_id, set()).add(str(obj.uuid))
    chunks = Counter(originals.values())
    return Census(
        originals=Counter(source for source, _ in originals.values()),
        summaries=summaries,
        dangling_summaries=dangling,
        originals_without_one_summary={
            original: per_original[original]
            for original in originals
            if per_original[original] != 1
        },
        duplicate_chunks=[chunk for chunk, count in chunks.items() if count > 1],
        unattached_originals=[
            original
            for original, summary in attached.items()
            if summary not in summary_ids.get(original, set())
        ],
    )


def assert_invariants(store: Store) -> Census:
    """Fail with the offending ids unless every invariant holds; return the census."""
    found = census(store)
    assert found.dangling_summaries == []
    assert found.originals_without_one_summary == {}
    assert found.duplicate_chunks == []
    assert found.unattached_originals == []
    return found


def write_markdown(path: Path, title: str, sections: Mapping[str, str]) -> Path:
    """A Markdown file: `# title`, then one `## header` section per entry."""
    body = "\n\n".join(f"## {header}\n\n{text.strip()}" for header, text in sections.items())
    path.write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
    return path


#: Six short sections, one chunk each: a document whose summaries only need to exist (jobs,
#: faults, cancels), small enough to summarize in seconds with `cheap_settings`, large
#: enough that a held ingest still has several summaries pending.
SIX_SECTIONS = {
    "Installing": "Install Quillmark with `pip install quillmark`; it needs Python 3.10.",
    "Configuring": "Settings live in `quill.toml`; `quill config --show` prints them.",
    "Caching": "Rendered pages are cached in `~/.cache/quillmark`; set `cache_dir` to move it.",
    "Logging": "Logs go to `quill.log`; `log_max_bytes` rotates the file when it grows.",
    "Themes": "A theme is a folder of templates; `quill theme add NAME` installs one.",
    "Publishing": "`quill publish` uploads the rendered site to the configured target.",
}


def six_sections_markdown(title: str = "Quillmark guide") -> str:
    """`SIX_SECTIONS` as one Markdown document."""
    body = "\n\n".join(f"## {header}\n\n{text}" for header, text in SIX_SECTIONS.items())
    return f"# {title}\n\n{body}\n"


#: A numbered section's header line in the page's Markdown ("## 4.3. The `range()` …").
_SECTION_HEADER = re.compile(r"^#{2,6} (\d+(?:\.\d+)+)\. ", re.M)
#: Sections of CONTROLFLOW that a short copy keeps (`write_controlflow_markdown(path,
#: CONTROLFLOW_HEAD)`), and its chunks: the title's, 4.1, 4.2 and the two of 4.3.
CONTROLFLOW_HEAD = ("4.1", "4.2", "4.3")
CONTROLFLOW_HEAD_CHUNKS = 5


def write_controlflow_markdown(path: Path, sections: Sequence[str] = ()) -> Path:
    """The real page as the loader sees it, saved as Markdown at `path`: whole, or its
    title's text and only the numbered `sections`, each without its subsections. List a
    subsection's parent with it (`("4.8", "4.8.6")`): a chunk's header path is part of
    its identity.

    A copy of the HTML elsewhere would not do: the loader resolves its relative links
    against the file's location, so every chunk with a link would differ. The Markdown
    keeps the page's absolute links, so its chunks equal the page's (a section's chunks
    depend only on its header path and its text) and their summaries come from the cache:
    a short copy costs the embeddings of its few chunks, not of the page's 34.
    """
    [page] = load([CONTROLFLOW])
    markdown = page.page_content
    if sections:
        headers = list(_SECTION_HEADER.finditer(markdown))
        ends = [header.start() for header in headers[1:]] + [len(markdown)]
        kept = [
            markdown[header.start() : end]
            for header, end in zip(headers, ends, strict=True)
            if header.group(1) in sections
        ]
        assert len(kept) == len(sections), f"not every section of {sections} is on the page"
        markdown = markdown[: headers[0].start()] + "".join(kept)
    path.write_text(markdown, encoding="utf-8")
    return path
