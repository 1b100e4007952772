"""Versions: how labels sort, which version of each group is the latest, which chunks a
search reads, and the labels an ingest writes on chunks and summaries (in-memory store)."""

from __future__ import annotations

import datetime as dt

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from service.errors import InvalidSourceError, SearchError
from service.index.versions import (
    LatestVersions,
    admits,
    check_version,
    labelled,
    latest_versions,
    version_order,
)
from service.ingest.pipeline import Ingestor
from service.ingest.summarize import Summarizer
from service.models.embed import Embedder
from service.query.modes import Mode
from service.query.search import Searcher, SearchRequest, search_request, versioned
from service.settings import Settings
from tests.service.fakes import MemoryStore


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("3.9", "3.10"),
        ("3.10", "3.11"),
        ("3.11", "3.11.1"),
        ("v2", "v10"),
        ("2024.1", "2024.12"),
        ("1.9.9", "2.0"),
        ("1.0", "1.0a"),  # a label that extends another sorts after it (documented)
        ("1.0-beta", "1.0-RC"),  # words compare case-insensitively
        ("1.0", "1.0+local"),
        ("1.x", "2"),
        ("9", "10"),
    ],
)
def test_version_order_compares_numbers_as_numbers(older: str, newer: str) -> None:
    assert version_order(older) < version_order(newer)


def test_separators_do_not_count() -> None:
    assert version_order("3.11") == version_order("3-11") == version_order("3_11")


def test_the_latest_version_of_each_group() -> None:
    pairs = [
        ("py", "3.9"),
        ("py", "3.11"),
        ("py", "3.10"),
        ("django", "5.0"),
        ("django", "4.2"),
        ("", "1.0"),  # no group: not part of any
        ("lonely", ""),  # no version: left out
    ]
    assert latest_versions(pairs) == {"django": "5.0", "py": "3.11"}
    assert latest_versions([]) == {}


@pytest.mark.parametrize(
    ("properties", "version", "latest", "expected"),
    [
        ({"version": "3.10", "version_group": "py"}, "3.10", {}, True),
        ({"version": "3.10", "version_group": "py"}, "3.11", {}, False),
        ({"version": "3.10", "version_group": "py"}, "*", {"py": "3.11"}, True),
        ({"version": "3.10", "version_group": "py"}, None, {"py": "3.11"}, False),
        ({"version": "3.11", "version_group": "py"}, None, {"py": "3.11"}, True),
        ({"version": "3.10", "version_group": "py"}, None, {"other": "1"}, True),
        ({"version": "1.0", "version_group": ""}, None, {"py": "3.11"}, True),
        ({}, None, {"py": "3.11"}, True),  # written before chunks kept a version
        ({}, "3.11", {}, False),
        ({"version": None, "version_group": None}, None, {"py": "3.11"}, True),
    ],
)
def test_which_chunks_a_search_reads(
    properties: dict[str, object], version: str | None, latest: dict[str, str], expected: bool
) -> None:
    assert admits(properties, version=version, latest=latest) is expected


@pytest.mark.parametrize("label", ["", "3.11", "v2.0-rc1", "2024.12+local", "a" * 64])
def test_labels_that_may_name_a_version(label: str) -> None:
    assert check_version(label) == label


@pytest.mark.parametrize("label", ["*", "3 11", ".3", "a" * 65, "3.11/", "ü"])
def test_labels_that_may_not(label: str) -> None:
    with pytest.raises(InvalidSourceError) as raised:
        check_version(label)
    assert raised.value.field == "version"


def test_a_search_request_refuses_a_malformed_version() -> None:
    with pytest.raises(SearchError, match="cannot label a version"):
        SearchRequest(query="q", version="3 11").validate()
    SearchRequest(query="q", version="*").validate()


def test_an_empty_version_override_is_the_default() -> None:
    settings = Settings()
    assert search_request(settings, "q", version="").version is None
    assert search_request(settings, "q", version="3.11").version == "3.11"


# -- the ingest writes the labels -----------------------------------------------------------

PAGE_TEXT = (
    "# Guide\n\n## Install\n\nRun `pip install thing` to install the package.\n\n"
    "## Run\n\nStart it with `thing serve --port 8000` and open the page.\n"
)


def _page(source: str = "guide.md") -> Document:
    return Document(page_content=PAGE_TEXT, metadata={"source": source, "title": "Guide"})


def _ingestor(store: MemoryStore) -> Ingestor:
    summarizer = Summarizer(
        FakeListChatModel(responses=["Explains installing and running it."] * 20),
        model_name="fake",
        concurrency=1,
    )
    embedder = Embedder(DeterministicFakeEmbedding(size=8), model="fake-embedding")
    return Ingestor(store=store, summarizer=summarizer, embedder=embedder, min_similarity=-1.0)


def _labels(store: MemoryStore) -> set[tuple[str, str, str]]:
    return {(r.source, r.version, r.version_group) for r in store.originals.values()} | {
        (r.source, r.version, r.version_group) for r in store.summaries.values()
    }


