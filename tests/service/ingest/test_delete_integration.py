"""A delete killed with SIGKILL between its steps, on the real Weaviate: the next ingest
repairs it, whatever step it stopped at.

The stop point is deterministic: the deleting process replaces the store method of the
step with one that sends SIGKILL to its own process, so it dies exactly as that step
begins (after the steps before it were written), with no cleanup and no polling race.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.settings import Settings
from service.synopsis import Synopsis
from tests.support.documents import write_markdown
from tests.support.invariants import assert_invariants

pytestmark = pytest.mark.integration

PREFIX = "TestDeleteKill"

_SECTIONS = {
    "Install": "Run `pip install widget` to install it.",
    "Configure": "Set `WIDGET_HOME` to the settings directory.",
    "Run": "Start it with `widget serve`.",
    "Stop": "Press Ctrl-C to stop the server.",
    "Upgrade": "Run `pip install -U widget` for a new release.",
}
SECTIONS = len(_SECTIONS)

#: Dies as the step begins: SIGKILL to itself from inside the store method of that step.
_DELETE_AND_DIE = """
import os, signal, sys
from service.connections import connect_weaviate
from service.index.store import Store
from service.ingest.delete import delete_source
from service.settings import Settings

step, source = sys.argv[1], sys.argv[2]
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
setattr(Store, step, die)
settings = Settings.from_env()
client = connect_weaviate(settings)
delete_source(Store(client, prefix=settings.external.collection_prefix), source)
"""

#: The store method of each step, in the order a delete runs them.
STEPS = ("delete_summaries", "delete_originals", "delete_source_record")


def _kill_during_delete(synopsis: Synopsis, step: str, source: str) -> None:
    env = {**os.environ, "SYNOPSIS_COLLECTION_PREFIX": synopsis.settings.external.collection_prefix}
    done = subprocess.run(
        [sys.executable, "-c", _DELETE_AND_DIE, step, source],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -9, done.stderr.decode()


@pytest.fixture(scope="module")
def core(cheap_settings: Settings) -> Iterator[Synopsis]:
    """A Synopsis on collections of this module's own, with the smallest chat model (the
    summaries only need to exist); dropped afterwards."""
    synopsis = Synopsis.open(cheap_settings.with_overrides(collection_prefix=PREFIX))
    synopsis.store.drop()
    try:
        yield synopsis
    finally:
        synopsis.store.drop()
        synopsis.close()


@pytest.fixture
def guide(core: Synopsis, tmp_path: Path) -> Iterator[str]:
    """A small Markdown guide (one chunk per section), indexed; removed afterwards."""
    path = write_markdown(tmp_path / "guide.md", "Widget", _SECTIONS)
    report = core.ingest([str(path)])
    assert report.failed == []
    yield str(path)
    core.delete_source(str(path))


@pytest.mark.parametrize("step", STEPS)
def test_a_delete_killed_at_any_step_is_repaired_by_reingesting_the_same_content(
    core: Synopsis, guide: str, step: str
) -> None:
    chunks = assert_invariants(core.store).originals[guide]
    assert chunks >= SECTIONS

    _kill_during_delete(core, step, guide)

    record = core.store.source_record(guide)
    assert record is not None
    assert record.status == "deleting"  # marked before anything was removed
    report = core.ingest([guide])
    assert report.unchanged_sources == 0  # not skipped as unchanged: it is indexed again
    after = assert_invariants(core.store)
    assert after.originals[guide] == after.summaries[guide] == chunks
    record = core.store.source_record(guide)
    assert record is not None
    assert (record.status, record.chunks, record.pending) == ("complete", chunks, 0)


def test_a_delete_killed_before_its_last_step_is_finished_by_the_next_ingest(
    core: Synopsis, guide: str, tmp_path: Path
) -> None:
    _kill_during_delete(core, "delete_source_record", guide)
    other = write_markdown(tmp_path / "other.md", "Other", {"Note": "Nothing else."})
    try:
        core.ingest([str(other)])
        assert core.store.source_record(guide) is None
        found = assert_invariants(core.store)
        assert (found.originals[guide], found.summaries[guide]) == (0, 0)
    finally:
        core.delete_source(str(other))
