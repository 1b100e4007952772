"""A fuzz run over the API's OpenAPI document (schemathesis) on the real stack.

The app is `create_app`'s, on collections prefixed `TestApiFuzz` holding one small
indexed page (so searches find something), with `jobs_workers=0`: a fuzzed
`POST /documents` only queues its job, nothing runs the LLM for it; one request is sent
at a time, so no job slot or source lease is read back after a settle time
(`lease_settle_seconds=0`). Every operation of `/schema/openapi.json` is fuzzed with a
write key, and once more without any key, with data that fits the document (positive)
and data that does not (negative), checking every response with all of schemathesis'
checks: no 5xx (`not_a_server_error`), status codes, content types, headers and bodies
as the document declares them, invalid data rejected, valid data accepted.

`POST /ask` gets `ASK_EXAMPLES` examples per mode only (each one whose retrieval passes
calls the local LLM: the smallest model, briefly); every other operation `EXAMPLES` with the key
and `NO_KEY_EXAMPLES` without. Hypothesis drives the generation (schemathesis' pytest
plugin does not run on this pytest); a case is one request, shrinking included.

One check is narrowed, for three operations (`SEMANTIC_REFUSALS`): a `POST /documents`,
`POST /sources` or `PATCH /sources/{name}` that fits the document may still be refused
with a 400 for what no schema can say, a URL whose host the address policy refuses once
resolved (`UnsafeUrlError`: random hosts do not resolve), an uploaded file whose name
has no supported suffix (`field` `files[i]`), a source's location that is no allowed
directory (`field` `location`), crawl limits for a source that is not a site
(`crawl_depth`), an interval under a minute (`interval`) or a `group` without a
`version`; any other 400 to such a request fails the run, as schemathesis'
`positive_data_acceptance` would. The number of cases run per operation is printed at the
end (run with `-s`), and recorded in docs/reliability.md ("Fuzzing").
"""

from __future__ import annotations

import collections
import os
import shutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from litestar import Litestar
from schemathesis import GenerationMode
from schemathesis.python import asgi
from schemathesis.specs.openapi.checks import positive_data_acceptance

from service.api import create_app
from service.connections import connect_weaviate
from service.index.store import Store
from service.jobs import JobStore
from service.jobs.runner import upload_dir
from service.settings import Settings
from service.synopsis import Synopsis

pytestmark = pytest.mark.integration

PREFIX = "TestApiFuzz"
READ_KEY = "fuzz-read-key"
WRITE_KEY = "fuzz-write-key"
#: Cases per operation and generation mode; SYNOPSIS_FUZZ_BUDGET multiplies them all for a
#: longer run (`SYNOPSIS_FUZZ_BUDGET=4 uv run pytest -s -m integration <this file>`).
BUDGET = max(1, int(os.environ.get("SYNOPSIS_FUZZ_BUDGET", "1")))
EXAMPLES = 60 * BUDGET
ASK_EXAMPLES = 3 * BUDGET
NO_KEY_EXAMPLES = 10 * BUDGET
PAGE = """# Loops

## The for statement

Python's `for` statement iterates over the items of any sequence, in order:
`for word in ["cat", "window"]: print(word, len(word))`.
"""

#: Cases run, by (credential, operation): filled by the tests, printed at the end.
CASES: collections.Counter[tuple[str, str]] = collections.Counter()


def _drop(settings: Settings) -> None:
    """Drop the test collections, and the uploads of the jobs they held (never run)."""
    client = connect_weaviate(settings)
    try:
        jobs = JobStore(client, prefix=PREFIX)
        if client.collections.exists(jobs.jobs_name):
            for job_id in jobs.jobs.iterator(return_properties=["job_id"]):
                shutil.rmtree(
                    upload_dir(settings.stack.data_dir / "uploads", str(job_id.uuid)), True
                )
        Store(client, prefix=PREFIX).drop()
        jobs.drop()
    finally:
        client.close()


@pytest.fixture(scope="module")
def fuzz_app(
    cheap_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Litestar]:
    """The app on test collections with one indexed page; no job runs in it. Summaries and
    answers only need to exist (`cheap_settings`): the run checks the API's contract."""
    configured = cheap_settings.with_overrides(
        collection_prefix=PREFIX,
        jobs_workers=0,
        jobs_queue_size=1_000_000,
        jobs_per_key=1_000_000,
        api_read_keys=READ_KEY,
        api_write_keys=WRITE_KEY,
        # The name schemathesis' in-process client sends as Host.
        api_allowed_hosts="testserver",
        summary_timeout=max(cheap_settings.summaries.timeout, 600.0),
        # Each queued job takes a slot of its key and each delete a source lease, read back
        # 0.3 s after the write in case another process took it at the same moment. Here
        # one process sends one request at a time, so nothing can: no wait (0.3 s by
        # default, pinned by tests/service/index/test_replication.py).
        lease_settle_seconds=0.0,
    )
    _drop(configured)
    page = tmp_path_factory.mktemp("fuzz-docs") / "loops.md"
    page.write_text(PAGE, encoding="utf-8")
    with Synopsis.open(configured) as synopsis:
        report = synopsis.ingest([str(page)])
    assert report.sources == 1, report
    app = create_app(configured)
    try:
        yield app
    finally:
        asgi.shutdown_lifespans()  # closes the Synopsis schemathesis' client started
        _drop(configured)
        counts: dict[str, int] = collections.Counter()
        for (credential, _), count in CASES.items():
            counts[credential] += count
        print(f"\nfuzz cases run: {sum(CASES.values())} ({dict(counts)})")
        for (credential, operation), count in sorted(CASES.items()):
            print(f"  {credential:8} {operation:40} {count}")


