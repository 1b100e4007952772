"""`LocalStack`: the embedded Weaviate and Ollama that run when nothing external is configured.

Both servers listen on loopback, keep their data under `settings.stack.data_dir`, and run
detached from the command that started them; pid files in `data_dir/run` find them
again. Components configured as external (`SYNOPSIS_WEAVIATE_URL`,
`SYNOPSIS_OLLAMA_URL`) are left alone.

Weaviate runs as one server (`weaviate`: data in `data_dir/weaviate`) or, with
`Settings.stack.weaviate_nodes` 3, as a cluster on Weaviate's own clustering (`weaviate-0`,
`weaviate-1`, `weaviate-2`: each with its data in `data_dir/weaviate-<i>`, its pid file
and its log). The two layouts keep separate data. Node 0 of either takes the configured
ports, so clients always connect there; node i takes those ports + 10·i
(`StackSettings.local_weaviate_node_ports`). Every cluster node lists all three in
`RAFT_JOIN`, expects three for the raft bootstrap, and joins the others' gossip ports
(`CLUSTER_JOIN`), so whichever node restarts finds the others at once.

A running layout wins over the configured one where that is harmless: with one node
configured, `status`, `up` and `down` see a running cluster (clients reach its node 0 on
the same port); starting a cluster while the one server runs is refused. `down` stops
whatever runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx

from service.errors import StackError
from service.settings import Settings
from service.stack.binaries import ollama_binary, weaviate_binary
from service.stack.model_files import ensure_models
from service.stack.processes import ServerProcess
from service.stack.progress import Progress, silent

__all__ = ["ComponentStatus", "LocalStack", "StackStatus"]

_HOST = "127.0.0.1"
_CLUSTER_NODES = 3  # the cluster size the local stack runs (Settings allows 1 or 3)
_READY = "/v1/.well-known/ready"


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

    weaviate: ComponentStatus  # the one server, or node 0 of a cluster (clients use it)
    ollama: ComponentStatus
    cluster: tuple[ComponentStatus, ...] = ()  # the other nodes of a local Weaviate cluster

    @property
    def components(self) -> tuple[ComponentStatus, ...]:
        """Every component: Weaviate (each node), then Ollama."""
        return (self.weaviate, *self.cluster, self.ollama)

    @property
    def ready(self) -> bool:
        return all(component.running for component in self.components)


class LocalStack:
    """Builds (once), starts, inspects and stops the local Weaviate and Ollama."""

    def __init__(self, settings: Settings, *, progress: Progress = silent) -> None:
        self.settings = settings
        self._progress = progress
        run_dir = settings.stack.data_dir / "run"
        self._single = [_weaviate_server(settings, run_dir, 0, nodes=1)]
        self._cluster = [
            _weaviate_server(settings, run_dir, index, nodes=_CLUSTER_NODES)
            for index in range(_CLUSTER_NODES)
        ]
        configured = self._cluster if settings.stack.weaviate_nodes > 1 else self._single
        # The one server, or node 0 of the configured cluster.
        self.weaviate = configured[0]
        self.ollama = ServerProcess(
            name="ollama",
            binary_name="ollama",
            run_dir=run_dir,
            ports={"http": settings.stack.local_ollama_port},
            port_settings={"http": "SYNOPSIS_LOCAL_OLLAMA_PORT"},
        )

    @property
    def weaviate_url(self) -> str:
        return f"http://{_HOST}:{self.settings.stack.local_weaviate_port}"

    @property
    def weaviate_servers(self) -> list[ServerProcess]:
        """The local Weaviate's servers, node 0 first: the configured layout, or a running
        cluster when one node is configured."""
        if self.settings.stack.weaviate_nodes == 1 and any(node.pid() for node in self._cluster):
            return self._cluster
        return self._cluster if self.settings.stack.weaviate_nodes > 1 else self._single

    @property
    def ollama_url(self) -> str:
        return f"http://{_HOST}:{self.settings.stack.local_ollama_port}"

    def build(self) -> None:
        """Build or find the binaries of the local components (cached by version)."""
        if self.settings.uses_local_weaviate:
            weaviate_binary(self.settings, self._progress)
        if self.settings.uses_local_ollama:
            ollama_binary(self.settings, self._progress)

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Held by one process at a time per data directory (`data_dir/run/up.lock`): two
        commands that start the stack together (`serve` beside `ingest`, two test runs)
        start each server once and import each model once; the second finds them
        running when the first is done."""
        path = self.settings.stack.data_dir / "run" / "up.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield  # closing the file releases the lock

    def up(self) -> StackStatus:
        """Start what is local and not yet running, import the models, and return the
        status; one process at a time (`exclusive`)."""
        with self.exclusive():
            if self.settings.uses_local_weaviate:
                self._start_weaviate()
            if self.settings.uses_local_ollama:
                self._start_ollama()
                models = self.settings.models
                self._import_models(
                    [models.chat_model, models.resolved_answer_model, models.embedding_model]
                )
        return self.status()

    def import_models(self, names: list[str]) -> None:
        """Make sure each of `names` exists in the Ollama in use (the local one, or the
        configured `SYNOPSIS_OLLAMA_URL`); one process at a time (`exclusive`)."""
        with self.exclusive():
            self._import_models(names)

    def _import_models(self, names: list[str]) -> None:
        # The local Ollama's files are on this machine: link the cached model files into
        # its blobs rather than send copies through its API.
        local = self.settings.uses_local_ollama
        with httpx.Client(base_url=self.settings.resolved_ollama_url, timeout=30.0) as client:
            ensure_models(
                self.settings,
                client,
                list(dict.fromkeys(names)),
                self._progress,
                blobs_dir=self._ollama_models / "blobs" if local else None,
            )

    def down(self) -> list[str]:
        """Stop the local servers; return the names of those that were running."""
        stopped = [self.ollama.name] if self.ollama.stop() else []
        # Every Weaviate node at once: stopped one by one, each would wait out the raft
        # leader's departure in turn.
        nodes = self._single + self._cluster
        with ThreadPoolExecutor(max_workers=len(nodes)) as pool:
            was_running = list(pool.map(lambda node: node.stop(), nodes))
        return stopped + [node.name for node, ran in zip(nodes, was_running, strict=True) if ran]

    def status(self) -> StackStatus:
        """Report each component: local or external, running or not."""
        ollama = self._component(
            "ollama",
            self.settings.external.ollama_url or self.ollama_url,
            self.ollama if self.settings.uses_local_ollama else None,
            "/api/version",
        )
        if not self.settings.uses_local_weaviate:
            weaviate = self._component(
                "weaviate", self.settings.external.weaviate_url, None, _READY
            )
            return StackStatus(weaviate=weaviate, ollama=ollama)
        first, *others = (
            self._component(node.name, _url(node), node, _READY) for node in self.weaviate_servers
        )
        return StackStatus(weaviate=first, ollama=ollama, cluster=tuple(others))

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
        servers = self.weaviate_servers
        if len(servers) > 1 and self._single[0].pid() is not None:
            raise StackError(
                "a one-node local Weaviate runs from this data directory; stop it with "
                "`synopsis stack down` before starting a cluster (the two keep separate data)"
            )
        missing = [(index, node) for index, node in enumerate(servers) if node.pid() is None]
        if not missing:
            return
        binary = weaviate_binary(self.settings, self._progress)
        version = self.settings.stack.weaviate_version
        for index, node in missing:
            where = "" if len(servers) == 1 else f"node {index} of {len(servers)} "
            self._progress(f"starting Weaviate {version} {where}on {_url(node)}")
        # Every port checked before anything starts: no half-started cluster.
        for _, node in missing:
            node.check_ports()
        started = []
        for index, node in missing:
            env = weaviate_env(self.settings, index, nodes=len(servers))
            Path(env["PERSISTENCE_DATA_PATH"]).mkdir(parents=True, exist_ok=True)
            argv = [str(binary), "--host", _HOST, "--port", str(node.ports["http"])]
            started.append((node, node.spawn([*argv, "--scheme", "http"], env=env)))
        # No cluster node is ready before a raft quorum has formed: spawn all, then wait.
        deadline = time.monotonic() + self.settings.stack.start_timeout
        try:
            for node, process in started:
                node.wait_ready(
                    process,
                    ready=functools.partial(_is_ready, node),
                    timeout=max(1.0, deadline - time.monotonic()),
                )
        except StackError:
            for node, _ in started:
                node.stop()
            raise

    @property
    def _ollama_models(self) -> Path:
        """The local Ollama's model store (`OLLAMA_MODELS`): manifests and blobs."""
        return self.settings.stack.data_dir / "ollama" / "models"

    def _start_ollama(self) -> None:
        if self.ollama.pid() is not None:
            return
        binary = ollama_binary(self.settings, self._progress)
        home = self._ollama_models.parent
        self._ollama_models.mkdir(parents=True, exist_ok=True)
        env = {
            **_base_env(),
            "HOME": str(home),
            "OLLAMA_HOST": f"{_HOST}:{self.settings.stack.local_ollama_port}",
            "OLLAMA_MODELS": str(self._ollama_models),
            "OLLAMA_KEEP_ALIVE": "30m",
            "OLLAMA_NUM_PARALLEL": str(self.settings.stack.local_ollama_num_parallel),
            # The summary model, the answer model and two embedding models (a reindex
            # from one to the other) stay loaded together: with two slots, a chat request
            # waited behind two busy embedding runners until it timed out (seen: 300 s
            # timeouts during an ingest); with three, a fourth model in use evicted one
            # of the others at every switch (a runner restart each time).
            "OLLAMA_MAX_LOADED_MODELS": "4",
            "OLLAMA_NOPRUNE": "1",
        }
        self._progress(f"starting Ollama {self.settings.stack.ollama_version} on {self.ollama_url}")
        self.ollama.start(
            [str(binary), "serve"],
            env=env,
            ready=lambda: _answers(self.ollama_url + "/api/version"),
            timeout=self.settings.stack.start_timeout,
        )


