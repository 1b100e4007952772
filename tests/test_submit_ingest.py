"""scripts/submit_ingest.py (the quick start's upload): what it sends and when it returns."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "submit_ingest", ROOT / "scripts" / "submit_ingest.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


submit_ingest = load_script()


def make_tree(root: Path) -> Path:
    docs = root / "tutorial"
    (docs / "sub").mkdir(parents=True)
    (docs / "index.html").write_text("<h1>A</h1>")
    (docs / "sub" / "b.md").write_text("# B")
    (docs / "logo.png").write_bytes(b"\x89PNG")
    return docs


def test_a_directory_is_its_documents_named_from_its_parent(tmp_path: Path) -> None:
    docs = make_tree(tmp_path)
    names = [name for name, _ in submit_ingest.files_of(str(docs))]
    assert names == ["tutorial/index.html", "tutorial/sub/b.md"]
    assert [n for n, _ in submit_ingest.files_of(str(docs / "index.html"))] == ["index.html"]


def test_uploads_stay_within_the_file_and_byte_limits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(submit_ingest, "MAX_FILES", 2)
    monkeypatch.setattr(submit_ingest, "MAX_BYTES", 10)
    files = []
    for index, size in enumerate([4, 4, 4, 8, 3]):
        path = tmp_path / f"{index}.md"
        path.write_text("x" * size)
        files.append((path.name, path))
    parts = submit_ingest.groups(files)
    assert [[name for name, _ in part] for part in parts] == [
        ["0.md", "1.md"],
        ["2.md"],  # 4 + 8 would pass 10 bytes
        ["3.md"],  # 8 + 3 would too
        ["4.md"],
    ]


def job(state: str, files: list[str], **progress: Any) -> dict[str, Any]:
    return {
        "id": "j1",
        "state": state,
        "request": {"kind": "files", "files": [{"source": f} for f in files]},
        "progress": progress,
        "sources": [],
        "reason": "",
    }


@pytest.mark.parametrize(
    ("state", "progress", "indexed", "expected"),
    [
        ("queued", {}, {}, False),
        ("running", {"stage": "write", "written": 4, "chunks": 4}, {"a.md": 4}, False),
        ("running", {"stage": "write"}, {"a.md": 4, "b.md": 2}, True),
        ("running", {"stage": "summarize"}, {}, True),  # phase 2: every chunk is written
        ("done", {}, {}, True),
        ("failed", {}, {}, True),
    ],
)
def test_searchable_once_every_source_has_its_chunks_or_the_job_moved_on(
    state: str, progress: dict[str, Any], indexed: dict[str, int], expected: bool
) -> None:
    assert submit_ingest.searchable(job(state, ["a.md", "b.md"], **progress), indexed) is expected


class FakeApi:
    """POST /documents queues a job; it is running for `polls` polls, its chunks written
    (listed in /documents) at the last; then its summaries are still pending."""

    def __init__(self, polls: int) -> None:
        self.polls = polls
        self.uploads: list[list[str]] = []
        self.seen = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path == "/documents":
            body = request.read().decode()
            names = sorted(
                part.split('filename="')[1].split('"')[0]
                for part in body.split("Content-Disposition")[1:]
            )
            self.uploads.append(names)
            return httpx.Response(202, json=job("queued", names))
        names = self.uploads[0]
        if request.url.path == "/jobs/j1":
            self.seen += 1
            return httpx.Response(200, json=job("running", names, stage="split"))
        if request.url.path == "/documents":
            ready = self.seen >= self.polls
            listed = [{"source": n, "chunks": 3, "pending": 3} for n in names] if ready else []
            return httpx.Response(200, content=json.dumps(listed))
        return httpx.Response(404)


def test_run_uploads_then_returns_once_the_chunks_are_listed(tmp_path: Path) -> None:
    docs = make_tree(tmp_path)
    api = FakeApi(polls=3)
    with httpx.Client(base_url="http://api", transport=httpx.MockTransport(api)) as client:
        status = submit_ingest.run(client, [str(docs)], timeout=10, poll=0)
    assert status == 0
    assert api.uploads == [["tutorial/index.html", "tutorial/sub/b.md"]]
    assert api.seen == 3  # it did not return before the chunks were listed


def test_run_gives_up_after_its_timeout(tmp_path: Path) -> None:
    docs = make_tree(tmp_path)
    api = FakeApi(polls=10**9)
    with httpx.Client(base_url="http://api", transport=httpx.MockTransport(api)) as client:
        assert submit_ingest.run(client, [str(docs)], timeout=0.05, poll=0.01) == 1


class BusyFirstApi(FakeApi):
    """As FakeApi, but its first `busy` listings answer 503, as the API does while Weaviate
    cannot list the collections a job has just created."""

    def __init__(self, polls: int, busy: int) -> None:
        super().__init__(polls)
        self.busy = busy

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and request.url.path == "/documents" and self.busy:
            self.busy -= 1
            return httpx.Response(503, headers={"Retry-After": "1"}, json={"status_code": 503})
        return super().__call__(request)


def test_a_503_while_polling_is_waited_out(tmp_path: Path) -> None:
    docs = make_tree(tmp_path)
    api = BusyFirstApi(polls=3, busy=2)
    with httpx.Client(base_url="http://api", transport=httpx.MockTransport(api)) as client:
        assert submit_ingest.run(client, [str(docs)], timeout=10, poll=0) == 0
    assert api.busy == 0


def test_a_503_that_lasts_past_the_timeout_fails_with_the_reply(tmp_path: Path) -> None:
    docs = make_tree(tmp_path)
    api = BusyFirstApi(polls=3, busy=10**9)
    transport = httpx.MockTransport(api)
    with (
        httpx.Client(base_url="http://api", transport=transport) as client,
        pytest.raises(SystemExit, match="GET /documents: 503"),
    ):
        submit_ingest.run(client, [str(docs)], timeout=0.05, poll=0.01)
