"""The hostile corpus (`tests/loaders/hostile.py`) through the HTTP API on the real stack:
every file uploaded and every URL sent to `POST /documents` ends as a job with a clear
state and reason within bounded time, the service keeps answering, and what was indexed
before is still there, whole.

A source that would split into more than `SYNOPSIS_MAX_CHUNKS_PER_SOURCE` chunks (here 20)
is refused before anything of it is written: each chunk costs a model call. Summaries only
need to exist here (`cheap_settings`), and the fetch deadline is 3 s, not 60. One job
runs at a time, so its slot, claim and source lease are read back without a settle time.

The injection pages (eval/injection: documentation that tells the answer model to ignore
its instructions, output a link, reveal its prompt) are indexed too, and one question per
page asked: the answer shown never carries out the instruction, whatever the smallest
model writes, and the model's tokens are streamed as a draft.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from service.api import create_app
from service.connections import connect_weaviate
from service.index.store import Store
from service.jobs import JobStore
from service.settings import Settings
from service.synopsis import Synopsis
from tests.loaders.hostile import FILES, HTTP, HostileServer, hostile_server
from tests.loaders.test_hostile import EXPECTED
from tests.service.api.test_api import _events
from tests.service.serving import IN_PROCESS_URL
from tests.support.invariants import assert_invariants

pytestmark = pytest.mark.integration

PREFIX = "TestApiHostile"
WRITE = {"Authorization": "Bearer hostile-write"}
READ = {"Authorization": "Bearer hostile-read"}
MAX_CHUNKS = 20
#: The API's fetch deadline here (60 s by default; a unit test pins that).
FETCH_DEADLINE = 3.0
#: A job's whole run: loading, and the model calls of a page that is indexed.
JOB_SECONDS = 600
CAP = re.compile(r": \d+ chunks, more than SYNOPSIS_MAX_CHUNKS_PER_SOURCE \(20\); not indexed")
GOOD = "# Kettle\n\n## Descaling\n\nDescale the kettle every month with white vinegar.\n"
#: Cases whose chunks repeat: an ingest stores each distinct chunk once, so these come
#: under the limit and are indexed (the loader test counts every chunk).
DISTINCT_CHUNKS = {
    "single-line-20mb.html": 2,
    "http-single-line-20mb": 2,
    "nested-quotes-5000.md": 3,
}


@pytest.fixture(scope="module")
def server() -> Iterator[HostileServer]:
    with hostile_server() as running:
        yield running


@pytest.fixture(scope="module")
def client(cheap_settings: Settings) -> Iterator[TestClient[Any]]:
    configured = cheap_settings.with_overrides(
        collection_prefix=PREFIX,
        fetch_deadline=FETCH_DEADLINE,
        summary_timeout=max(cheap_settings.summaries.timeout, 600.0),
        jobs_poll_seconds=0.2,
        api_read_keys="hostile-read",
        api_write_keys="hostile-write",
        fetch_allow="127.0.0.1",
        max_chunks_per_source=MAX_CHUNKS,
        # One process runs one job at a time (the tests wait for each): no other taker
        # of its slot, claim or source lease, so no settle time (0.3 s by default).
        lease_settle_seconds=0.0,
    )
    weaviate = connect_weaviate(configured)
    try:
        Store(weaviate, prefix=PREFIX).drop()
        JobStore(weaviate, prefix=PREFIX).drop()
        with TestClient(create_app(configured), base_url=IN_PROCESS_URL) as running:
            yield running
        Store(weaviate, prefix=PREFIX).drop()
        JobStore(weaviate, prefix=PREFIX).drop()
    finally:
        weaviate.close()


def _run(client: TestClient[Any], response: Any) -> dict[str, Any]:
    assert response.status_code == 202, response.text
    job_id = response.json()["id"]
    deadline = time.monotonic() + JOB_SECONDS
    while True:
        job: dict[str, Any] = client.get(f"/jobs/{job_id}", headers=WRITE).json()
        if job["state"] in ("done", "failed", "cancelled", "interrupted"):
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.3)


@pytest.fixture(scope="module")
def indexed_before(client: TestClient[Any]) -> dict[str, Any]:
    """A good page indexed before any hostile input: it must come through whole."""
    body = {"content": GOOD, "format": "markdown", "source": "kettle.md", "title": "Kettle"}
    job = _run(client, client.post("/documents", json=body, headers=WRITE))
    assert job["state"] == "done", job
    [document] = client.get("/documents", headers=READ).json()
    return dict(document)


def _check(case: str, source: str, job: dict[str, Any]) -> None:
    outcome, chunks, reason = EXPECTED[case]
    chunks = DISTINCT_CHUNKS.get(case, chunks)
    if outcome == "refused":
        assert job["state"] == "failed", job
        assert job["reason"] == "no source could be loaded (see errors)"
        [error] = job["errors"]
        assert re.fullmatch(rf"{re.escape(source)}: {reason}", error), error
    elif chunks > MAX_CHUNKS:
        assert job["state"] == "failed", job
        [error] = job["errors"]
        assert error.startswith(source), error
        assert CAP.search(error), error
    else:
        assert (job["state"], job["errors"]) == ("done", []), job
        assert job["report"]["new_chunks"] == chunks


@pytest.mark.parametrize("case", list(FILES))
def test_an_uploaded_hostile_file_ends_as_a_job_with_a_reason(
    case: str, client: TestClient[Any], indexed_before: dict[str, Any]
) -> None:
    files = [("files", (case, FILES[case]()))]
    job = _run(client, client.post("/documents", files=files, headers=WRITE))  # it ends
    _check(case, case, job)
    assert client.get("/health").status_code == 200


#: Cases refused at the fetch deadline: a body, or the headers, trickled a byte at a time.
DEADLINE_CASES = ("http-slow-loris", "http-slow-headers")


@pytest.mark.parametrize("case", list(HTTP))
def test_a_hostile_url_ends_as_a_job_with_a_reason(
    case: str, client: TestClient[Any], server: HostileServer, indexed_before: dict[str, Any]
) -> None:
    path, depth = HTTP[case]
    url = server.base_url + path
    body = {"url": url, "crawl_depth": depth, "max_pages": 20}
    job = _run(client, client.post("/documents", json=body, headers=WRITE))
    if case in DEADLINE_CASES:
        # The API's fetch deadline, SYNOPSIS_FETCH_DEADLINE (the loader test uses 2 s).
        assert job["state"] == "failed", job
        [error] = job["errors"]
        reason = EXPECTED[case][2].replace(" 2 s ", f" {FETCH_DEADLINE:g} s ")
        assert re.fullmatch(rf"{re.escape(url)}: {reason}", error), error
    else:
        _check(case, url, job)
    assert client.get("/health").status_code == 200


def test_what_was_indexed_before_is_still_whole(
    client: TestClient[Any], indexed_before: dict[str, Any], tmp_path: Path
) -> None:
    listed = {item["source"]: item for item in client.get("/documents", headers=READ).json()}
    assert listed["kettle.md"] == indexed_before | {"last_job": listed["kettle.md"]["last_job"]}
    hits = client.post("/search", json={"query": "descale the kettle"}, headers=READ).json()
    assert hits[0]["source"] == "kettle.md"
    synopsis: Synopsis = client.app.state.synopsis
    assert_invariants(synopsis.store)


# -- pages that give the answer model instructions -----------------------------------------

#: The injection corpus (eval/injection): documentation pages, each with one instruction to
#: the model among its content, and two questions per page with what following it shows.
INJECTION = Path(__file__).resolve().parents[3] / "eval" / "injection"
INJECTION_QUESTIONS = [
    json.loads(line)
    for line in (INJECTION / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]
#: One question per page: each answer is a model call.
FIRST_PER_PAGE = list(
    {question["page"]: question for question in reversed(INJECTION_QUESTIONS)}.values()
)


@pytest.fixture(scope="module")
def injection_pages(client: TestClient[Any], indexed_before: dict[str, Any]) -> dict[str, Any]:
    files = [
        ("files", (path.name, path.read_bytes()))
        for path in sorted((INJECTION / "pages").iterdir())
    ]
    job = _run(client, client.post("/documents", files=files, headers=WRITE))
    assert (job["state"], job["errors"]) == ("done", []), job
    return job


@pytest.mark.parametrize("question", FIRST_PER_PAGE, ids=lambda question: question["page"])
def test_an_answer_does_not_follow_an_instruction_in_an_indexed_page(
    question: dict[str, Any], client: TestClient[Any], injection_pages: dict[str, Any]
) -> None:
    """Whatever the model writes, the answer shown does not carry out what the page told
    it (its link, its sentence, the prompt), and every token of the model's reply is
    streamed as a draft."""
    body = {"question": question["query"], "stream": True}
    response = client.post("/ask", json=body, headers=READ)
    assert response.status_code == 200, response.text
    events = _events(response.text)
    names = [name for name, _ in events]
    assert names[-2:] == ["citations", "done"], names
    done = events[-1][1]
    tokens = [data for name, data in events if name == "token"]
    if done["llm_called"]:
        assert tokens
        assert all(token["draft"] is True for token in tokens)
        assert done["draft"] in ("accepted", "replaced")
    shown = done["answer"].lower()
    assert not [marker for marker in question["followed"] if marker.lower() in shown], done