def weaviate_env(settings: Settings, index: int, *, nodes: int) -> dict[str, str]:
    """The environment of node `index` of a local Weaviate of `nodes` servers (1: the one
    server, as before clusters existed)."""
    ports = settings.stack.local_weaviate_node_ports(index)
    if nodes == 1:
        data = settings.stack.data_dir / "weaviate"
        # The raft node id is stored in the data directory: the hostname must not change.
        cluster = {"CLUSTER_HOSTNAME": "synopsis-local", "RAFT_BOOTSTRAP_EXPECT": "1"}
    else:
        data = settings.stack.data_dir / f"weaviate-{index}"
        every = [settings.stack.local_weaviate_node_ports(i) for i in range(nodes)]
        cluster = {
            # Weaviate decides raft voters by substring match of these names in RAFT_JOIN:
            # no name may contain another (synopsis-node-1 vs -10 would, beyond 9 nodes).
            "CLUSTER_HOSTNAME": _node_name(index),
            "CLUSTER_JOIN": ",".join(
                f"{_HOST}:{other['gossip']}" for i, other in enumerate(every) if i != index
            ),
            "RAFT_JOIN": ",".join(f"{_node_name(i)}:{p['raft']}" for i, p in enumerate(every)),
            "RAFT_BOOTSTRAP_EXPECT": str(nodes),
        }
    return {
        **_base_env(),
        "PERSISTENCE_DATA_PATH": str(data),
        "DEFAULT_VECTORIZER_MODULE": "none",
        "ENABLE_MODULES": "",
        "DISABLE_TELEMETRY": "true",
        "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "true",
        "QUERY_DEFAULTS_LIMIT": "25",
        "GRPC_PORT": str(ports["grpc"]),
        **cluster,
        # On loopback Weaviate takes each node's raft RPC port to be its raft port + 1.
        "CLUSTER_IN_LOCALHOST": "true",
        "CLUSTER_BIND_ADDR": _HOST,
        "CLUSTER_ADVERTISE_ADDR": _HOST,
        "CLUSTER_GOSSIP_BIND_PORT": str(ports["gossip"]),
        "CLUSTER_DATA_BIND_PORT": str(ports["data"]),
        "RAFT_PORT": str(ports["raft"]),
        "RAFT_INTERNAL_RPC_PORT": str(ports["raft rpc"]),
        # Loopback: no need to wait out five election timeouts at start, and a cluster
        # elects a new raft leader within ~2 s of losing one (docs/reliability.md).
        "RAFT_TIMEOUTS_MULTIPLIER": "1",
        "GO_PROFILING_DISABLE": "true",
        "GOMEMLIMIT": settings.stack.weaviate_memory_limit,
    }


