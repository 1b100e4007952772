"""What the benchmark scripts share: machine facts and their sections of docs/benchmarks.md.

The scripts run as `uv run python benchmarks/bench_X.py` from the repository root, so
this directory is first on `sys.path` and they import this module as `report`.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path


def load_text() -> str:
    """The 1/5/15-minute load averages, for the record of a noisy shared machine."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def cpu_model() -> str:
    """The CPU's model name."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def write_section(path: Path, key: str, body: str) -> None:
    """Replace (or append) the section between `<!-- bench:key -->` markers of `path`."""
    begin, end = f"<!-- bench:{key} -->", f"<!-- /bench:{key} -->"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    block = f"{begin}\n{body.rstrip()}\n{end}"
    if begin in text and end in text:
        before, rest = text.split(begin, 1)
        after = rest.split(end, 1)[1]
        text = before + block + after
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
