"""The Python one-liners inside the shell scripts run against today's code.

The quick start reads the settings through `python -c '…'`; when the settings moved into
sections, its `Settings.from_env().data_dir` broke the quick start after the servers had
started, and no test ran it. Each snippet runs here as the script runs it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = [*sorted(Path("scripts").glob("*.sh")), Path(".ci/run")]
SNIPPET = re.compile(r"python -c '([^']+)'")


def _snippets() -> list[tuple[str, str]]:
    found = []
    for script in SCRIPTS:
        for code in SNIPPET.findall(script.read_text(encoding="utf-8")):
            found.append((str(script), code))
    return found


def test_the_scripts_hold_snippets() -> None:
    assert any(script == "scripts/quickstart.sh" for script, _ in _snippets())


@pytest.mark.parametrize(("script", "code"), _snippets())
def test_each_snippet_runs(script: str, code: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, f"{script}: {code}\n{done.stderr}"
    assert done.stdout.strip()
