"""Request ids, the exception → response mapping beyond Synopsis errors, request limits,
and /metrics."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import ollama
import pytest
import weaviate.exceptions
from litestar.testing import TestClient
from prometheus_client import REGISTRY

from service.api import metrics
from service.api.metrics import record_ingest, record_sync, reset_multiprocess_dir
from service.api.request_ids import REQUEST_ID_HEADER
from service.errors import StoreError
from service.ingest.report import IngestReport
from service.sources import SyncReport
from tests.service.api.apps import client_over
from tests.service.api.test_api import FakeSynopsis, _ollama, _ollama_ok

_HEX_ID = re.compile(r"[0-9a-f]{32}")


def _client(fake: FakeSynopsis | None = None, **settings: Any) -> TestClient[Any]:
    fake = fake or FakeSynopsis()
    fake.settings = fake.settings.with_overrides(**settings)
    return client_over(fake, _ollama(_ollama_ok))  # the app for these settings, built once


def _failing(fake: FakeSynopsis, error: Exception) -> FakeSynopsis:
    def stats() -> dict[str, object]:
        raise error

    fake.stats = stats  # type: ignore[method-assign]
    return fake


# -- request ids --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/stats", 200),
        ("GET", "/health", 200),
        ("POST", "/search", 400),  # no body
        ("GET", "/nowhere", 404),  # the router's own answer
        ("PUT", "/stats", 405),
    ],
)
def test_every_response_carries_a_request_id(method: str, path: str, status: int) -> None:
    with _client() as client:
        response = client.request(method, path)
    assert response.status_code == status
    assert _HEX_ID.fullmatch(response.headers[REQUEST_ID_HEADER])
    if status >= 400:
        assert response.json()["request_id"] == response.headers[REQUEST_ID_HEADER]


def test_request_ids_differ_between_requests() -> None:
    with _client() as client:
        ids = {client.get("/health").headers[REQUEST_ID_HEADER] for _ in range(3)}
    assert len(ids) == 3


@pytest.mark.parametrize(
    ("incoming", "kept"),
    [
        ("lb-7f3a:42.1", True),
        ("x" * 128, True),
        ("x" * 129, False),
        ("two words", False),
        ("forged\r\nline", False),
        ("", False),
    ],
)
def test_a_sane_incoming_request_id_is_kept(incoming: str, kept: bool) -> None:
    with _client() as client:
        response = client.get("/nowhere", headers={REQUEST_ID_HEADER: incoming})
    returned = response.headers[REQUEST_ID_HEADER]
    assert response.json()["request_id"] == returned
    if kept:
        assert returned == incoming
    else:
        assert _HEX_ID.fullmatch(returned)


# -- dependencies down, and bugs ----------------------------------------------------------


def _connect_error() -> Exception:
    return httpx.ConnectError("refused", request=httpx.Request("POST", "http://ollama/api/embed"))


@pytest.mark.parametrize(
    ("error", "dependency", "name"),
    [
        (weaviate.exceptions.WeaviateConnectionError("down"), "weaviate", "Weaviate"),
        (weaviate.exceptions.WeaviateTimeoutError("slow"), "weaviate", "Weaviate"),
        (
            weaviate.exceptions.WeaviateQueryError("unavailable", "GRPC search"),
            "weaviate",
            "Weaviate",
        ),
        (ollama.ResponseError("model not loaded"), "ollama", "Ollama"),
        (_connect_error(), "ollama", "Ollama"),
    ],
)
def test_a_dependency_failure_is_503_with_retry_after_and_which_one(
    error: Exception, dependency: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    with _client(_failing(FakeSynopsis(), error)) as client:
        response = client.get("/stats")
    body = response.json()
    rid = response.headers[REQUEST_ID_HEADER]
    assert (response.status_code, response.headers["retry-after"]) == (503, "5")
    assert body == {
        "status_code": 503,
        "error": type(error).__name__,
        "detail": f"{name} is unavailable; retry later (request {rid})",
        "request_id": rid,
        "dependency": dependency,
    }
    [record] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert rid in record.getMessage()
    assert f"({dependency} unavailable)" in record.getMessage()


def _refusal(status: int, message: str) -> Exception:
    """A refusal as the weaviate client raises it for a REST answer of `status`."""
    response = httpx.Response(
        status,
        json={"error": [{"message": message}]},
        request=httpx.Request("POST", "http://10.0.3.4:8080/v1/schema"),
    )
    return weaviate.exceptions.UnexpectedStatusCodeError("Collection may not exist", response)


def _wrapped(error: Exception) -> StoreError:
    """`error` as the store passes it on: a StoreError raised from it."""
    try:
        raise StoreError(f"search failed: {error}") from error
    except StoreError as wrapped:
        return wrapped


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (_refusal(422, "class name 'x-y' is invalid"), 422),
        (_refusal(400, "invalid filter"), 400),
        (_wrapped(_refusal(422, "class name 'x-y' is invalid")), 422),
        (weaviate.exceptions.WeaviateInvalidInputError("filter needs a value"), 400),
    ],
)
def test_a_request_weaviate_refuses_is_4xx_without_retry_after(
    error: Exception, status: int
) -> None:
    with _client(_failing(FakeSynopsis(), error)) as client:
        response = client.get("/stats")
    body = response.json()
    assert response.status_code == status, body
    assert "retry-after" not in response.headers
    assert "dependency" not in body
    assert body["detail"].startswith("Weaviate refused the request: ")
    assert "10.0.3.4" not in body["detail"]


@pytest.mark.parametrize("status", [401, 403, 404, 408, 429, 500, 502])
def test_weaviate_answers_that_are_not_the_requests_fault_stay_503(status: int) -> None:
    with _client(_failing(FakeSynopsis(), _refusal(status, "no"))) as client:
        response = client.get("/stats")
    assert (response.status_code, response.headers["retry-after"]) == (503, "5")
    assert response.json()["dependency"] == "weaviate"


def test_the_service_serves_again_once_the_dependency_is_back() -> None:
    fake = FakeSynopsis()
    with _client(fake) as client:
        stats = fake.stats
        _failing(fake, weaviate.exceptions.WeaviateConnectionError("down"))
        assert client.get("/stats").status_code == 503
        fake.stats = stats  # type: ignore[method-assign]
        assert client.get("/stats").status_code == 200


def test_an_unexpected_error_is_500_without_internals_and_logged_with_the_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    error = RuntimeError("internal detail: /srv/secret/path")
    with _client(_failing(FakeSynopsis(), error)) as client:
        response = client.get("/stats")
    rid = response.headers[REQUEST_ID_HEADER]
    assert (response.status_code, response.json()) == (
        500,
        {
            "status_code": 500,
            "error": "InternalServerError",
            "detail": f"internal error (request {rid})",
            "request_id": rid,
        },
    )
    assert "Traceback" not in response.text
    assert "/srv/secret/path" not in response.text
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.getMessage() == f"request {rid}: GET /stats failed with RuntimeError"
    assert record.exc_info is not None
    assert record.exc_info[1] is error
    assert "Traceback" in caplog.text


# -- limits -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/search", {"query": "x" * 11}, "query"),
        ("/search", {"query": "x", "k": 4}, "k"),
        ("/ask", {"question": "x" * 11}, "question"),
        ("/ask", {"question": "x", "k": 4}, "k"),
    ],
)
def test_requests_over_a_limit_are_400_naming_the_field(
    path: str, body: dict[str, Any], field: str
) -> None:
    fake = FakeSynopsis()
    with _client(fake, api_max_query_chars=10, api_max_k=3) as client:
        response = client.post(path, json=body)
    assert (response.status_code, response.json()["error"], response.json()["field"]) == (
        400,
        "RequestLimitError",
        field,
    )
    assert fake.calls == []


def test_requests_at_the_limit_pass() -> None:
    with _client(api_max_query_chars=10, api_max_k=3) as client:
        assert client.post("/search", json={"query": "x" * 10, "k": 3}).status_code == 200
        assert client.post("/ask", json={"question": "x" * 10, "k": 3}).status_code == 200


def test_the_default_limits() -> None:
    with _client() as client:
        assert client.post("/search", json={"query": "x" * 4000, "k": 100}).status_code == 200
        assert client.post("/search", json={"query": "x" * 4001}).json()["field"] == "query"
        assert client.post("/search", json={"query": "x", "k": 101}).json()["field"] == "k"
        assert client.post("/ask", json={"question": "x", "k": 21}).json()["field"] == "k"


def test_a_body_over_the_limit_is_413() -> None:
    fake = FakeSynopsis()
    with _client(fake, api_max_body_bytes=100) as client:
        response = client.post("/search", json={"query": "x" * 200})
        assert client.post("/search", json={"query": "x" * 50}).status_code == 200
    assert (response.status_code, response.json()["field"]) == (413, "body")
    assert fake.calls == ["asearch"]


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/search", {}, "query"),
        ("POST", "/search", {"query": ""}, "query"),
        ("POST", "/search", {"query": "x", "k": 0}, "k"),
        ("POST", "/search", {"query": "x", "mode": "bogus"}, "mode"),
        ("POST", "/search", {"query": "x", "unknown": 1}, "unknown"),
        ("POST", "/search", [], "body"),
        ("POST", "/ask", {"question": "x", "max_vector_distance": -1}, "max_vector_distance"),
        ("POST", "/sources", {"name": "a b", "location": "/docs"}, "name"),
        ("POST", "/sources", {"name": "a", "location": "ftp://x/", "kind": "site"}, "location"),
    ],
)
def test_validation_errors_name_the_field(method: str, path: str, body: Any, field: str) -> None:
    with _client() as client:
        response = client.request(method, path, json=body)
    assert (response.status_code, response.json()["field"]) == (400, field)


# -- metrics ------------------------------------------------------------------------------


def _sample(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


def test_metrics_count_requests_by_route_template_and_status() -> None:
    labels = {"method": "GET", "path": "/stats", "status_code": "200", "app_name": "synopsis"}
    before = _sample("synopsis_http_requests_total", labels)
    with _client() as client:
        client.get("/stats")
        client.get("/stats")
        client.get("/sources/a.md")
        text = client.get("/metrics").text
    assert _sample("synopsis_http_requests_total", labels) == before + 2
    assert 'path="/stats"' in text
    assert 'path="/sources/{name}",status_code="404"' in text
    assert "a.md" not in text  # the route's template, not the raw path or its query
    assert "synopsis_http_request_duration_seconds_bucket" in text


def test_metrics_count_llm_and_embedding_calls_and_cache_hits() -> None:
    answers = _sample("synopsis_llm_calls_total", {"purpose": "answer"})
    summaries = _sample("synopsis_llm_calls_total", {"purpose": "summary"})
    hits = _sample("synopsis_summary_cache_hits_total")
    embeddings = _sample("synopsis_embedding_calls_total")
    fake = FakeSynopsis()
    fake.embedder = type("Embedder", (), {"calls": 3})()  # type: ignore[attr-defined]
    with _client(fake) as client:
        client.post("/ask", json={"question": "How do I loop?"})
        record_ingest(IngestReport(llm_calls=4, cached_summaries=6))
        text = client.get("/metrics").text
        fake.embedder.calls = 5  # type: ignore[attr-defined]
        client.get("/metrics")
    assert _sample("synopsis_llm_calls_total", {"purpose": "answer"}) == answers + 1
    assert _sample("synopsis_llm_calls_total", {"purpose": "summary"}) == summaries + 4
    assert _sample("synopsis_summary_cache_hits_total") == hits + 6
    assert _sample("synopsis_embedding_calls_total") == embeddings + 5
    for name in ("llm_calls_total", "summary_cache_hits_total", "embedding_calls_total"):
        assert f"synopsis_{name}" in text


def test_metrics_count_the_tokens_and_seconds_the_model_reports_for_summaries() -> None:
    prompt = _sample("synopsis_summary_tokens_total", {"kind": "prompt"})
    output = _sample("synopsis_summary_tokens_total", {"kind": "output"})
    seconds = _sample("synopsis_summary_model_seconds_total", {"part": "output"})
    report = IngestReport()
    nanoseconds = {"prompt_eval_duration": 500_000_000, "eval_duration": 2_000_000_000}
    report.model.add({"prompt_eval_count": 300, "eval_count": 40, **nanoseconds}, ended_at=9.0)
    with _client(FakeSynopsis()) as client:
        record_ingest(report)
        text = client.get("/metrics").text
    assert _sample("synopsis_summary_tokens_total", {"kind": "prompt"}) == prompt + 300
    assert _sample("synopsis_summary_tokens_total", {"kind": "output"}) == output + 40
    assert _sample("synopsis_summary_model_seconds_total", {"part": "output"}) == seconds + 2.0
    assert 'synopsis_summary_model_seconds_total{part="load"}' in text


def test_metrics_count_each_sync_of_a_registered_source() -> None:
    """What the job runner records of each sync (`record_sync`, the runner's `on_sync`),
    per source: pages by outcome, requests, 304s, whether it completed, model calls."""
    summaries = _sample("synopsis_llm_calls_total", {"purpose": "summary"})
    record_sync(
        "metrics-site",
        SyncReport(unchanged=2, changed=1, added=1, removed=1, requests=6, not_modified=2),
    )
    record_sync(
        "metrics-site",
        SyncReport(unchanged=3, requests=4, not_modified=3, llm_calls=2, completed=False),
    )
    with _client() as client:
        text = client.get("/metrics").text
    site = {"source": "metrics-site"}
    assert {
        outcome: _sample("synopsis_source_sync_pages_total", {**site, "outcome": outcome})
        for outcome in ("unchanged", "changed", "added", "removed")
    } == {"unchanged": 5.0, "changed": 1.0, "added": 1.0, "removed": 1.0}
    assert _sample("synopsis_source_sync_requests_total", site) == 10.0
    assert _sample("synopsis_source_sync_not_modified_total", site) == 5.0
    assert _sample("synopsis_source_syncs_total", {**site, "result": "completed"}) == 1.0
    assert _sample("synopsis_source_syncs_total", {**site, "result": "incomplete"}) == 1.0
    assert _sample("synopsis_llm_calls_total", {"purpose": "summary"}) == summaries + 2
    assert 'synopsis_source_sync_pages_total{outcome="added",source="metrics-site"} 1.0' in text


class _Jobs:
    def __init__(self, counts: dict[str, int] | Exception) -> None:
        self.counts = counts

    def counts_by_state(self) -> dict[str, int]:
        if isinstance(self.counts, Exception):
            raise self.counts
        return self.counts


@pytest.mark.parametrize(
    ("jobs", "lines"),
    [
        (
            _Jobs({"queued": 2, "done": 5}),
            ['synopsis_jobs{state="done"} 5.0', 'synopsis_jobs{state="queued"} 2.0'],
        ),
        (_Jobs(weaviate.exceptions.WeaviateConnectionError("down")), []),
        (None, []),
    ],
)
def test_metrics_report_jobs_by_state_when_there_is_a_queue(
    jobs: _Jobs | None, lines: list[str]
) -> None:
    with _client() as client:
        if jobs is not None:
            client.app.state.jobs = jobs
        response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    found = [line for line in response.text.splitlines() if line.startswith("synopsis_jobs{")]
    assert found == lines


def test_openmetrics_when_the_scraper_asks_for_it() -> None:
    with _client() as client:
        response = client.get("/metrics", headers={"Accept": "application/openmetrics-text"})
    assert response.headers["content-type"].startswith("application/openmetrics-text")
    assert response.text.endswith("# EOF\n")


def test_multiprocess_metrics_add_up_across_processes(tmp_path: Path) -> None:
    """Two processes' counts in one directory, read by one scrape (as with --workers 2)."""
    directory = reset_multiprocess_dir(tmp_path / "metrics")
    (directory / "counter_999.db").write_bytes(b"stale")
    directory = reset_multiprocess_dir(directory)
    assert list(directory.iterdir()) == []
    # `record_ingest` takes any report of its protocol: an object with an ingest report's
    # counts (importing the pipeline for its `IngestReport` took seconds per process).
    count = (
        "from types import SimpleNamespace as Report\n"
        "from service.api.metrics import record_ingest\n"
        "usage = Report(prompt_tokens=0, output_tokens=0, load_seconds=0.0, prompt_seconds=0.0,"
        " output_seconds=0.0)\n"
        "record_ingest(Report(llm_calls=3, cached_summaries=1, model=usage))\n"
    )
    scrape = (
        "from litestar.datastructures import State\n"
        "from service.api.metrics import render\n"
        "print(render(State())[0].decode())\n"
    )
    env = {"PROMETHEUS_MULTIPROC_DIR": str(directory), "PATH": "/usr/bin:/bin"}
    for _ in range(2):
        subprocess.run([sys.executable, "-c", count], env=env, check=True)
    text = subprocess.run(
        [sys.executable, "-c", scrape], env=env, check=True, capture_output=True, text=True
    ).stdout
    assert 'synopsis_llm_calls_total{purpose="summary"} 6.0' in text
    assert "synopsis_summary_cache_hits_total 2.0" in text


def test_metrics_sync_periodically(monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[object] = []
    monkeypatch.setattr(metrics, "_SYNC_SECONDS", 0.01)
    monkeypatch.setattr(metrics, "sync_embedding_calls", synced.append)
    fake = FakeSynopsis()
    with _client(fake) as client:
        deadline = time.monotonic() + 5
        while not synced and time.monotonic() < deadline:
            client.get("/health")
            time.sleep(0.02)
    assert synced
    assert synced[0] is fake
