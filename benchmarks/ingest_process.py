"""`synopsis ingest` in a child process, for the benchmarks that watch an ingest from
outside (bench_first_search.py, bench_large_ingest.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import TracebackType

__all__ = ["IngestProcess"]


class IngestProcess:
    """`synopsis ingest SOURCES` into the collections prefixed `prefix`, started on entry
    and stopped (SIGTERM: the next ingest would finish its work) on exit. Its progress goes
    to a temporary file, not a pipe that nobody reads and that could fill and stall it."""

    def __init__(self, sources: list[str], prefix: str) -> None:
        self.command = [str(Path(sys.executable).with_name("synopsis")), "ingest", *sources]
        self.env = {**os.environ, "SYNOPSIS_COLLECTION_PREFIX": prefix}
        self.progress = ""
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in __exit__
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> IngestProcess:
        self._process = subprocess.Popen(
            self.command, env=self.env, stdout=subprocess.DEVNULL, stderr=self._log
        )
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._process is not None:
            self._process.send_signal(signal.SIGTERM)
            self._process.wait(timeout=120)
        self._log.seek(0)
        self.progress = self._log.read().decode("utf-8", errors="replace")
        self._log.close()

    @property
    def pid(self) -> int:
        assert self._process is not None, "not started"
        return self._process.pid

    def ended(self) -> bool:
        """True once the ingest exited on its own."""
        return self._process is not None and self._process.poll() is not None

    def tail(self, lines: int = 10) -> str:
        """The last lines of its progress (after exit)."""
        return "\n".join(self.progress.splitlines()[-lines:])
