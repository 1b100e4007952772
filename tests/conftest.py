"""Shared fixtures: the test stack's settings and clients, isolated throwaway stacks, and
the Python docs corpus.

Integration tests run against the stack that `Settings.from_env()` describes: the local
stack by default (started on demand), or external servers when CI sets
`SYNOPSIS_WEAVIATE_URL` / `SYNOPSIS_OLLAMA_URL`.

`corpus` tests share one load of the 530-page Python 3.11 HTML docs (`python_docs`): it
takes minutes, so it happens once per session, and `-m "not corpus"` skips it.

Which chat model a test runs (a summary or an answer is seconds of CPU per call, more
for a larger model):

- `settings`: the default models, as a user gets them. Use it where the default model's
  own text is the point, on a short document (tests/service/test_default_model_integration.py:
  its summaries through the guard, `summaries`-mode search, an answer), so that a slower
  default model costs a few calls, not the suite's hundreds.
- `core_settings` (tests/service/conftest.py): the shared control-flow ingest (`core`),
  written by the smallest local chat model (`SMALLEST_CHAT_MODEL`) whatever the default,
  with the default guard and lengths: real summaries and answers, which the guard's own
  test, the search, CLI, `ask` and page tests read.
- `cheap_settings` (or `cheap_model_settings(settings)` on settings a test built, and
  `model_env(...)` for a `synopsis serve` subprocess): the smallest local chat model for
  summaries and answers, short replies, the summary guard off. Use it where summaries
  and answers only need to exist: jobs, faults, workers, hostile input, fuzzing, the
  cluster, the HTTP retriever, the page's upload, the evaluation runner. Such a test
  asserts nothing about the wording or a ranking that reads it.

`SMALLEST_CHAT_MODEL`, `cheap_model_settings` and `model_env` are in
tests/support/models.py.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import weaviate

from service.connections import connect_weaviate, ensure_stack, ollama_base_url
from service.errors import SynopsisError
from service.index.schema import delete_collections
from service.settings import Settings
from service.stack import LocalStack
from tests.support.corpus import PYTHON_DOCS, LoadedCorpus, load_python_docs, shared_python_docs
from tests.support.models import SMALLEST_CHAT_MODEL, cheap_model_settings
from tests.support.stacks import IsolatedSettings

#: Set (e.g. to 0.8), every chat reply of the run is sampled at this temperature with a
#: random seed, through a proxy in front of the stack's Ollama: a run on summaries and
#: answers other than this machine's, to check that no test depends on the model's wording
#: (docs/testing.md).
TEMPERATURE_VARIABLE = "SYNOPSIS_TEST_CHAT_TEMPERATURE"
#: The chat requests sampled that way in this session, per model and reply limit (the
#: run's summary lists them: a run in which none was sampled checked nothing).
_SAMPLED: Counter[str] = Counter()


#: How long the suite's processes wait after writing a source lease, a job slot or a job
#: claim before reading it back (`lease_settle_seconds`; the product's default, 0.3 s, is
#: pinned by tests/service/index/test_replication.py). The wait separates takers writing
#: the same one at the very same moment: Weaviate lets both writes pass, the last one
#: stays, and each taker learns from the read-back whether it holds it. The integration
#: tests take each one alone (one process, one job worker), so they do without the wait
#: (an integration run slept 73.4 s in these files with it, 22.0 s without: most of the
#: rest is polling for a lease another holder has; docs/testing.md), except where takers
#: meet on purpose:
#: tests/service/ingest/test_source_locks_integration.py sets the default again, and the
#: job and conversation stores that tests build beside an app (`JobStore`,
#: `ConversationStore`) keep their own default; `synopsis serve` and CLI subprocesses
#: read the environment, not these settings.
ONE_TAKER_SETTLE_SECONDS = 0.0


@pytest.fixture(scope="session")
def settings() -> Iterator[Settings]:
    """Settings of the shared test stack, started if it is local and not running (leases
    read back at once: `ONE_TAKER_SETTLE_SECONDS`)."""
    settings = Settings.from_env().with_overrides(lease_settle_seconds=ONE_TAKER_SETTLE_SECONDS)
    ensure_stack(settings)
    before = _collections(settings)
    try:
        yield from _sampled_or_as_is(settings)
    finally:
        if not os.environ.get("SYNOPSIS_TEST_KEEP_COLLECTIONS"):
            _drop_test_collections(settings, before)


#: Every collection the tests create on the shared stack is named with a prefix that
#: starts with this (`TestCore`, `TestApiJobs`, …).
TEST_COLLECTION_PREFIX = "Test"


def _collections(settings: Settings) -> set[str]:
    client = connect_weaviate(settings)
    try:
        return set(client.collections.list_all(simple=True))
    finally:
        client.close()


def _drop_test_collections(settings: Settings, before: set[str]) -> None:
    """Drop the test collections this session created on the shared stack that a test's
    own drop left behind (conversations, job queues, registries of the API tests): a
    developer's stack does not collect them run after run. Collections that were there
    before the session, or not named as a test's, are never touched."""
    try:
        client = connect_weaviate(settings)
    except SynopsisError as error:  # a test left the stack down: nothing to clean
        print(f"\ntest collections not dropped: {error}", file=sys.stderr)
        return
    try:
        created = set(client.collections.list_all(simple=True)) - before
        delete_collections(client, [n for n in created if n.startswith(TEST_COLLECTION_PREFIX)])
    finally:
        client.close()


