"""Server binaries built from their Go modules and cached by version.

Weaviate builds without cgo. Ollama needs cgo for its CPU engine, plus four headers
that Go's module zip leaves out: nlohmann/json (Debian `nlohmann-json3-dev`),
stb_image (Debian `libstb-dev`) and miniaudio, which we take from the Go module
`github.com/gen2brain/malgo` (it vendors the same single-file header).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from service.errors import BuildError
from service.settings import Settings
from service.stack.progress import Progress

__all__ = ["cpu_key", "ollama_binary", "weaviate_binary"]

WEAVIATE_MODULE = "github.com/weaviate/weaviate/cmd/weaviate-server"
OLLAMA_MODULE = "github.com/ollama/ollama"
MINIAUDIO_MODULE = "github.com/gen2brain/malgo@v0.11.24"
_SYSTEM_INCLUDE_DIRS = (Path("/usr/include"), Path("/usr/local/include"))
_SYSTEM_HEADERS = {
    "nlohmann/json.hpp": "nlohmann-json3-dev",
    "nlohmann/json_fwd.hpp": "nlohmann-json3-dev",
    "stb/stb_image.h": "libstb-dev",
}


def cpu_key() -> str:
    """A short hash of this CPU's feature flags: a native build is only valid where it matches."""
    try:
        flags = next(
            line
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("flags")
        )
    except (OSError, StopIteration):
        flags = "unknown"
    return hashlib.sha256(flags.encode()).hexdigest()[:12]


def weaviate_binary(settings: Settings, progress: Progress) -> Path:
    """Path of `weaviate-server` at the configured version, building it on first use."""
    target = (
        settings.stack.cache_dir
        / "bin"
        / f"weaviate-{settings.stack.weaviate_version}"
        / "weaviate-server"
    )
    if target.is_file():
        return target
    env = {"CGO_ENABLED": "0"}
    _go_install(
        f"{WEAVIATE_MODULE}@v{settings.stack.weaviate_version}",
        ["-trimpath", "-tags", "netgo"],
        env,
        target,
        progress,
    )
    return target


def ollama_binary(settings: Settings, progress: Progress) -> Path:
    """Path of `ollama` at the configured version, building it (cgo, CPU) on first use."""
    flavour = f"native-{cpu_key()}" if settings.stack.ollama_native_build else "generic"
    target = (
        settings.stack.cache_dir
        / "bin"
        / f"ollama-{settings.stack.ollama_version}-{flavour}"
        / "ollama"
    )
    if target.is_file():
        return target
    include_dir = _miniaudio_include_dir(settings, progress)
    _check_system_headers()
    cflags = ollama_cflags(native=settings.stack.ollama_native_build)
    env = {
        "CGO_ENABLED": "1",
        "CGO_CPPFLAGS": f"-I{include_dir}",
        "CGO_CFLAGS": cflags,
        "CGO_CXXFLAGS": cflags,
    }
    version_flag = f"-X github.com/ollama/ollama/version.Version={settings.stack.ollama_version}"
    _go_install(
        f"{OLLAMA_MODULE}@v{settings.stack.ollama_version}",
        ["-ldflags", version_flag],
        env,
        target,
        progress,
    )
    return target


def ollama_cflags(*, native: bool) -> str:
    """The C/C++ flags of Ollama's cgo build: tuned for this CPU when `native`.

    A native build leaves out AMX: with it, `__AMX_INT8__` is defined and ggml's CPU
    backend calls the AMX buffer type, whose source (`ggml-cpu/amx/`) holds no Go file,
    so `go install` never compiles it and the link fails on CPUs that have AMX.
    """
    if not native:
        return "-O3"
    return "-O3 -march=native -mno-amx-tile -mno-amx-int8 -mno-amx-bf16"


def _go() -> str:
    go = shutil.which("go")
    if go is None:
        raise BuildError("Go is needed to build the local stack's servers; install Go ≥ 1.24")
    return go


def _check_system_headers() -> None:
    missing = {
        package
        for header, package in _SYSTEM_HEADERS.items()
        if not any((d / header).is_file() for d in _SYSTEM_INCLUDE_DIRS)
    }
    if missing:
        raise BuildError(
            "building Ollama needs C++ headers from Debian packages: "
            f"apt-get install {' '.join(sorted(missing))}"
        )


def _miniaudio_include_dir(settings: Settings, progress: Progress) -> Path:
    include_dir = settings.stack.cache_dir / "include"
    header = include_dir / "miniaudio" / "miniaudio.h"
    if header.is_file():
        return include_dir
    progress(f"fetching miniaudio.h from Go module {MINIAUDIO_MODULE}")
    with tempfile.TemporaryDirectory() as scratch:
        result = subprocess.run(
            [_go(), "mod", "download", "-json", MINIAUDIO_MODULE],
            cwd=scratch,
            capture_output=True,
            text=True,
            check=False,
        )
    if result.returncode != 0:
        raise BuildError(
            f"go mod download {MINIAUDIO_MODULE} failed: {result.stdout}{result.stderr}"
        )
    source = Path(json.loads(result.stdout)["Dir"]) / "miniaudio.h"
    header.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, header)
    return include_dir


def _go_install(
    module: str, flags: list[str], env: dict[str, str], target: Path, progress: Progress
) -> None:
    """`go install` into a scratch GOBIN, then move the binary into place atomically."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as gobin:
        command = [_go(), "install", "-v", *flags, module]
        progress(f"building {module} (first run only; this takes minutes)")
        started = time.monotonic()
        process = subprocess.Popen(
            command,
            env={**os.environ, **env, "GOBIN": gobin},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=gobin,
        )
        tail: list[str] = []
        ticker = _Ticker(progress, module, started)
        ticker.start()
        try:
            assert process.stdout is not None
            for line in process.stdout:
                tail = [*tail[-40:], line.rstrip()]
                ticker.last_line = line.strip()
            code = process.wait()
        finally:
            ticker.stop()
        if code != 0:
            output = "\n".join(tail)
            raise BuildError(f"go install {module} failed (exit {code}):\n{output}")
        built = Path(gobin) / target.name
        if not built.is_file():
            raise BuildError(f"go install {module} produced no {target.name} binary")
        os.replace(built, target)
        progress(f"built {target.name} in {time.monotonic() - started:.0f} s → {target}")


class _Ticker(threading.Thread):
    """Reports the build's latest line every few seconds, so a long build shows life."""

    def __init__(self, progress: Progress, module: str, started: float) -> None:
        super().__init__(daemon=True)
        self._progress = progress
        self._module = module
        self._began = started
        self._done = threading.Event()
        self.last_line = ""

    def run(self) -> None:
        while not self._done.wait(15.0):
            elapsed = time.monotonic() - self._began
            self._progress(f"  … {elapsed:.0f} s, {self.last_line[:100]}")

    def stop(self) -> None:
        self._done.set()
        self.join()
