"""compose.yaml cannot run here (no container engine); check everything that can be checked."""

from __future__ import annotations

import http.server
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from service.api.crosssite import allowed_hosts, host_allowed
from service.api.security import check_bind, load_api_keys
from service.errors import ConfigurationError
from service.settings import ENV_PREFIX, Settings

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "compose.yaml"

# `${NAME}`, `${NAME:-default}` or `${NAME-default}`; `$$` is a literal dollar.
_VARIABLE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?-)(?P<default>[^}]*))?\}")
_SECRET_NAME = re.compile(r"(KEY|KEYS|TOKEN|SECRET|PASSWORD|PASSWORDS)$")
_PASSTHROUGH = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(:?-)?\}")
_TOKEN_SHAPES = re.compile(r"\b(sk-[A-Za-z0-9]{8,}|hf_[A-Za-z0-9]{8,}|gh[pousr]_[A-Za-z0-9]{8,})")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(loaded, dict)
    return loaded


def _services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    services = compose["services"]
    assert isinstance(services, dict)
    return services


def _environment(service: dict[str, Any]) -> dict[str, str]:
    environment = service.get("environment", {})
    # The mapping form only: the list form hides typos in the names from this test.
    assert isinstance(environment, dict)
    return {str(name): str(value) for name, value in environment.items()}


def _interpolate(value: str, environ: dict[str, str]) -> str:
    """Resolve compose variables the way `docker compose` does for the cases used here."""

    def resolve(match: re.Match[str]) -> str:
        name, op, default = match["name"], match["op"], match["default"] or ""
        if op == ":-":
            return environ.get(name) or default
        if op == "-":
            return environ.get(name, default)
        return environ.get(name, "")

    return _VARIABLE.sub(resolve, value).replace("$$", "$")


def _images(compose: dict[str, Any]) -> dict[str, str]:
    """Every image reference: `image:` of each service and `FROM` of each inline Dockerfile."""
    images: dict[str, str] = {}
    for name, service in _services(compose).items():
        if "image" in service:
            images[name] = service["image"]
        inline = service.get("build", {}).get("dockerfile_inline", "")
        for index, line in enumerate(re.findall(r"^FROM\s+(\S+)", inline, re.MULTILINE)):
            images[f"{name} (FROM #{index + 1})"] = line
    return images


def _tag(image: str) -> str:
    """The tag of `registry/path/name:tag`; empty when the reference has none."""
    last = image.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else ""


#: The services of the profile `cluster`: two more Weaviate nodes.
CLUSTER_NODES = ["weaviate-node2", "weaviate-node3"]


def _profile(service: dict[str, Any]) -> list[str]:
    profiles = service.get("profiles", [])
    assert isinstance(profiles, list)
    return profiles


def test_compose_is_a_mapping_with_the_four_services(compose: dict[str, Any]) -> None:
    services = _services(compose)
    default = sorted(name for name, service in services.items() if not _profile(service))
    assert default == ["ollama", "ollama-models", "synopsis", "weaviate"]
    assert {name: _profile(services[name]) for name in sorted(set(services) - set(default))} == {
        node: ["cluster"] for node in CLUSTER_NODES
    }


def test_every_image_is_pinned(compose: dict[str, Any]) -> None:
    images = _images(compose)
    assert sorted(images) == sorted(
        ["ollama", "ollama-models", "synopsis (FROM #1)", "weaviate", *CLUSTER_NODES]
    )
    for where, image in images.items():
        assert _tag(image) not in ("", "latest"), f"{where}: {image} is not pinned"


@pytest.mark.parametrize(
    ("service", "image"),
    [
        *(
            (node, f"cr.weaviate.io/semitechnologies/weaviate:{Settings().stack.weaviate_version}")
            for node in ["weaviate", *CLUSTER_NODES]
        ),
        ("ollama", f"ollama/ollama:{Settings().stack.ollama_version}"),
        ("ollama-models", f"ollama/ollama:{Settings().stack.ollama_version}"),
        ("synopsis (FROM #1)", "python:3.11-slim"),
    ],
)
def test_images_match_the_local_stack_versions(
    compose: dict[str, Any], service: str, image: str
) -> None:
    assert _images(compose)[service] == image


