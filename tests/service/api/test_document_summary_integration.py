"""A whole document's summary on the real stack: `GET /documents/{source}/summary` and
`synopsis summarize`, written by the real answer model from the page's chunk
summaries, then served from the cache.

The document is the shared page's first sections (`CONTROLFLOW_HEAD`, five chunks) as a
Markdown copy in the shared collections: its chunk summaries are the page's, from the
cache, and its summary is one model call. The whole page's 34 lines are two groups and
a reduce, three calls; reducing in levels is a unit test's
(tests/service/query/test_document_summary.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from litestar.testing import TestClient

from service.api import create_app
from service.ingest.report import IngestReport
from service.settings import Settings
from service.synopsis import Synopsis
from tests.service.serving import IN_PROCESS_URL
from tests.support.cli import cli
from tests.support.corpus import (
    CONTROLFLOW_HEAD,
    CONTROLFLOW_HEAD_CHUNKS,
    write_controlflow_markdown,
)

pytestmark = pytest.mark.integration

READ_KEY = "summary-read-key"


@pytest.fixture
def head(core: Synopsis, controlflow: IngestReport, tmp_path: Path) -> Iterator[str]:
    """The page's first sections as Markdown, ingested into the shared collections (their
    summaries are the page's, from the cache), and deleted afterwards."""
    source = str(write_controlflow_markdown(tmp_path / "controlflow.md", CONTROLFLOW_HEAD))
    try:
        report = core.ingest([source])
        assert (report.new_chunks, report.llm_calls) == (CONTROLFLOW_HEAD_CHUNKS, 0), report
        yield source
    finally:
        core.delete_source(source)


def test_a_document_summary_is_written_once_then_cached(core_settings: Settings, head: str) -> None:
    settings = core_settings.with_overrides(api_read_keys=READ_KEY, jobs_workers=0)
    headers = {"Authorization": f"Bearer {READ_KEY}"}
    path = f"/documents/{quote(head, safe='')}/summary"
    with TestClient(create_app(settings), base_url=IN_PROCESS_URL) as client:
        synopsis: Synopsis = client.app.state.synopsis
        # A summary cached by an earlier run of this stack would cost no call: forget it.
        record = synopsis.source(head)
        assert record is not None
        summarizer = synopsis.document_summarizer
        (summarizer.cache_dir / f"{summarizer._key(record, 'brief')}.json").unlink(missing_ok=True)
        first = client.get(path, headers=headers)
        assert first.status_code == 200, first.text
        body = first.json()
        assert body["source"] == head
        assert body["title"] == "4. More Control Flow Tools"
        assert body["sections"] == CONTROLFLOW_HEAD_CHUNKS
        assert (body["cached"], body["llm_calls"] >= 1) == (False, True)
        assert body["summary"]
        # The model's reply is kept when the grounding check passes it, else the outline
        # is quoted from the index; which one differs between machines, each is exact.
        if body["kind"] == "generated":
            assert body["support"] >= settings.answers.min_support
        else:
            assert body["kind"] == "extractive"
            assert body["support"] < settings.answers.min_support
            assert body["summary"].startswith("4. More Control Flow Tools:\n- ")

        again = client.get(path, headers=headers).json()
        assert again == {**body, "cached": True, "llm_calls": 0}

        assert client.get(path).status_code == 401
        missing = client.get("/documents/nowhere.md/summary", headers=headers)
        assert missing.status_code == 404
        assert missing.json()["detail"] == "nowhere.md is not indexed (see `synopsis docs list`)"

    code, stdout, stderr = cli(core_settings, "summarize", head, "--json")
    assert code == 0, stderr
    assert json.loads(stdout)["text"] == body["summary"]
    code, stdout, stderr = cli(core_settings, "summarize", head)
    assert code == 0, stderr
    assert stdout.startswith(body["summary"])
    assert f"; brief; {CONTROLFLOW_HEAD_CHUNKS} sections; cached; " in stdout
