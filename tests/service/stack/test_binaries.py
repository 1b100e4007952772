"""The flags of Ollama's cgo build, checked with the C compiler that build uses."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from service.stack.binaries import ollama_cflags

# A CPU with AMX, so that the check does not depend on the machine's own CPU.
AMX_CPU = "-march=sapphirerapids"


def _macros(flags: list[str]) -> set[str]:
    """The macros gcc defines for C compiled with `flags`."""
    compiler = shutil.which("gcc")
    if compiler is None:
        pytest.skip("gcc is not installed (the stack's build needs it)")
    result = subprocess.run(
        [compiler, *flags, "-dM", "-E", "-x", "c", "-"],
        input="",
        capture_output=True,
        text=True,
        check=True,
    )
    return {line.split()[1] for line in result.stdout.splitlines() if line.startswith("#define")}


def test_a_native_build_on_an_amx_cpu_leaves_amx_out_and_keeps_the_rest() -> None:
    """ggml's AMX sources hold no Go file, so `go install` would not link their calls."""
    flags = ollama_cflags(native=True).split()
    assert "-march=native" in flags
    on_amx = [AMX_CPU if flag == "-march=native" else flag for flag in flags]
    assert "__AMX_INT8__" in _macros([AMX_CPU])
    macros = _macros(on_amx)
    assert "__AMX_INT8__" not in macros
    assert {"__AVX512F__", "__AVX512VNNI__", "__AVX2__"} <= macros


def test_a_native_build_on_this_cpu_leaves_amx_out() -> None:
    assert "__AMX_INT8__" not in _macros(ollama_cflags(native=True).split())