def test_every_synopsis_variable_is_a_settings_field(compose: dict[str, Any]) -> None:
    known = set(Settings.env_names().values())
    used = {
        name
        for service in _services(compose).values()
        for name in _environment(service)
        if name.startswith(ENV_PREFIX)
    }
    # Variables read from the caller's environment by interpolation count as well.
    used |= {
        match["name"]
        for match in _VARIABLE.finditer(COMPOSE.read_text())
        if match["name"].startswith(ENV_PREFIX)
    }
    assert used, "compose.yaml configures Synopsis through SYNOPSIS_* variables"
    assert sorted(used - known) == []


@pytest.mark.parametrize(
    ("variable", "raw", "resolved"),
    [
        ("SYNOPSIS_WEAVIATE_URL", "http://weaviate:8080", "http://weaviate:8080"),
        ("SYNOPSIS_WEAVIATE_GRPC_PORT", "50051", "50051"),
        ("SYNOPSIS_WEAVIATE_API_KEY", "${SYNOPSIS_WEAVIATE_API_KEY:-}", ""),
        ("SYNOPSIS_OLLAMA_URL", "http://ollama:11434", "http://ollama:11434"),
        ("SYNOPSIS_API_READ_KEYS", "${SYNOPSIS_API_READ_KEYS:-}", ""),
        ("SYNOPSIS_API_WRITE_KEYS", "${SYNOPSIS_API_WRITE_KEYS:-}", ""),
        ("SYNOPSIS_API_KEYS_FILE", "${SYNOPSIS_API_KEYS_FILE:-}", ""),
        ("SYNOPSIS_API_ALLOW_OPEN", "${SYNOPSIS_API_ALLOW_OPEN:-false}", "false"),
        ("SYNOPSIS_API_ALLOWED_HOSTS", "${SYNOPSIS_API_ALLOWED_HOSTS:-}", ""),
        ("SYNOPSIS_API_WORKERS", "${SYNOPSIS_API_WORKERS:-1}", "1"),
        ("SYNOPSIS_CHAT_MODEL", "${SYNOPSIS_CHAT_MODEL:-llama3.1}", "llama3.1"),
        ("SYNOPSIS_ANSWER_MODEL", "${SYNOPSIS_ANSWER_MODEL:-}", ""),
        (
            "SYNOPSIS_EMBEDDING_MODEL",
            "${SYNOPSIS_EMBEDDING_MODEL:-mxbai-embed-large}",
            "mxbai-embed-large",
        ),
    ],
)
def test_synopsis_service_environment(
    compose: dict[str, Any], variable: str, raw: str, resolved: str
) -> None:
    environment = _environment(_services(compose)["synopsis"])
    assert environment[variable] == raw
    assert _interpolate(raw, {}) == resolved


def test_synopsis_environment_loads_into_external_settings(compose: dict[str, Any]) -> None:
    environment = _environment(_services(compose)["synopsis"])
    settings = Settings.from_env({k: _interpolate(v, {}) for k, v in environment.items()})
    assert (settings.uses_local_weaviate, settings.uses_local_ollama) == (False, False)
    assert (settings.models.chat_model, settings.models.embedding_model) == (
        "llama3.1",
        "mxbai-embed-large",
    )
    # The local stack's default answer model is not pulled here: the chat model answers.
    assert settings.models.resolved_answer_model == "llama3.1"
    assert settings.external.weaviate_grpc_port == 50051


def test_models_step_pulls_the_models_synopsis_uses(compose: dict[str, Any]) -> None:
    services = _services(compose)
    pull = _environment(services["ollama-models"])
    uses = _environment(services["synopsis"])
    for variable in ("SYNOPSIS_CHAT_MODEL", "SYNOPSIS_ANSWER_MODEL", "SYNOPSIS_EMBEDDING_MODEL"):
        assert pull[variable] == uses[variable]
    command = " ".join(services["ollama-models"]["command"])
    assert command == (
        'ollama pull "$$SYNOPSIS_CHAT_MODEL" && ollama pull "$$SYNOPSIS_EMBEDDING_MODEL"'
        ' && { [ -z "$$SYNOPSIS_ANSWER_MODEL" ] || ollama pull "$$SYNOPSIS_ANSWER_MODEL"; }'
    )
    assert pull["OLLAMA_HOST"] == "ollama:11434"
    assert services["ollama-models"]["restart"] == "no"


