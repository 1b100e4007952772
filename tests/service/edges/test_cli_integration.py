"""The `synopsis` CLI on the real stack: search, ask, docs list and delete."""

from __future__ import annotations

import json

import pytest

from service.ingest.pipeline import IngestReport
from service.query.answer import DONT_KNOW
from service.settings import Settings
from tests.service.conftest import CONTROLFLOW, CONTROLFLOW_CHUNKS, cli

pytestmark = pytest.mark.integration

PYTHON_QUESTION = "I want to write a Python script that prints numbers from 1 to 30."
GO_QUESTION = "I want to write a Go script that prints numbers from 1 to 30."
PAGE_TITLE = "4. More Control Flow Tools"


def test_search_json_returns_the_range_section_first(
    core_settings: Settings, controlflow: IngestReport
) -> None:
    code, stdout, stderr = cli(core_settings, "search", PYTHON_QUESTION, "--json")

    assert code == 0, stderr
    hits = json.loads(stdout)
    assert len(hits) == 5
    first = hits[0]
    assert {"id", "source", "title", "headers", "content", "summary", "score"} <= first.keys()
    assert (first["source"], first["title"]) == (CONTROLFLOW, PAGE_TITLE)
    assert first["headers"][0] == PAGE_TITLE
    assert first["headers"][-1].startswith("4.3. The ")  # "4.3. The `range()` Function"
    assert "range(" in first["content"]
    assert isinstance(first["summary"], str)
    assert first["summary"]
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)


def test_search_text_output(core_settings: Settings, controlflow: IngestReport) -> None:
    code, stdout, stderr = cli(core_settings, "search", PYTHON_QUESTION, "--k", "2")

    assert code == 0, stderr
    lines = stdout.splitlines()
    assert lines[0].startswith(f"1. {PAGE_TITLE} > 4.3. The ")
    assert lines[1] == f"   {CONTROLFLOW}"
    assert sum(line[:3] in ("1. ", "2. ") for line in lines) == 2


def test_ask_answers_with_citations(core_settings: Settings, controlflow: IngestReport) -> None:
    # Gate off: a generated answer cites all three passages (the default gate may drop a
    # far one); an extractive one quotes and cites the best passage only.
    code, stdout, stderr = cli(
        core_settings, "ask", PYTHON_QUESTION, "--k", "3", "--max-distance", "0"
    )

    assert code == 0, stderr
    lines = stdout.rstrip("\n").splitlines()
    citations = [line for line in lines if line.startswith("[")]
    [kind] = [line for line in lines if line.startswith(("(generated", "(extractive"))]
    assert len(citations) == (3 if kind.startswith("(generated") else 1), stdout
    # Where to open it: the page and the section's id in it.
    assert citations[0].startswith(
        f"[1] {CONTROLFLOW}#the-range-function § {PAGE_TITLE} > 4.3. The "
    )
    answer = "\n".join(lines[: lines.index(kind)]).strip()
    assert answer
    if kind.startswith("(extractive"):
        assert "range(" in answer  # the quoted passage is the one about range()


def test_ask_with_nothing_relevant_says_it_does_not_know(
    core_settings: Settings, controlflow: IngestReport
) -> None:
    # A gate no hit passes: the answer comes without a model call (see test_answer).
    code, stdout, stderr = cli(core_settings, "ask", GO_QUESTION, "--max-distance", "0.01")
    assert (code, stdout, stderr) == (0, DONT_KNOW + "\n", "")


def test_ask_about_another_language_says_it_does_not_know(
    core_settings: Settings, controlflow: IngestReport
) -> None:
    # The question: no gate needed, the passages never mention Go.
    code, stdout, stderr = cli(core_settings, "ask", GO_QUESTION)
    assert (code, stdout, stderr) == (0, DONT_KNOW + "\n", "(no retrieved passage mentions 'Go')\n")


def test_docs_list_shows_the_page(core_settings: Settings, controlflow: IngestReport) -> None:
    code, stdout, stderr = cli(core_settings, "docs", "list")

    assert code == 0, stderr
    [line] = [line for line in stdout.splitlines() if line.endswith(f"  {CONTROLFLOW}")]
    assert line.startswith(f"{CONTROLFLOW_CHUNKS:5} chunks  complete   ")

    code, stdout, stderr = cli(core_settings, "docs", "list", "--json")
    assert code == 0, stderr
    listed = json.loads(stdout)
    [row] = [row for row in listed["sources"] if row["source"] == CONTROLFLOW]
    assert (row["chunks"], row["status"], row["title"]) == (
        CONTROLFLOW_CHUNKS,
        "complete",
        PAGE_TITLE,
    )
    assert listed["stats"]["originals"] >= CONTROLFLOW_CHUNKS


def test_docs_delete_of_an_unknown_source_is_one_line(
    core_settings: Settings, controlflow: IngestReport
) -> None:
    code, stdout, stderr = cli(core_settings, "docs", "delete", "/nowhere/missing.html")
    assert (code, stdout, stderr) == (
        1,
        "",
        "Error: /nowhere/missing.html is not indexed (see `synopsis docs list`)\n",
    )
