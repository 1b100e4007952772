"""Every notebook under notebooks/ runs top to bottom on the real stack, without errors."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from service.connections import connect_weaviate
from service.index.store import Store
from service.settings import Settings
from tests.support.models import model_env

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
#: The collection prefix the notebooks use; dropped after each run even if a cell failed.
NOTEBOOK_PREFIX = "Notebook"
#: Per cell: ingesting or answering can take minutes on a busy CPU.
CELL_TIMEOUT = 900
#: On a CPU shared with other work, a summary request can wait in Ollama's queue for
#: minutes; the default timeout would then retry it from the back of the queue. The
#: notebook checks the flow, not latency (unless the caller sets the variable).
SUMMARY_TIMEOUT = "600"


def test_there_are_notebooks() -> None:
    assert [path.name for path in NOTEBOOKS] == ["walkthrough.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebooks_are_committed_without_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code
    assert [(cell.outputs, cell.execution_count) for cell in code] == [([], None)] * len(code)


@pytest.mark.integration
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_runs_top_to_bottom(
    path: Path, cheap_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The kernel inherits this process's environment, so Settings.from_env() sees it.
    monkeypatch.setenv(
        "SYNOPSIS_SUMMARY_TIMEOUT", os.environ.get("SYNOPSIS_SUMMARY_TIMEOUT", SUMMARY_TIMEOUT)
    )
    # The test checks that every cell runs; what the model writes is the walkthrough's
    # reader's to see, not the test's: the smallest model, briefly (`cheap_settings`).
    for name, value in model_env(cheap_settings).items():
        monkeypatch.setenv(name, value)
    notebook = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",  # jupyter_client runs it with this interpreter (the venv)
        resources={"metadata": {"path": str(path.parent)}},
    )
    try:
        client.execute()  # raises CellExecutionError, naming the cell, on any error
    finally:
        _drop_notebook_collections(cheap_settings)


def _drop_notebook_collections(settings: Settings) -> None:
    client = connect_weaviate(settings.with_overrides(collection_prefix=NOTEBOOK_PREFIX))
    try:
        store = Store(client, prefix=NOTEBOOK_PREFIX)
        if store.exists():
            store.drop()
    finally:
        client.close()
