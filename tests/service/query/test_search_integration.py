"""Search on the real stack: BM25 on code identifiers, and no summary without its original."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from service.index.records import OriginalRecord, SummaryRecord, indexed_text
from service.ingest.report import IngestReport
from service.query.search import Mode, SearchRequest
from service.synopsis import Synopsis
from tests.support.corpus import CONTROLFLOW
from tests.support.documents import write_markdown

pytestmark = pytest.mark.integration

_CODE_SECTIONS = {
    "Joining paths": (
        "Build file names portably:\n\n"
        "```python\nimport os\n\nconfig = os.path.join(home, '.config', 'app.toml')\n```"
    ),
    "Initializing objects": (
        "A class sets up its attributes in its initializer:\n\n"
        "```python\nclass Point:\n    def __init__(self, x, y):\n"
        "        self.x = x\n        self.y = y\n```"
    ),
    # A decoy: every word of the identifiers, none of the identifiers.
    "Joining the project": (
        "Join the OS team: the path to your first pull request starts with an init "
        "discussion on the forum, where we explain how we review changes."
    ),
}


@pytest.fixture(scope="module")
def code_doc(core: Synopsis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A three-section Markdown file, ingested into the test collections (3 summaries)."""
    path = write_markdown(tmp_path_factory.mktemp("code") / "code.md", "Code notes", _CODE_SECTIONS)
    report = core.ingest([str(path)])
    assert (report.new_chunks, report.failed) == (3, [])
    yield str(path)
    core.delete_source(str(path))


@pytest.mark.parametrize(
    "target",
    [("os.path.join", "Joining paths"), ("__init__", "Initializing objects")],
    ids=["os.path.join", "__init__"],
)
@pytest.mark.parametrize(
    ("mode", "alpha"),
    [("originals", 0.0), ("originals", 0.5), ("fused", 0.0), ("fused", 0.5), ("summaries", 0.0)],
)
def test_identifier_query_finds_the_chunk_that_contains_it(
    core: Synopsis, code_doc: str, target: tuple[str, str], mode: Mode, alpha: float
) -> None:
    query, section = target
    hits = core.search(SearchRequest(query=query, k=3, mode=mode, alpha=alpha, source=code_doc))
    assert hits[0].headers == ["Code notes", section]
    assert query in hits[0].content


@pytest.mark.parametrize(
    ("query", "section"),
    [("os.path.join", "Joining paths"), ("__init__", "Initializing objects")],
)
def test_identifier_bm25_scores_the_decoy_below_the_chunk(
    core: Synopsis, code_doc: str, query: str, section: str
) -> None:
    hits = core.search(
        SearchRequest(query=query, k=3, mode="originals", alpha=0.0, source=code_doc)
    )
    scores = {hit.headers[-1]: hit.score for hit in hits}
    assert scores[section] > scores.get("Joining the project", 0.0)


def test_a_summary_whose_original_is_missing_is_never_returned(
    core: Synopsis, code_doc: str
) -> None:
    """A summary whose original was deleted under it (Weaviate keeps the dangling
    reference; it refuses only to create one) is skipped by every mode."""
    headers = ["Code notes", "Orphan"]
    content = "os.path.join(a, b) in an original that is about to disappear."
    text = "os.path.join joins path components; a summary left without its original."
    vectors = core.embedder.embed_documents(
        [indexed_text(headers, content), indexed_text(headers, text)]
    )
    original = OriginalRecord(
        id=uuid.uuid4(),
        source=code_doc,
        title="Code notes",
        headers=headers,
        chunk_index=99,
        content=content,
        content_hash="orphan",
        identifiers=["os.path.join"],
        vector=vectors[0],
    )
    orphan = SummaryRecord(
        id=uuid.uuid4(),
        original_id=original.id,
        source=code_doc,
        title="Code notes",
        headers=headers,
        summary=text,
        content_hash="orphan",
        model="test",
        prompt_version="test",
        identifiers=["os.path.join"],
        vector=vectors[1],
    )
    core.store.write_originals([original])
    core.store.write_summaries([orphan])
    core.store.delete_originals([original.id])
    try:
        modes: tuple[Mode, ...] = ("summaries", "fused", "both")
        for mode in modes:
            hits = core.search(SearchRequest(query="os.path.join", k=5, mode=mode, source=code_doc))
            assert hits, mode
            assert all(hit.summary != text for hit in hits), mode
            assert all(hit.id != str(original.id) for hit in hits), mode
            assert {hit.headers[-1] for hit in hits} <= set(_CODE_SECTIONS), mode
    finally:
        core.store.delete_summaries([orphan.id])


@pytest.mark.parametrize(
    ("filters", "expected_sources"),
    [
        ({"source": CONTROLFLOW}, {CONTROLFLOW}),
        ({"source_prefix": "/usr/share/doc/python3.11/"}, {CONTROLFLOW}),
        ({"header_prefix": "Code notes > Joining"}, {"code"}),
    ],
)
def test_filters_restrict_the_sources(
    core: Synopsis,
    controlflow: IngestReport,
    code_doc: str,
    filters: dict[str, str],
    expected_sources: set[str],
) -> None:
    hits = core.search(SearchRequest(query="join paths", k=5, **filters))  # type: ignore[arg-type]
    names = {"code" if hit.source == code_doc else hit.source for hit in hits}
    assert hits
    assert names == expected_sources