def _node_name(index: int) -> str:
    return f"synopsis-node-{index}"


def _weaviate_server(settings: Settings, run_dir: Path, index: int, *, nodes: int) -> ServerProcess:
    """Node `index` of a local Weaviate of `nodes` servers: its ports, pid file and log."""
    derived = "(it is derived from that port)"
    own = {"http": "SYNOPSIS_LOCAL_WEAVIATE_PORT", "grpc": "SYNOPSIS_LOCAL_WEAVIATE_GRPC_PORT"}
    ports = settings.stack.local_weaviate_node_ports(index)
    return ServerProcess(
        name="weaviate" if nodes == 1 else f"weaviate-{index}",
        binary_name="weaviate-server",
        run_dir=run_dir,
        # Every port is derived from the HTTP and gRPC ports, so that two stacks with
        # different ports never collide.
        ports=ports,
        port_settings={
            role: (
                own[role]
                if role in own and index == 0
                else f"{own.get(role, own['http'])} {derived}"
            )
            for role in ports
        },
    )


def _url(server: ServerProcess) -> str:
    return f"http://{_HOST}:{server.ports['http']}"


def _is_ready(server: ServerProcess) -> bool:
    return _answers(_url(server) + _READY)


def _base_env() -> dict[str, str]:
    """A minimal environment for the servers: no proxies or tokens leak into them."""
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")
    return {key: os.environ[key] for key in keep if key in os.environ}


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False