@pytest.mark.parametrize(
    ("service", "probe"),
    [
        *(
            (node, "http://127.0.0.1:8080/v1/.well-known/ready")
            for node in ["weaviate", *CLUSTER_NODES]
        ),
        ("ollama", "list"),
    ],
)
def test_servers_have_healthchecks(compose: dict[str, Any], service: str, probe: str) -> None:
    healthcheck = _services(compose)[service]["healthcheck"]
    assert healthcheck["test"][0] == "CMD"
    assert healthcheck["test"][-1] == probe
    assert healthcheck["retries"] >= 3


@pytest.mark.parametrize(
    ("service", "conditions"),
    [
        (
            "synopsis",
            {
                "weaviate": "service_healthy",
                "weaviate-node2": "service_healthy",
                "weaviate-node3": "service_healthy",
                "ollama": "service_healthy",
                "ollama-models": "service_completed_successfully",
            },
        ),
        ("ollama-models", {"ollama": "service_healthy"}),
        ("weaviate-node2", {"weaviate": "service_healthy"}),
        ("weaviate-node3", {"weaviate": "service_healthy"}),
    ],
)
def test_depends_on_conditions(
    compose: dict[str, Any], service: str, conditions: dict[str, str]
) -> None:
    depends_on = _services(compose)[service]["depends_on"]
    assert {name: entry["condition"] for name, entry in depends_on.items()} == conditions
    # A service of an inactive profile is not defined: depending on it must be optional.
    services = _services(compose)
    optional = {name for name, entry in depends_on.items() if entry.get("required") is False}
    assert optional == {name for name in depends_on if _profile(services[name])}


def test_synopsis_keeps_uploads_waiting_for_their_job_in_a_named_volume(
    compose: dict[str, Any],
) -> None:
    synopsis = _services(compose)["synopsis"]
    assert _environment(synopsis)["SYNOPSIS_DATA_DIR"] == "/var/lib/synopsis"
    assert synopsis["volumes"] == ["synopsis-data:/var/lib/synopsis"]


def test_weaviate_keeps_its_data_in_a_named_volume(compose: dict[str, Any]) -> None:
    weaviate = _services(compose)["weaviate"]
    environment = _environment(weaviate)
    assert environment["PERSISTENCE_DATA_PATH"] == "/var/lib/weaviate"
    assert environment["DEFAULT_VECTORIZER_MODULE"] == "none"
    assert environment["ENABLE_MODULES"] == ""
    assert weaviate["volumes"] == ["weaviate-data:/var/lib/weaviate"]
    assert _services(compose)["ollama"]["volumes"] == ["ollama-models:/root/.ollama"]
    assert sorted(compose["volumes"]) == [
        "ollama-models",
        "synopsis-data",
        "weaviate-data",
        "weaviate-node2-data",
        "weaviate-node3-data",
    ]