@pytest.fixture(scope="module")
def api_schema(fuzz_app: Litestar) -> Any:
    """The app's own OpenAPI document, served by the app (requests go to it in-process)."""
    schema = schemathesis.openapi.from_asgi("/schema/openapi.json", fuzz_app)
    # Each run sends its own credential (a key, or none); schemathesis must not add or
    # mutate the declared bearer scheme itself, or a case it counts as missing the key
    # would be sent with it.
    schema.config.generation.update(with_security_parameters=False)
    return schema


def _fuzz(api_schema: Any, credential: str, headers: dict[str, str], examples: int) -> list[str]:
    """Fuzz every operation in both generation modes; the failures, one line each."""
    failures: list[str] = []
    for result in api_schema.get_all_operations():
        operation = result.ok()
        label = f"{operation.method.upper()} {operation.path}"
        count = min(examples, ASK_EXAMPLES) if operation.path == "/ask" else examples
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                _fuzzer(
                    operation,
                    mode=mode,
                    count=count,
                    name=f"{label} ({mode})",
                    credential=credential,
                    headers=headers,
                )()
            except Unsatisfiable:
                # No request can break a schema without parameters or body (GET /health)
                assert mode is GenerationMode.NEGATIVE, label
            except (Exception, BaseExceptionGroup) as exc:  # report every operation's failure
                lines = str(exc).strip().splitlines()
                failures.append(f"{label} ({mode}): {type(exc).__name__}: {lines[:12]}")
                print(f"\nFAILED {credential} {label} ({mode}):\n{exc}")
    return failures


#: The operations whose schema-valid requests may still be refused with a 400 for what no
#: schema can say, and which fields such a refusal may name (besides `UnsafeUrlError`, a
#: URL whose host the address policy refuses once resolved): an uploaded file's name
#: without a supported suffix; a source's location that is no allowed directory or not
#: one (the fuzz app allows none), crawl limits given for a source that is not a site, a
#: sync interval (a duration such as "6h") under the one-minute minimum, or a group of
#: versions given without a version (field `version`).
SEMANTIC_REFUSALS: dict[str, Callable[[str], bool]] = {
    "/documents": lambda field: field.startswith("files"),
    "/sources": lambda field: field in ("location", "crawl_depth", "interval", "version"),
    # PATCH: an edit of a registered source (none is registered here: 404 before any 400)
    "/sources/{name}": lambda field: field in ("interval", "version"),
}


def _fuzzer(
    operation: Any,
    *,
    mode: GenerationMode,
    count: int,
    name: str,
    credential: str,
    headers: dict[str, str],
) -> Any:
    """A Hypothesis test of `count` cases of `operation` in `mode`, each sent and checked."""

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Any) -> None:
        CASES[credential, name] += 1
        narrowed = (
            operation.method.upper() in ("POST", "PATCH") and operation.path in SEMANTIC_REFUSALS
        )
        if not (mode is GenerationMode.POSITIVE and narrowed):
            case.call_and_validate(headers=headers)
            return
        response = case.call_and_validate(
            headers=headers, excluded_checks=[positive_data_acceptance]
        )
        if response.status_code == 400:  # only the refusals the document cannot express
            body = response.json()
            refusable = SEMANTIC_REFUSALS[operation.path]
            # A limit the server's settings set (SYNOPSIS_API_MAX_CRAWL_PAGES) is no schema's.
            settings_refusals = ("UnsafeUrlError", "RequestLimitError")
            assert body["error"] in settings_refusals or refusable(body.get("field") or ""), body

    return run


def test_fuzz_with_a_write_key(api_schema: Any) -> None:
    failures = _fuzz(api_schema, "write", {"Authorization": f"Bearer {WRITE_KEY}"}, EXAMPLES)
    assert failures == []


def test_fuzz_without_a_key(api_schema: Any) -> None:
    assert _fuzz(api_schema, "none", {}, NO_KEY_EXAMPLES) == []


def test_every_operation_was_fuzzed(api_schema: Any) -> None:
    """Runs after the fuzz tests (file order): each operation got cases in both modes."""
    operations = {
        f"{result.ok().method.upper()} {result.ok().path}"
        for result in api_schema.get_all_operations()
    }
    fuzzed = {operation.rsplit(" (", 1)[0] for _, operation in CASES}
    assert fuzzed == operations