def test_chunks_and_summaries_carry_their_document_labels_and_when_they_were_written() -> None:
    store = MemoryStore()
    before = dt.datetime.now(dt.UTC)
    _ingestor(store).ingest_documents(labelled([_page()], version="3.11", group="py"))
    after = dt.datetime.now(dt.UTC)

    assert _labels(store) == {("guide.md", "3.11", "py")}
    assert len(store.originals) == 2
    written = [r.indexed_at for r in [*store.originals.values(), *store.summaries.values()]]
    assert all(at is not None and before <= at <= after for at in written)
    record = store.sources["guide.md"]
    assert (record.version, record.version_group) == ("3.11", "py")


def test_a_relabelled_source_is_relabelled_in_place_without_a_model_call() -> None:
    store = MemoryStore()
    _ingestor(store).ingest_documents(labelled([_page()], version="3.10", group="py"))
    first_written = {oid: r.indexed_at for oid, r in store.originals.items()}
    store.log.clear()

    report = _ingestor(store).ingest_documents(labelled([_page()], version="3.11", group="py"))

    assert (report.unchanged_sources, report.new_chunks, report.llm_calls) == (0, 0, 0)
    assert "originals" not in store.log
    assert "summaries" not in store.log
    assert "relabel" in store.log
    assert _labels(store) == {("guide.md", "3.11", "py")}
    # When the chunk was written does not change with its label.
    assert {oid: r.indexed_at for oid, r in store.originals.items()} == first_written


def test_the_same_labels_again_are_unchanged() -> None:
    store = MemoryStore()
    _ingestor(store).ingest_documents(labelled([_page()], version="3.11"))
    store.log.clear()
    report = _ingestor(store).ingest_documents(labelled([_page()], version="3.11"))
    assert (report.unchanged_sources, store.log) == (1, [])


def test_an_ingest_without_labels_keeps_none() -> None:
    store = MemoryStore()
    _ingestor(store).ingest_documents([_page()])
    assert _labels(store) == {("guide.md", "", "")}


# -- a search reads the version asked, or the latest ------------------------------------------


def _two_versions() -> tuple[MemoryStore, Embedder]:
    store = MemoryStore()
    ingestor = _ingestor(store)
    ingestor.ingest_documents(labelled([_page("v1/guide.md")], version="1.0", group="thing"))
    ingestor.ingest_documents(labelled([_page("v2/guide.md")], version="2.0", group="thing"))
    ingestor.ingest_documents([_page("notes.md")])
    return store, ingestor.embedder


@pytest.mark.parametrize("mode", ["joint", "summaries", "originals", "fused"])
@pytest.mark.parametrize(
    ("version", "latest", "sources"),
    [
        ("1.0", (("thing", "2.0"),), {"v1/guide.md"}),
        ("2.0", (), {"v2/guide.md"}),
        (None, (("thing", "2.0"),), {"v2/guide.md", "notes.md"}),
        ("*", (("thing", "2.0"),), {"v1/guide.md", "v2/guide.md", "notes.md"}),
    ],
)
def test_hits_are_of_the_version_asked_and_say_it(
    mode: Mode, version: str | None, latest: tuple[tuple[str, str], ...], sources: set[str]
) -> None:
    store, embedder = _two_versions()
    request = SearchRequest(query="install thing", k=10, mode=mode, version=version, latest=latest)

    hits = Searcher(store, embedder).search(request)

    assert {hit.source for hit in hits} == sources
    for hit in hits:
        assert hit.version == {"v1/guide.md": "1.0", "v2/guide.md": "2.0"}.get(hit.source)
        assert hit.indexed_at is not None
        assert hit.to_dict()["indexed_at"] == hit.indexed_at.isoformat()


def test_the_latest_versions_are_read_again_only_after_the_recheck_time_or_forget() -> None:
    pairs = [("py", "3.10"), ("py", "3.11"), ("", "1.0")]
    reads: list[float] = []
    now = [100.0]

    def read() -> list[tuple[str, str]]:
        reads.append(now[0])
        return list(pairs)

    latest = LatestVersions(read, recheck_seconds=10.0, clock=lambda: now[0])
    assert latest.get() == {"py": "3.11"}
    pairs.append(("py", "3.12"))
    now[0] = 109.9
    assert latest.get() == {"py": "3.11"}  # trusted for 10 s
    now[0] = 110.0
    assert latest.get() == {"py": "3.12"}
    pairs.append(("py", "3.13"))
    latest.forget()
    assert latest.get() == {"py": "3.13"}
    assert reads == [100.0, 110.0, 110.0]


@pytest.mark.parametrize(
    ("version", "latest", "expected_version", "expected_latest"),
    [
        ("3.10", {"py": "3.11"}, "3.10", ()),
        ("*", {"py": "3.11"}, "*", ()),
        (None, {"py": "3.11", "go": "1.22"}, None, (("go", "1.22"), ("py", "3.11"))),
        ("", {"py": "3.11"}, None, (("py", "3.11"),)),
        (None, {}, None, ()),
    ],
)
def test_a_request_without_a_version_reads_the_latest_of_each_group(
    version: str | None,
    latest: dict[str, str],
    expected_version: str | None,
    expected_latest: tuple[tuple[str, str], ...],
) -> None:
    asked: list[bool] = []

    def read() -> dict[str, str]:
        asked.append(True)
        return latest

    request = versioned(SearchRequest(query="range", version=version), read)
    assert (request.version, request.latest) == (expected_version, expected_latest)
    assert asked == ([] if version else [True])
