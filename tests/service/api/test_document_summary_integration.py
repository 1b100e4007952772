"""A whole document's summary on the real stack: `GET /documents/{source}/summary` and
`synopsis summarize`, written by the real answer model from the page's chunk
summaries, then served from the cache."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from litestar.testing import TestClient

from service.api import create_app
from service.ingest.report import IngestReport
from service.settings import Settings
from service.synopsis import Synopsis
from tests.service.serving import IN_PROCESS_URL
from tests.support.cli import cli
from tests.support.corpus import CONTROLFLOW, CONTROLFLOW_CHUNKS

pytestmark = pytest.mark.integration

READ_KEY = "summary-read-key"


def test_a_document_summary_is_written_once_then_cached(
    core_settings: Settings, controlflow: IngestReport
) -> None:
    settings = core_settings.with_overrides(api_read_keys=READ_KEY, jobs_workers=0)
    headers = {"Authorization": f"Bearer {READ_KEY}"}
    path = f"/documents/{quote(CONTROLFLOW, safe='')}/summary"
    with TestClient(create_app(settings), base_url=IN_PROCESS_URL) as client:
        synopsis: Synopsis = client.app.state.synopsis
        # A summary cached by an earlier run of this stack would cost no call: forget it.
        record = synopsis.source(CONTROLFLOW)
        assert record is not None
        summarizer = synopsis.document_summarizer
        (summarizer.cache_dir / f"{summarizer._key(record, 'brief')}.json").unlink(missing_ok=True)
        first = client.get(path, headers=headers)
        assert first.status_code == 200, first.text
        body = first.json()
        assert body["source"] == CONTROLFLOW
        assert body["title"] == "4. More Control Flow Tools"
        assert body["sections"] == CONTROLFLOW_CHUNKS
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

    code, stdout, stderr = cli(core_settings, "summarize", CONTROLFLOW, "--json")
    assert code == 0, stderr
    assert json.loads(stdout)["text"] == body["summary"]
    code, stdout, stderr = cli(core_settings, "summarize", CONTROLFLOW)
    assert code == 0, stderr
    assert stdout.startswith(body["summary"])
    assert f"; brief; {CONTROLFLOW_CHUNKS} sections; cached; " in stdout
