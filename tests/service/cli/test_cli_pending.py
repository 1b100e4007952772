"""`synopsis search` and `synopsis docs list` (unit) while summaries are still pending: what
they say about it, over a fake Synopsis and no stack."""

from __future__ import annotations

import datetime as dt
import json
from types import TracebackType
from typing import Any

import pytest
from click.testing import CliRunner

from service import cli
from service.cli import session
from service.index.records import SourceRecord
from service.query.search import Hit, SearchRequest
from service.settings import Settings

HIT = Hit(
    id="1",
    source="tutorial/controlflow.html",
    title="More Control Flow Tools",
    headers=["4. More Control Flow Tools", "4.3. The range() Function"],
    chunk_index=3,
    content="If you do need to iterate over a sequence of numbers, range() comes in handy.",
    summary=None,
    score=1.0,
    leg="joint",
)
RECORD = SourceRecord(
    source=HIT.source,
    title=HIT.title,
    content_hash="abc",
    settings_key="k",
    status="ingesting",
    chunks=20,
    ingested_at=dt.datetime(2026, 12, 2, 16, 5, tzinfo=dt.UTC),
    pending=12,
)


class PendingSynopsis:
    """One source of 20 chunks, 12 of them still waiting for their summary."""

    def __enter__(self) -> PendingSynopsis:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        pass

    def search(self, request: SearchRequest) -> list[Hit]:
        return [HIT]

    def pending_summaries(self) -> int:
        return RECORD.pending

    def sources(self) -> list[SourceRecord]:
        return [RECORD]

    def stats(self) -> dict[str, Any]:
        return {"originals": 20, "summaries": 8, "summaries_by_kind": {"generated": 8}}


def _run(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(session, "open_synopsis", lambda settings: PendingSynopsis())
    result = CliRunner().invoke(cli.main, list(args), obj=Settings())
    return result.exit_code, result.stdout, result.stderr


def test_search_says_the_summaries_are_being_written_not_to_ingest_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, stdout, stderr = _run(monkeypatch, "search", "range")
    assert code == 0, stderr
    assert "4.3. The range() Function" in stdout
    assert " ".join(stderr.split()) == (
        "12 chunks are still waiting for their summary and are searched by their text "
        "meanwhile; a running ingest (an API job or `synopsis ingest`) keeps writing them, "
        "and `synopsis docs list` shows how many are left. If no ingest is running, "
        "ingesting the source again completes them."
    )


def test_docs_list_shows_how_many_summaries_are_pending(monkeypatch: pytest.MonkeyPatch) -> None:
    code, stdout, stderr = _run(monkeypatch, "docs", "list")
    assert code == 0, stderr
    assert stdout.splitlines()[0] == (
        f"   20 chunks  ingesting     12 summaries pending  2026-12-02 16:05  {HIT.source}"
    )
    code, stdout, stderr = _run(monkeypatch, "docs", "list", "--json")
    assert code == 0, stderr
    [row] = json.loads(stdout)["sources"]
    assert (row["chunks"], row["pending"], row["status"]) == (20, 12, "ingesting")