def _weaviate_nodes(compose: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The environment of every Weaviate node, the default one (node1) first."""
    services = _services(compose)
    return {name: _environment(services[name]) for name in ["weaviate", *CLUSTER_NODES]}


def test_cluster_nodes_are_configured_like_the_single_node(compose: dict[str, Any]) -> None:
    nodes = _weaviate_nodes(compose)
    services = _services(compose)
    cluster_keys = {"CLUSTER_HOSTNAME", "CLUSTER_JOIN", "RAFT_JOIN", "RAFT_BOOTSTRAP_EXPECT"}
    shared = {k: v for k, v in nodes["weaviate"].items() if k not in cluster_keys}
    for name in CLUSTER_NODES:
        assert {k: v for k, v in nodes[name].items() if k not in cluster_keys} == shared
        for key in ("image", "command", "healthcheck", "expose", "restart"):
            assert services[name][key] == services["weaviate"][key], (name, key)
    # Each node its own volume: a copy per node is the point.
    volumes = [services[name]["volumes"] for name in ["weaviate", *CLUSTER_NODES]]
    assert volumes == [
        ["weaviate-data:/var/lib/weaviate"],
        ["weaviate-node2-data:/var/lib/weaviate"],
        ["weaviate-node3-data:/var/lib/weaviate"],
    ]


def test_cluster_nodes_join_node1(compose: dict[str, Any]) -> None:
    nodes = _weaviate_nodes(compose)
    hostnames = [environment["CLUSTER_HOSTNAME"] for environment in nodes.values()]
    assert hostnames == ["node1", "node2", "node3"]
    # Weaviate picks raft voters by substring match of the hostname in RAFT_JOIN.
    assert not any(a in b for a in hostnames for b in hostnames if a != b)
    # node1 bootstraps alone (the default stack is unchanged); the others join it as voters.
    assert nodes["weaviate"]["RAFT_BOOTSTRAP_EXPECT"] == "1"
    assert "CLUSTER_JOIN" not in nodes["weaviate"]
    for name in CLUSTER_NODES:
        environment = nodes[name]
        assert environment["CLUSTER_JOIN"] == "weaviate:7946"  # node1's gossip port
        assert environment["RAFT_JOIN"] == ",".join(f"{host}:8300" for host in hostnames)
        assert environment["RAFT_BOOTSTRAP_EXPECT"] == str(len(hostnames))


@pytest.mark.parametrize(
    ("environ", "factor", "read", "write"),
    [
        ({}, 1, "QUORUM", "QUORUM"),
        ({"SYNOPSIS_REPLICATION_FACTOR": "3"}, 3, "QUORUM", "QUORUM"),
        (
            {
                "SYNOPSIS_REPLICATION_FACTOR": "3",
                "SYNOPSIS_READ_CONSISTENCY": "ONE",
                "SYNOPSIS_WRITE_CONSISTENCY": "ALL",
            },
            3,
            "ONE",
            "ALL",
        ),
    ],
)
def test_synopsis_replication_comes_from_the_callers_environment(
    compose: dict[str, Any], environ: dict[str, str], factor: int, read: str, write: str
) -> None:
    environment = _environment(_services(compose)["synopsis"])
    settings = Settings.from_env({k: _interpolate(v, environ) for k, v in environment.items()})
    assert (settings.external.replication_factor, settings.external.read_consistency) == (
        factor,
        read,
    )
    assert settings.external.write_consistency == write


def test_synopsis_is_built_from_this_repository(compose: dict[str, Any]) -> None:
    synopsis = _services(compose)["synopsis"]
    assert synopsis["build"]["context"] == "."
    assert synopsis["command"] == ["synopsis", "serve"]
    inline = synopsis["build"]["dockerfile_inline"]
    assert "uv sync --frozen --no-dev" in inline
    copied = {
        source
        for line in re.findall(r"^COPY\s+(.+)$", inline, re.MULTILINE)
        for source in line.split()[:-1]
    }
    assert sorted(copied) == [
        "README.md",
        "loaders",
        "pyproject.toml",
        "service",
        "splitters",
        "uv.lock",
    ]
    for source in copied:
        assert (ROOT / source).exists(), f"the image copies {source}, which is missing"


def test_no_literal_secrets(compose: dict[str, Any]) -> None:
    for name, service in _services(compose).items():
        for variable, value in _environment(service).items():
            if _SECRET_NAME.search(variable):
                assert _PASSTHROUGH.fullmatch(value), (
                    f"{name}: {variable} must be passed through as ${{VAR:-}}, not {value!r}"
                )
    assert _TOKEN_SHAPES.findall(COMPOSE.read_text()) == []


@pytest.mark.parametrize(
    ("raw", "environ", "resolved"),
    [
        ("${A:-x}", {}, "x"),
        ("${A:-x}", {"A": ""}, "x"),
        ("${A-x}", {"A": ""}, ""),
        ("${A:-}", {"A": "set"}, "set"),
        ("${A}", {}, ""),
        ("$$A", {"A": "set"}, "$A"),
    ],
)
def test_interpolate_helper(raw: str, environ: dict[str, str], resolved: str) -> None:
    assert _interpolate(raw, environ) == resolved


def test_synopsis_listens_on_every_interface_of_its_container(compose: dict[str, Any]) -> None:
    synopsis = _services(compose)["synopsis"]
    environment = _environment(synopsis)
    settings = Settings.from_env({k: _interpolate(v, {}) for k, v in environment.items()})
    assert (settings.api.host, settings.api.port) == ("0.0.0.0", 8000)
    assert synopsis["ports"] == [f"{settings.api.port}:{settings.api.port}"]


def _container_settings(compose: dict[str, Any], environ: dict[str, str]) -> Settings:
    """The settings the synopsis container gets when compose runs in `environ`."""
    environment = _environment(_services(compose)["synopsis"])
    return Settings.from_env({k: _interpolate(v, environ) for k, v in environment.items()})


def test_without_keys_the_container_refuses_to_serve_an_open_api(compose: dict[str, Any]) -> None:
    settings = _container_settings(compose, {})
    refused = r"refusing to serve on 0\.0\.0\.0 without API keys"
    with pytest.raises(ConfigurationError, match=refused):
        check_bind(settings.api.host, load_api_keys(settings), settings)


@pytest.mark.parametrize(
    "environ",
    [
        {"SYNOPSIS_API_READ_KEYS": "r-key-1,r-key-2", "SYNOPSIS_API_WRITE_KEYS": "w-key"},
        {"SYNOPSIS_API_WRITE_KEYS": "w-key"},
        {"SYNOPSIS_API_ALLOW_OPEN": "true"},
    ],
)
def test_keys_or_an_explicit_opt_in_let_the_container_serve(
    compose: dict[str, Any], environ: dict[str, str]
) -> None:
    settings = _container_settings(compose, environ)
    check_bind(settings.api.host, load_api_keys(settings), settings)


@pytest.mark.parametrize(
    ("environ", "host", "served"),
    [
        ({}, "localhost:8000", True),  # the published port, on this machine
        ({}, "synopsis:8000", False),  # another container: only once named
        ({"SYNOPSIS_API_ALLOWED_HOSTS": "synopsis,docs.example.com"}, "synopsis:8000", True),
        ({"SYNOPSIS_API_ALLOWED_HOSTS": "synopsis,docs.example.com"}, "docs.example.com", True),
        ({"SYNOPSIS_API_ALLOWED_HOSTS": "synopsis"}, "attacker.example", False),
    ],
)
def test_the_container_serves_the_host_names_it_is_given(
    compose: dict[str, Any], environ: dict[str, str], host: str, served: bool
) -> None:
    settings = _container_settings(compose, environ)
    assert host_allowed(host, allowed_hosts(settings)) is served


def test_a_keys_file_passed_as_a_secret_is_read(compose: dict[str, Any], tmp_path: Path) -> None:
    secret = tmp_path / "synopsis-api-keys"
    secret.write_text("# mounted at /run/secrets/synopsis-api-keys\nread r-key\nwrite w-key\n")
    settings = _container_settings(compose, {"SYNOPSIS_API_KEYS_FILE": str(secret)})
    keys = load_api_keys(settings)
    assert repr(keys) == "ApiKeys(read=1, write=1)"
    check_bind(settings.api.host, keys, settings)


@pytest.mark.parametrize(("status", "exit_code"), [(200, 0), (503, 1)])
def test_synopsis_healthcheck_fails_unless_health_is_200(
    compose: dict[str, Any], status: int, exit_code: int
) -> None:
    """Run the healthcheck's own command against a stand-in server on the probed port."""
    healthcheck = _services(compose)["synopsis"]["healthcheck"]
    assert healthcheck["test"][:3] == ["CMD", "python", "-c"]
    assert healthcheck["retries"] >= 3
    code = healthcheck["test"][3]
    port = int(_environment(_services(compose)["synopsis"])["SYNOPSIS_API_PORT"])
    paths: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            paths.append(self.path)
            self.send_response(status)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    with http.server.HTTPServer(("127.0.0.1", 0), Handler) as server:
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        thread.start()
        try:
            probe = code.replace(f":{port}/", f":{server.server_port}/")
            assert probe != code, "the probe targets SYNOPSIS_API_PORT"
            result = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=False)
        finally:
            server.shutdown()
    assert (result.returncode, paths) == (exit_code, ["/health"])
