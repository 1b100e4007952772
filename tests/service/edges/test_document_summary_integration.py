"""A whole document's summary on the real stack: `GET /documents/{source}/summary` and
`synopsis summarize`, written by the real answer model from the page's chunk
summaries, then served from the cache."""

from __future__ import annotations

import dataclasses
import json
from urllib.parse import quote

import pytest
from litestar.testing import TestClient

from service.edges.api import create_app
from service.ingest.pipeline import IngestReport
from service.settings import Settings
from tests.service.conftest import CONTROLFLOW, CONTROLFLOW_CHUNKS, cli

pytestmark = pytest.mark.integration

READ_KEY = "summary-read-key"


def test_a_document_summary_is_written_once_then_cached(
    core_settings: Settings, controlflow: IngestReport
) -> None:
    settings = dataclasses.replace(core_settings, api_read_keys=READ_KEY, jobs_workers=0)
    headers = {"Authorization": f"Bearer {READ_KEY}"}
    path = f"/documents/{quote(CONTROLFLOW, safe='')}/summary"
    with TestClient(create_app(settings)) as client:
        first = client.get(path, headers=headers)
        assert first.status_code == 200, first.text
        body = first.json()
        assert body["source"] == CONTROLFLOW
        assert body["title"] == "4. More Control Flow Tools"
        assert body["sections"] == CONTROLFLOW_CHUNKS
        assert body["kind"] in ("generated", "extractive")
        assert body["summary"]
        if body["kind"] == "extractive":  # the outline, quoted from the index
            assert body["summary"].startswith("4. More Control Flow Tools:\n- ")
        # A cached summary from an earlier run of this stack costs no call.
        assert body["llm_calls"] >= 1 or body["cached"]

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
