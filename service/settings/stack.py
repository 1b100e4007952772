"""The local stack's settings: where it keeps data and builds, which versions it builds,
its ports and nodes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import platformdirs

from service.errors import ConfigurationError
from service.settings.fields import Section, setting, setting_from

__all__ = ["WEAVIATE_NODE_PORT_STRIDE", "StackSettings"]

#: Node i of a local Weaviate cluster listens on node 0's HTTP and gRPC ports + i times this.
WEAVIATE_NODE_PORT_STRIDE = 10
#: Node counts the local stack runs: one server, or a cluster whose raft survives one loss.
_LOCAL_WEAVIATE_NODES = (1, 3)


def _default_data_dir() -> Path:
    """the user data directory (`~/.local/share/synopsis` on Linux)"""
    return Path(platformdirs.user_data_dir("synopsis"))


def _default_cache_dir() -> Path:
    """the user cache directory (`~/.cache/synopsis` on Linux)"""
    return Path(platformdirs.user_cache_dir("synopsis"))


@dataclass(frozen=True, kw_only=True)
class StackSettings(Section):
    """The local stack (Weaviate and Ollama as child processes on loopback)."""

    TOPIC = "Local stack"
    PREFIX = ""

    data_dir: Path = setting_from(
        _default_data_dir,
        "Where the local stack keeps its data: Weaviate's files, Ollama's models, pid files, logs.",
    )
    cache_dir: Path = setting_from(
        _default_cache_dir,
        "Where built server binaries and downloaded model packages are cached, keyed by version.",
    )
    weaviate_version: str = setting("1.39.0", "The Weaviate version the local stack builds.")
    ollama_version: str = setting("0.24.0", "The Ollama version the local stack builds.")
    local_weaviate_port: int = setting(
        18080,
        "The local Weaviate's HTTP port (loopback); its cluster ports are this + 1…4.",
    )
    local_weaviate_grpc_port: int = setting(15051, "The local Weaviate's gRPC port (loopback).")
    local_ollama_port: int = setting(11435, "The local Ollama's port (loopback).")
    local_ollama_num_parallel: int = setting(
        1,
        "Requests one loaded model of the local Ollama computes together (OLLAMA_NUM_PARALLEL); "
        "on 2 cores 1 wrote the default summarizer's summaries fastest (docs/benchmarks.md).",
    )
    weaviate_nodes: int = setting(
        1,
        "Weaviate servers of the local stack: 1, or 3 for a cluster on loopback whose node i "
        "takes the ports + 10·i (clients use node 0).",
    )
    weaviate_memory_limit: str = setting(
        "2GiB", "Go's soft memory limit (GOMEMLIMIT) of each local Weaviate server."
    )
    start_timeout: float = setting(
        120.0,
        "Seconds `synopsis stack up` waits for a local server to be ready.",
        name="stack_start_timeout",
    )
    ollama_native_build: bool = setting(
        True,
        "Build the local Ollama for this CPU (-march=native; the cache key includes the CPU's "
        "flags, so the binary is never reused elsewhere).",
    )

    def check(self) -> None:
        if self.weaviate_nodes not in _LOCAL_WEAVIATE_NODES:
            raise ConfigurationError(
                f"{self.variables()['weaviate_nodes']}={self.weaviate_nodes}: the local stack "
                "runs 1 Weaviate node or a cluster of 3"
            )
        if self.local_ollama_num_parallel < 1:
            name = self.variables()["local_ollama_num_parallel"]
            raise ConfigurationError(f"{name} must be at least 1")
        self._check_ports()

    def local_weaviate_node_ports(self, index: int) -> dict[str, int]:
        """The loopback ports of node `index` of the local Weaviate (0: the one server, or
        the first of a cluster), by role: HTTP and gRPC, then gossip, data, raft and raft
        RPC at HTTP + 1…4 (Weaviate on loopback finds a node's raft RPC port at its raft
        port + 1)."""
        http = self.local_weaviate_port + WEAVIATE_NODE_PORT_STRIDE * index
        return {
            "http": http,
            "grpc": self.local_weaviate_grpc_port + WEAVIATE_NODE_PORT_STRIDE * index,
            "gossip": http + 1,
            "data": http + 2,
            "raft": http + 3,
            "raft rpc": http + 4,
        }

    def _check_ports(self) -> None:
        """Every local port in range and distinct (Weaviate also takes HTTP port + 1…4, and
        node i of a local cluster the HTTP and gRPC ports + 10·i)."""
        names = self.variables()
        http_name, grpc_name = names["local_weaviate_port"], names["local_weaviate_grpc_port"]
        taken: dict[int, str] = {}
        wanted: list[tuple[int, str]] = []
        for index in range(self.weaviate_nodes):
            ports = self.local_weaviate_node_ports(index)
            grpc = ports.pop("grpc")
            for port in ports.values():
                offset = port - self.local_weaviate_port
                wanted.append((port, f"{http_name} + {offset}" if offset else http_name))
            offset = grpc - self.local_weaviate_grpc_port
            wanted.append((grpc, f"{grpc_name} + {offset}" if offset else grpc_name))
        wanted.append((self.local_ollama_port, names["local_ollama_port"]))
        for port, name in wanted:
            if not 1 <= port <= 65535:
                raise ConfigurationError(f"{name}: port {port} is not between 1 and 65535")
            if port in taken:
                cluster = (
                    ", node i of a cluster its HTTP and gRPC ports + 10·i"
                    if self.weaviate_nodes > 1
                    else ""
                )
                raise ConfigurationError(
                    f"{name} and {taken[port]} are both port {port}; the local stack needs "
                    f"distinct ports (Weaviate's cluster uses its HTTP port + 1…4{cluster})"
                )
            taken[port] = name