def _sampled_or_as_is(settings: Settings) -> Iterator[Settings]:
    temperature = os.environ.get(TEMPERATURE_VARIABLE)
    if not temperature:
        yield settings
        return
    from tests.service.holds import ollama_gate, sampled  # noqa: PLC0415

    with ollama_gate(settings.resolved_ollama_url) as gate:
        gate.rewrite = sampled(float(temperature), _SAMPLED)
        # Subprocesses and the in-process CLI read the environment.
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("SYNOPSIS_OLLAMA_URL", gate.url)
            yield settings.with_overrides(ollama_url=gate.url)


@pytest.fixture(scope="session")
def smallest_model(settings: Settings) -> str:
    """`SMALLEST_CHAT_MODEL`, created in the shared stack's Ollama if the default models
    do not include it."""
    LocalStack(settings).import_models([SMALLEST_CHAT_MODEL])
    return SMALLEST_CHAT_MODEL


@pytest.fixture(scope="session")
def cheap_settings(settings: Settings, smallest_model: str) -> Settings:
    """The shared stack's settings with `cheap_model_settings`."""
    return cheap_model_settings(settings)


@pytest.fixture
def weaviate_client(settings: Settings) -> Iterator[weaviate.WeaviateClient]:
    """A connected client of the shared stack's Weaviate, closed after the test."""
    client = connect_weaviate(settings)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def ollama_url(settings: Settings) -> str:
    """Base URL of the shared stack's Ollama."""
    return ollama_base_url(settings)


@pytest.fixture
def isolated_settings(tmp_path: Path) -> Iterator[IsolatedSettings]:
    """A factory of settings for separate local stacks; every one is stopped afterwards.

    `isolated_settings(offset, weaviate=True, ollama=True)`: components switched off are
    pointed at the shared stack's URLs (which need not be running), so `LocalStack`
    leaves them alone.
    """
    created: list[Settings] = []
    base = Settings.from_env().with_overrides(lease_settle_seconds=ONE_TAKER_SETTLE_SECONDS)

    def make(offset: int, *, weaviate: bool = True, ollama: bool = True) -> Settings:
        isolated = base.with_overrides(
            data_dir=tmp_path / f"stack-{offset}",
            weaviate_url="" if weaviate else f"http://127.0.0.1:{base.stack.local_weaviate_port}",
            ollama_url="" if ollama else base.resolved_ollama_url,
            local_weaviate_port=base.stack.local_weaviate_port + offset,
            local_weaviate_grpc_port=base.stack.local_weaviate_grpc_port + offset,
            local_ollama_port=base.stack.local_ollama_port + offset,
        )
        created.append(isolated)
        return isolated

    yield make
    for isolated in created:
        LocalStack(isolated).down()
        # Keep the logs, drop the models (links to the cache, or copies where a link
        # was refused).
        shutil.rmtree(isolated.stack.data_dir / "ollama", ignore_errors=True)


@pytest.fixture(scope="session")
def python_docs(tmp_path_factory: pytest.TempPathFactory) -> LoadedCorpus:
    """The whole Python docs, loaded once per run; tests must not modify them. Under
    pytest-xdist the first worker that asks loads them and the others read its copy
    (`shared_python_docs`), rather than each worker loading them at the same time."""
    if not PYTHON_DOCS.is_dir():
        pytest.skip(f"{PYTHON_DOCS} is absent (install Debian's python3.11-doc)")
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return load_python_docs()
    # The workers' base directories share this parent, which is new for each run.
    return shared_python_docs(tmp_path_factory.getbasetemp().parent / "python-docs.pickle")


# -- the run must end ---------------------------------------------------------------------

#: How long the finished run waits for threads the tests left running.
_THREAD_GRACE_SECONDS = 60.0
#: Set when such threads were still there: the process then ends at unconfigure.
_LEFT_THREADS = pytest.StashKey[bool]()


def _threads_left() -> list[threading.Thread]:
    """Threads that would keep the interpreter from exiting (alive, not daemon, not main)."""
    main = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main and not t.daemon and t.is_alive()]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A non-daemon thread left by a test would hang the process after the summary (CI
    would time out with every test passed): wait a while, then name it, with its stack,
    and fail the run."""
    deadline = time.monotonic() + _THREAD_GRACE_SECONDS
    for thread in _threads_left():
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    left = _threads_left()
    if not left:
        return
    frames = sys._current_frames()
    for thread in left:
        frame = frames.get(thread.ident or -1)
        stack = "".join(traceback.format_stack(frame)) if frame is not None else ""
        print(f"\nthread left running by the tests: {thread.name}\n{stack}", file=sys.stderr)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
    session.config.stash[_LEFT_THREADS] = True


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """With `SYNOPSIS_TEST_CHAT_TEMPERATURE`: how many chat requests were sampled."""
    temperature = os.environ.get(TEMPERATURE_VARIABLE)
    if temperature:
        counted = ", ".join(f"{model}: {n}" for model, n in sorted(_SAMPLED.items()))
        terminalreporter.write_line(
            f"chat requests sampled at temperature {temperature}: "
            f"{sum(_SAMPLED.values())} ({counted or 'none'})"
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    """End the process now if such threads are still there (they were reported above)."""
    if config.stash.get(_LEFT_THREADS, False):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(int(pytest.ExitCode.TESTS_FAILED))
