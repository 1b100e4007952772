"""`LocalStack`: the embedded Weaviate and Ollama that run when nothing external is configured.

Both servers listen on loopback, keep their data under `settings.data_dir`, and run
detached from the command that started them; pid files in `data_dir/run` find them
again. Components configured as external (`SYNOPSIS_WEAVIATE_URL`,
`SYNOPSIS_OLLAMA_URL`) are left alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import httpx

from service.settings import Settings
from service.stack.binaries import ollama_binary, weaviate_binary
from service.stack.models import ensure_models
from service.stack.processes import ServerProcess
from service.stack.progress import Progress, silent

__all__ = ["ComponentStatus", "LocalStack", "StackStatus"]

_HOST = "127.0.0.1"


@dataclass(frozen=True, kw_only=True)
class ComponentStatus:
    """What one component of the stack is doing."""

    name: str
    url: str
    managed: bool  # True: run by this stack; False: external, configured by URL
    running: bool
    pid: int | None = None
    detail: str = ""


@dataclass(frozen=True, kw_only=True)
class StackStatus:
    """The state of Weaviate and Ollama as this stack sees them."""

    weaviate: ComponentStatus
    ollama: ComponentStatus

    @property
    def ready(self) -> bool:
        return self.weaviate.running and self.ollama.running


class LocalStack:
    """Builds (once), starts, inspects and stops the local Weaviate and Ollama."""

    def __init__(self, settings: Settings, *, progress: Progress = silent) -> None:
        self.settings = settings
        self._progress = progress
        run_dir = settings.data_dir / "run"
        port = settings.local_weaviate_port
        self.weaviate = ServerProcess(
            name="weaviate",
            binary_name="weaviate-server",
            run_dir=run_dir,
            # Weaviate's cluster ports are derived from its HTTP port so that two
            # stacks with different ports never collide.
            ports={
                "http": port,
                "grpc": settings.local_weaviate_grpc_port,
                "gossip": port + 1,
                "data": port + 2,
                "raft": port + 3,
                "raft rpc": port + 4,
            },
            port_settings={
                "http": "SYNOPSIS_LOCAL_WEAVIATE_PORT",
                "grpc": "SYNOPSIS_LOCAL_WEAVIATE_GRPC_PORT",
                **{
                    role: "SYNOPSIS_LOCAL_WEAVIATE_PORT (it is derived from that port)"
                    for role in ("gossip", "data", "raft", "raft rpc")
                },
            },
        )
        self.ollama = ServerProcess(
            name="ollama",
            binary_name="ollama",
            run_dir=run_dir,
            ports={"http": settings.local_ollama_port},
            port_settings={"http": "SYNOPSIS_LOCAL_OLLAMA_PORT"},
        )

    @property
    def weaviate_url(self) -> str:
        return f"http://{_HOST}:{self.settings.local_weaviate_port}"

    @property
    def ollama_url(self) -> str:
        return f"http://{_HOST}:{self.settings.local_ollama_port}"

    def build(self) -> None:
        """Build or find the binaries of the local components (cached by version)."""
        if self.settings.uses_local_weaviate:
            weaviate_binary(self.settings, self._progress)
        if self.settings.uses_local_ollama:
            ollama_binary(self.settings, self._progress)

    def up(self) -> StackStatus:
        """Start what is local and not yet running, import the models, and return the status."""
        if self.settings.uses_local_weaviate:
            self._start_weaviate()
        if self.settings.uses_local_ollama:
            self._start_ollama()
            with httpx.Client(base_url=self.ollama_url, timeout=30.0) as client:
                ensure_models(
                    self.settings,
                    client,
                    [self.settings.chat_model, self.settings.embedding_model],
                    self._progress,
                )
        return self.status()

    def down(self) -> list[str]:
        """Stop the local servers; return the names of those that were running."""
        stopped = []
        for server in (self.ollama, self.weaviate):
            if server.stop():
                stopped.append(server.name)
        return stopped

    def status(self) -> StackStatus:
        """Report each component: local or external, running or not."""
        return StackStatus(
            weaviate=self._component(
                "weaviate",
                self.settings.weaviate_url or self.weaviate_url,
                self.weaviate if self.settings.uses_local_weaviate else None,
                "/v1/.well-known/ready",
            ),
            ollama=self._component(
                "ollama",
                self.settings.ollama_url or self.ollama_url,
                self.ollama if self.settings.uses_local_ollama else None,
                "/api/version",
            ),
        )

    def _component(
        self, name: str, url: str, server: ServerProcess | None, probe: str
    ) -> ComponentStatus:
        answering = _answers(url + probe)
        if server is None:
            detail = "external" + ("" if answering else ", not answering")
            return ComponentStatus(
                name=name, url=url, managed=False, running=answering, detail=detail
            )
        pid = server.pid()
        if pid is None:
            detail = "stopped" + (" (but something else answers on its port)" if answering else "")
        else:
            detail = "running" if answering else "started, not ready"
        return ComponentStatus(
            name=name,
            url=url,
            managed=True,
            running=pid is not None and answering,
            pid=pid,
            detail=detail,
        )

    def _start_weaviate(self) -> None:
        if self.weaviate.pid() is not None:
            return
        binary = weaviate_binary(self.settings, self._progress)
        data = self.settings.data_dir / "weaviate"
        data.mkdir(parents=True, exist_ok=True)
        ports = self.weaviate.ports
        env = {
            **_base_env(),
            "PERSISTENCE_DATA_PATH": str(data),
            "DEFAULT_VECTORIZER_MODULE": "none",
            "ENABLE_MODULES": "",
            "DISABLE_TELEMETRY": "true",
            "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "true",
            "QUERY_DEFAULTS_LIMIT": "25",
            "GRPC_PORT": str(ports["grpc"]),
            # The raft node id is stored in the data directory: the hostname must not change.
            "CLUSTER_HOSTNAME": "synopsis-local",
            "CLUSTER_IN_LOCALHOST": "true",
            "CLUSTER_BIND_ADDR": _HOST,
            "CLUSTER_ADVERTISE_ADDR": _HOST,
            "CLUSTER_GOSSIP_BIND_PORT": str(ports["gossip"]),
            "CLUSTER_DATA_BIND_PORT": str(ports["data"]),
            "RAFT_PORT": str(ports["raft"]),
            "RAFT_INTERNAL_RPC_PORT": str(ports["raft rpc"]),
            "RAFT_BOOTSTRAP_EXPECT": "1",
            # One node on loopback: no need to wait out five election timeouts at start.
            "RAFT_TIMEOUTS_MULTIPLIER": "1",
            "GO_PROFILING_DISABLE": "true",
            "GOMEMLIMIT": self.settings.weaviate_memory_limit,
        }
        self._progress(f"starting Weaviate {self.settings.weaviate_version} on {self.weaviate_url}")
        self.weaviate.start(
            [str(binary), "--host", _HOST, "--port", str(ports["http"]), "--scheme", "http"],
            env=env,
            ready=lambda: _answers(self.weaviate_url + "/v1/.well-known/ready"),
            timeout=self.settings.stack_start_timeout,
        )

    def _start_ollama(self) -> None:
        if self.ollama.pid() is not None:
            return
        binary = ollama_binary(self.settings, self._progress)
        home = self.settings.data_dir / "ollama"
        (home / "models").mkdir(parents=True, exist_ok=True)
        env = {
            **_base_env(),
            "HOME": str(home),
            "OLLAMA_HOST": f"{_HOST}:{self.settings.local_ollama_port}",
            "OLLAMA_MODELS": str(home / "models"),
            "OLLAMA_KEEP_ALIVE": "30m",
            # The chat model and two embedding models (a reindex from one to the other):
            # with two slots, a chat request waited behind two busy embedding runners
            # until it timed out (seen: 300 s timeouts during an ingest).
            "OLLAMA_MAX_LOADED_MODELS": "3",
            "OLLAMA_NOPRUNE": "1",
        }
        self._progress(f"starting Ollama {self.settings.ollama_version} on {self.ollama_url}")
        self.ollama.start(
            [str(binary), "serve"],
            env=env,
            ready=lambda: _answers(self.ollama_url + "/api/version"),
            timeout=self.settings.stack_start_timeout,
        )


def _base_env() -> dict[str, str]:
    """A minimal environment for the servers: no proxies or tokens leak into them."""
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")
    return {key: os.environ[key] for key in keep if key in os.environ}


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False
