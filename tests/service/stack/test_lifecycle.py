"""The local stack's lifecycle on its own data dir and ports: up, status, down, up again,
a taken port, a stale pid file, and the `synopsis stack` commands."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from service.cli import main
from service.errors import PortInUseError
from service.settings import Settings
from service.stack import LocalStack
from service.stack.model_files import LOCAL_MODELS, model_files
from service.stack.progress import silent
from tests.support.stacks import IsolatedSettings


def _environment(settings: Settings) -> dict[str, str]:
    """The `SYNOPSIS_*` variables that reproduce `settings` in a CLI run."""
    values = {name: settings.value(name) for name in Settings.env_names()}
    return {
        Settings.env_names()[name]: str(value).lower() if isinstance(value, bool) else str(value)
        for name, value in values.items()
    }


def _cli(settings: Settings, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env=_environment(settings))
    return result.exit_code, result.stdout, result.stderr


def _stopped_lines(settings: Settings) -> list[str]:
    return [
        f"weaviate  stopped      http://127.0.0.1:{settings.stack.local_weaviate_port}",
        f"ollama    stopped      http://127.0.0.1:{settings.stack.local_ollama_port}",
    ]


@pytest.mark.integration
def test_up_status_down_up(isolated_settings: IsolatedSettings) -> None:
    # Not the default, so that the check below sees the setting reach the server.
    settings = isolated_settings(200).with_overrides(local_ollama_num_parallel=2)
    stack = LocalStack(settings)

    before = stack.status()
    assert (before.ready, before.weaviate.detail, before.ollama.detail) == (
        False,
        "stopped",
        "stopped",
    )
    assert _cli(settings, "stack", "status") == (3, "\n".join(_stopped_lines(settings)) + "\n", "")

    up = stack.up()
    assert up.ready
    assert (up.weaviate.url, up.ollama.url) == (
        f"http://127.0.0.1:{settings.stack.local_weaviate_port}",
        f"http://127.0.0.1:{settings.stack.local_ollama_port}",
    )
    assert (up.weaviate.detail, up.ollama.detail) == ("running", "running")
    assert (up.weaviate.managed, up.ollama.managed) == (True, True)
    assert up.weaviate.pid is not None
    assert up.ollama.pid is not None
    environ = Path(f"/proc/{up.ollama.pid}/environ").read_bytes().split(b"\0")
    assert b"OLLAMA_NUM_PARALLEL=2" in environ
    # The models were imported into this stack's own Ollama.
    tags = httpx.get(f"{up.ollama.url}/api/tags", timeout=10.0).json()
    names = {model["name"].removesuffix(":latest") for model in tags["models"]}
    assert names == {
        settings.models.chat_model,
        settings.models.resolved_answer_model,
        settings.models.embedding_model,
    }
    # Its weights are the cached file (`model_files` checks it against the pinned sha256),
    # linked into this Ollama's store rather than copied.
    blobs = settings.stack.data_dir / "ollama" / "models" / "blobs"
    model = LOCAL_MODELS[settings.models.chat_model]
    cached = model_files(settings, model, silent)[model.weights]
    assert (blobs / f"sha256-{model.weights_sha256}").samefile(cached)

    code, out, err = _cli(settings, "stack", "status")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"weaviate  running      {up.weaviate.url} pid {up.weaviate.pid}",
        f"ollama    running      {up.ollama.url} pid {up.ollama.pid}",
    ]

    # A second `up` finds the running servers instead of starting new ones.
    assert stack.up() == up

    assert stack.down() == ["ollama", "weaviate"]
    down = stack.status()
    assert (down.ready, down.weaviate.pid, down.ollama.pid) == (False, None, None)
    assert (down.weaviate.detail, down.ollama.detail) == ("stopped", "stopped")
    assert stack.down() == []
    assert _cli(settings, "stack", "down") == (0, "nothing was running\n", "")
    assert _cli(settings, "stack", "status")[0] == 3

    again = stack.up()
    assert again.ready
    assert again.weaviate.pid not in (None, up.weaviate.pid)
    assert again.ollama.pid not in (None, up.ollama.pid)
    assert _cli(settings, "stack", "down") == (0, "stopped: ollama, weaviate\n", "")


@pytest.mark.integration
@pytest.mark.parametrize(
    ("server", "port", "role", "setting"),
    [
        ("weaviate", "local_weaviate_port", "http", "SYNOPSIS_LOCAL_WEAVIATE_PORT"),
        (
            "weaviate",
            "local_weaviate_port+1",
            "gossip",
            "SYNOPSIS_LOCAL_WEAVIATE_PORT (it is derived from that port)",
        ),
        (
            "weaviate",
            "local_weaviate_port+3",
            "raft",
            "SYNOPSIS_LOCAL_WEAVIATE_PORT (it is derived from that port)",
        ),
        ("weaviate", "local_weaviate_grpc_port", "grpc", "SYNOPSIS_LOCAL_WEAVIATE_GRPC_PORT"),
        ("ollama", "local_ollama_port", "http", "SYNOPSIS_LOCAL_OLLAMA_PORT"),
    ],
)
def test_port_in_use_is_a_clear_error(
    isolated_settings: IsolatedSettings, server: str, port: str, role: str, setting: str
) -> None:
    # Only the server under test is local, so the error cannot come from the other one.
    settings = isolated_settings(300, weaviate=server == "weaviate", ollama=server == "ollama")
    field, _, shift = port.partition("+")
    taken_port = settings.value(field) + int(shift or 0)
    message = (
        f"{server} cannot start: port {taken_port} ({role}) on 127.0.0.1 is already in use by "
        f"another process; stop it or set {setting}"
    )
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", taken_port))
        taken.listen()

        with pytest.raises(PortInUseError) as caught:
            LocalStack(settings).up()
        assert (str(caught.value), caught.value.port) == (message, taken_port)
        assert not (settings.stack.data_dir / "run" / f"{server}.pid").exists()

        # The CLI shows the same error as one line after its progress line, and exits 1.
        stack = LocalStack(settings)
        starting = {
            "weaviate": f"Weaviate {settings.stack.weaviate_version} on {stack.weaviate_url}",
            "ollama": f"Ollama {settings.stack.ollama_version} on {stack.ollama_url}",
        }[server]
        assert _cli(settings, "stack", "up") == (
            1,
            "",
            f"starting {starting}\nError: {message}\n",
        )


def _stale_pid_file_content(case: str) -> str:
    if case == "dead process":
        process = subprocess.Popen(["true"])
        process.wait()  # reaped: its pid now names no process (until the kernel reuses it)
        return f"{process.pid}\n"
    if case == "someone else's process":
        # Alive, but not a weaviate-server: a reused pid must not be taken for ours.
        return f"{os.getpid()}\n"
    return "not a pid\n"


@pytest.mark.integration
@pytest.mark.parametrize("case", ["dead process", "someone else's process", "garbage"])
def test_stale_pid_file_is_handled(isolated_settings: IsolatedSettings, case: str) -> None:
    settings = isolated_settings(400, ollama=False)
    stack = LocalStack(settings)
    pid_file = settings.stack.data_dir / "run" / "weaviate.pid"
    pid_file.parent.mkdir(parents=True)
    pid_file.write_text(_stale_pid_file_content(case))

    status = stack.status().weaviate
    assert (status.running, status.pid, status.detail) == (False, None, "stopped")
    assert _cli(settings, "stack", "status")[0] == 3
    assert stack.down() == []

    started = stack.up().weaviate
    assert started.running
    assert pid_file.read_text() == f"{started.pid}\n"
    assert stack.down() == ["weaviate"]
    assert not pid_file.exists()


def test_cli_configuration_error_is_one_line() -> None:
    result = CliRunner().invoke(
        main, ["stack", "status"], env={"SYNOPSIS_LOCAL_WEAVIATE_PORT": "eighteen"}
    )
    assert (result.exit_code, result.stdout, result.stderr) == (
        1,
        "",
        "Error: SYNOPSIS_LOCAL_WEAVIATE_PORT='eighteen' is invalid: "
        "invalid literal for int() with base 10: 'eighteen'\n",
    )
