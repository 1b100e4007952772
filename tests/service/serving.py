"""`synopsis serve` as a real process, for the tests that need one: a free loopback port,
the start (in its own process group, so that a kill reaches uvicorn's workers and what
they started), the wait for /health, and the stop."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import httpx

__all__ = ["IN_PROCESS_URL", "free_port", "kill_group", "start_serve", "wait_healthy"]

SYNOPSIS = str(Path(sys.executable).with_name("synopsis"))
#: The base URL of an in-process test client (`TestClient(app, base_url=IN_PROCESS_URL)`):
#: a loopback name, which the API serves by default; Litestar's own, testserver.local, is
#: not one (service/api/crosssite.py).
IN_PROCESS_URL = "http://127.0.0.1:8000"


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_serve(
    port: int, env: Mapping[str, str], log: Path, options: Sequence[str] = ()
) -> subprocess.Popen[bytes]:
    """`synopsis serve --port PORT OPTIONS` with `env` added to this environment; its
    output is appended to `log`."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [SYNOPSIS, "serve", "--port", str(port), *options],
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_healthy(
    base_url: str, process: subprocess.Popen[bytes], log: Path, *, seconds: float = 180
) -> None:
    """Return once `base_url`/health answers 200; fail with the log when the process
    exits first or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"serve exited {process.returncode}:\n{log.read_text()[-4000:]}")
        try:
            if httpx.get(f"{base_url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise AssertionError(
        f"serve did not answer /health in {seconds:g} s:\n{log.read_text()[-4000:]}"
    )


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the server's process group, if it still runs (the cleanup of a test)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
