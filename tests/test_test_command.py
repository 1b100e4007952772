"""scripts/test.sh's own logic: which pytest runs it starts, where, and which exit code
it ends with. CI's verdict is this script's exit code, so a failure in any part that
it did not pass on (the corpus tests run in the background) would let a broken main land.

The script runs as written, with a stand-in `uv` first on PATH: it records each call
(its arguments, its nice value and its session's scheduling group) and exits with the
code the test gives the part; ruff and mypy pass.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "test.sh"
BESIDE = (
    "tests/loaders/test_python_docs.py",
    "tests/splitters/test_corpus.py",
    "tests/loaders/test_generators.py",
)

#: The stand-in: one JSON line per call; the exit code of a pytest part from the
#: environment (UNIT, STACK, CORPUS), 0 for anything else.
FAKE_UV = """#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
try:
    group = open("/proc/self/autogroup").read().strip()
except OSError:
    group = ""
with open(os.environ["CALLS"], "a") as calls:
    calls.write(json.dumps({"args": args, "nice": os.nice(0), "group": group,
                            "session": os.getsid(0)}) + "\\n")
if "pytest" not in args:
    sys.exit(0)
if "integration" in args:
    sys.exit(int(os.environ.get("STACK", "0")))
if "-n" not in args:  # the corpus tests beside: one process
    print("corpus tests ran")
    sys.exit(int(os.environ.get("CORPUS", "0")))
sys.exit(int(os.environ.get("UNIT", "0")))
"""


def _run(tmp_path: Path, **codes: int) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    uv = bin_dir / "uv"
    uv.write_text(FAKE_UV, encoding="utf-8")
    uv.chmod(0o755)
    calls = tmp_path / "calls.jsonl"
    calls.unlink(missing_ok=True)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "CALLS": str(calls),
        **{name: str(code) for name, code in codes.items()},
    }
    done = subprocess.run(
        ["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    recorded = [json.loads(line) for line in calls.read_text(encoding="utf-8").splitlines()]
    return done, recorded


def _pytest_calls(recorded: list[dict]) -> list[dict]:
    return [call for call in recorded if "pytest" in call["args"]]


def test_three_parts_run_and_the_corpus_files_run_once_at_the_lowest_priority(
    tmp_path: Path,
) -> None:
    done, recorded = _run(tmp_path)
    assert done.returncode == 0, done.stderr
    first, *rest = _pytest_calls(recorded)
    # The first part: every test without the stack but the three corpus files, on two workers.
    assert first["args"][first["args"].index("-m") + 1] == "not integration"
    assert "-n" in first["args"]
    ignored = [first["args"][i + 1] for i, a in enumerate(first["args"]) if a == "--ignore"]
    assert sorted(ignored) == sorted(BESIDE)
    [stack] = [call for call in rest if "integration" in call["args"]]
    [beside] = [call for call in rest if call is not stack]
    assert [a for a in beside["args"] if a.startswith("tests/")] == list(BESIDE)
    assert beside["args"][beside["args"].index("-m") + 1] == "not integration"
    # The integration tests at normal priority in the script's session; the corpus tests
    # in a session of their own, niced, and its scheduling group lowest where the kernel
    # groups by session.
    assert stack["nice"] == first["nice"]
    assert beside["nice"] == 19
    assert beside["session"] != stack["session"]
    if beside["group"]:
        assert beside["group"].endswith("nice 19"), beside["group"]
    # Their output is shown after the integration tests'.
    assert "corpus tests ran" in done.stdout


@pytest.mark.parametrize(
    ("codes", "expected"),
    [
        ({"CORPUS": 1}, 1),  # a corpus test failed beside passing integration tests
        ({"CORPUS": 5}, 1),  # no corpus test collected
        ({"STACK": 5}, 1),  # no integration test collected
        ({"UNIT": 5}, 1),
        ({"UNIT": 1}, 1),
        ({"STACK": 2}, 2),  # pytest's own code passes through
        ({"UNIT": 0, "STACK": 0, "CORPUS": 0}, 0),
    ],
)
def test_the_run_fails_when_any_part_fails_or_collects_nothing(
    tmp_path: Path, codes: dict[str, int], expected: int
) -> None:
    done, recorded = _run(tmp_path, **codes)
    assert done.returncode == expected, (done.stdout, done.stderr)
    assert len(_pytest_calls(recorded)) == 3  # every part ran, whichever failed
