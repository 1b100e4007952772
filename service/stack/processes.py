"""A server process the local stack owns: started detached, found again by pid file, stopped."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from service.errors import PortInUseError, StackError

__all__ = ["ServerProcess", "port_is_free"]


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True when nothing listens on `host:port` (we can bind it ourselves)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


@dataclass(frozen=True, kw_only=True)
class ServerProcess:
    """One server of the local stack, identified by its pid file and its binary name."""

    name: str
    binary_name: str
    run_dir: Path
    ports: dict[str, int]  # role → port, e.g. {"http": 18080, "grpc": 15051}
    port_settings: dict[str, str]  # role → the SYNOPSIS_* variable that sets it

    @property
    def pid_file(self) -> Path:
        return self.run_dir / f"{self.name}.pid"

    @property
    def log_file(self) -> Path:
        return self.run_dir / f"{self.name}.log"

    def pid(self) -> int | None:
        """The pid of our running server, or None. A stale pid file is removed."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        if _is_our_process(pid, self.binary_name):
            return pid
        self.pid_file.unlink(missing_ok=True)
        return None

    def start(
        self,
        argv: Sequence[str],
        *,
        env: dict[str, str],
        ready: Callable[[], bool],
        timeout: float,
    ) -> int:
        """Start the server detached and wait until `ready()`; return its pid."""
        existing = self.pid()
        if existing is not None:
            return existing
        self.check_ports()
        process = self.spawn(argv, env=env)
        self.wait_ready(process, ready=ready, timeout=timeout)
        return process.pid

    def check_ports(self) -> None:
        """Raise PortInUseError naming the first of our ports that another process holds."""
        for role, port in self.ports.items():
            if not port_is_free(port):
                raise PortInUseError(
                    f"{self.name} cannot start: port {port} ({role}) on 127.0.0.1 is already "
                    f"in use by another process; stop it or set {self.port_settings[role]}",
                    port=port,
                )

    def spawn(self, argv: Sequence[str], *, env: dict[str, str]) -> subprocess.Popen[bytes]:
        """Start the server detached and write its pid file; do not wait for it.

        `start` is this and `wait_ready`; the nodes of a cluster are all spawned before
        any is waited for, as none is ready before the others have joined it."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with self.log_file.open("ab") as log:
            process = subprocess.Popen(
                list(argv),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # survives the CLI that started it
            )
        self.pid_file.write_text(f"{process.pid}\n")
        return process

    def wait_ready(
        self, process: subprocess.Popen[bytes], *, ready: Callable[[], bool], timeout: float
    ) -> None:
        """Wait until `ready()`; raise StackError (and stop the server) if it exits first or
        is not ready within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            code = process.poll()
            if code is not None:
                self.pid_file.unlink(missing_ok=True)
                raise StackError(
                    f"{self.name} exited with code {code} while starting; "
                    f"last lines of {self.log_file}:\n{self.log_tail()}"
                )
            if ready():
                return
            time.sleep(0.25)
        self.stop()
        raise StackError(
            f"{self.name} was not ready after {timeout:.0f} s; "
            f"last lines of {self.log_file}:\n{self.log_tail()}"
        )

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the server (SIGTERM, then SIGKILL after `timeout`); False if it was not running."""
        pid = self.pid()
        if pid is None:
            return False
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.1)
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            while _alive(pid):
                time.sleep(0.05)
        self.pid_file.unlink(missing_ok=True)
        return True

    def log_tail(self, lines: int = 15) -> str:
        """The last lines of the server's log file."""
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


def _alive(pid: int) -> bool:
    # A child we started and that exited stays a zombie until reaped; treat it as dead.
    with contextlib.suppress(ChildProcessError):
        reaped, _ = os.waitpid(pid, os.WNOHANG)
        if reaped == pid:
            return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _is_our_process(pid: int, binary_name: str) -> bool:
    if not _alive(pid):
        return False
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
    except OSError:
        return False
    return Path(argv0.decode(errors="replace")).name == binary_name
