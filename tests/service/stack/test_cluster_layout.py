"""The local Weaviate's layouts without starting anything: each node's environment, ports,
pid file and status line (the running cluster is tests/service/stack/test_cluster.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from service.cli import main
from service.settings import Settings
from service.stack import ComponentStatus, LocalStack, StackStatus
from service.stack.local import weaviate_env

DATA = Path("/srv/synopsis")


def _settings(nodes: int) -> Settings:
    return Settings().with_overrides(
        data_dir=DATA, weaviate_nodes=nodes, weaviate_memory_limit="1GiB"
    )


def _server_env(env: dict[str, str]) -> dict[str, str]:
    """What Weaviate is told, without the variables passed through from our environment."""
    return {k: v for k, v in env.items() if k not in ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")}


def test_one_node_environment_is_unchanged() -> None:
    assert _server_env(weaviate_env(_settings(1), 0, nodes=1)) == {
        "PERSISTENCE_DATA_PATH": "/srv/synopsis/weaviate",
        "DEFAULT_VECTORIZER_MODULE": "none",
        "ENABLE_MODULES": "",
        "DISABLE_TELEMETRY": "true",
        "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "true",
        "QUERY_DEFAULTS_LIMIT": "25",
        "GRPC_PORT": "15051",
        "CLUSTER_HOSTNAME": "synopsis-local",
        "CLUSTER_IN_LOCALHOST": "true",
        "CLUSTER_BIND_ADDR": "127.0.0.1",
        "CLUSTER_ADVERTISE_ADDR": "127.0.0.1",
        "CLUSTER_GOSSIP_BIND_PORT": "18081",
        "CLUSTER_DATA_BIND_PORT": "18082",
        "RAFT_PORT": "18083",
        "RAFT_INTERNAL_RPC_PORT": "18084",
        "RAFT_BOOTSTRAP_EXPECT": "1",
        "RAFT_TIMEOUTS_MULTIPLIER": "1",
        "GO_PROFILING_DISABLE": "true",
        "GOMEMLIMIT": "1GiB",
    }


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (
            0,
            {
                "PERSISTENCE_DATA_PATH": "/srv/synopsis/weaviate-0",
                "GRPC_PORT": "15051",
                "CLUSTER_HOSTNAME": "synopsis-node-0",
                "CLUSTER_JOIN": "127.0.0.1:18091,127.0.0.1:18101",
                "CLUSTER_GOSSIP_BIND_PORT": "18081",
                "CLUSTER_DATA_BIND_PORT": "18082",
                "RAFT_PORT": "18083",
                "RAFT_INTERNAL_RPC_PORT": "18084",
            },
        ),
        (
            2,
            {
                "PERSISTENCE_DATA_PATH": "/srv/synopsis/weaviate-2",
                "GRPC_PORT": "15071",
                "CLUSTER_HOSTNAME": "synopsis-node-2",
                "CLUSTER_JOIN": "127.0.0.1:18081,127.0.0.1:18091",
                "CLUSTER_GOSSIP_BIND_PORT": "18101",
                "CLUSTER_DATA_BIND_PORT": "18102",
                "RAFT_PORT": "18103",
                "RAFT_INTERNAL_RPC_PORT": "18104",
            },
        ),
    ],
)
def test_cluster_node_environment(index: int, expected: dict[str, str]) -> None:
    env = weaviate_env(_settings(3), index, nodes=3)
    assert {key: env[key] for key in expected} == expected
    assert env["RAFT_JOIN"] == "synopsis-node-0:18083,synopsis-node-1:18093,synopsis-node-2:18103"
    assert (env["RAFT_BOOTSTRAP_EXPECT"], env["CLUSTER_IN_LOCALHOST"]) == ("3", "true")
    # Weaviate on loopback looks for a node's raft RPC port at its raft port + 1.
    assert int(env["RAFT_INTERNAL_RPC_PORT"]) == int(env["RAFT_PORT"]) + 1


def test_cluster_node_names_do_not_contain_each_other() -> None:
    # Weaviate picks raft voters by substring match of the hostname in RAFT_JOIN.
    names = [weaviate_env(_settings(3), i, nodes=3)["CLUSTER_HOSTNAME"] for i in range(3)]
    assert not any(a in b for a in names for b in names if a != b)


@pytest.mark.parametrize(
    ("nodes", "names", "http_ports"),
    [
        (1, ["weaviate"], [18080]),
        (3, ["weaviate-0", "weaviate-1", "weaviate-2"], [18080, 18090, 18100]),
    ],
)
def test_layouts(nodes: int, names: list[str], http_ports: list[int], tmp_path: Path) -> None:
    settings = Settings().with_overrides(data_dir=tmp_path, weaviate_nodes=nodes)
    servers = LocalStack(settings).weaviate_servers  # nothing runs: the configured layout
    assert [s.name for s in servers] == names
    assert [s.ports["http"] for s in servers] == http_ports
    assert [s.pid_file.name for s in servers] == [f"{name}.pid" for name in names]
    assert [s.log_file.parent for s in servers] == [tmp_path / "run"] * nodes


def test_port_settings_name_what_to_change(tmp_path: Path) -> None:
    first, second, _ = LocalStack(
        Settings().with_overrides(data_dir=tmp_path, weaviate_nodes=3)
    ).weaviate_servers
    derived = "SYNOPSIS_LOCAL_WEAVIATE_PORT (it is derived from that port)"
    assert first.port_settings == {
        "http": "SYNOPSIS_LOCAL_WEAVIATE_PORT",
        "grpc": "SYNOPSIS_LOCAL_WEAVIATE_GRPC_PORT",
        "gossip": derived,
        "data": derived,
        "raft": derived,
        "raft rpc": derived,
    }
    assert second.port_settings == {
        "http": derived,
        "grpc": "SYNOPSIS_LOCAL_WEAVIATE_GRPC_PORT (it is derived from that port)",
        "gossip": derived,
        "data": derived,
        "raft": derived,
        "raft rpc": derived,
    }


def _component(name: str, running: bool) -> ComponentStatus:
    return ComponentStatus(
        name=name,
        url=f"http://127.0.0.1/{name}",
        managed=True,
        running=running,
        pid=1 if running else None,
        detail="running" if running else "stopped",
    )


def test_a_cluster_is_ready_when_every_node_is() -> None:
    up = StackStatus(
        weaviate=_component("weaviate-0", True),
        ollama=_component("ollama", True),
        cluster=(_component("weaviate-1", True), _component("weaviate-2", True)),
    )
    assert [c.name for c in up.components] == ["weaviate-0", "weaviate-1", "weaviate-2", "ollama"]
    assert up.ready
    one_down = StackStatus(
        weaviate=up.weaviate,
        ollama=up.ollama,
        cluster=(up.cluster[0], _component("weaviate-2", False)),
    )
    assert not one_down.ready


def test_status_lists_every_node(tmp_path: Path) -> None:
    env = {"SYNOPSIS_DATA_DIR": str(tmp_path), "SYNOPSIS_WEAVIATE_NODES": "3"}
    # Ports nothing listens on, so every component reads "stopped".
    env |= {
        "SYNOPSIS_LOCAL_WEAVIATE_PORT": "28080",
        "SYNOPSIS_LOCAL_WEAVIATE_GRPC_PORT": "25051",
        "SYNOPSIS_LOCAL_OLLAMA_PORT": "21435",
    }
    result = CliRunner().invoke(main, ["stack", "status"], env=env)
    assert (result.exit_code, result.stdout.splitlines()) == (
        3,
        [
            "weaviate-0 stopped      http://127.0.0.1:28080",
            "weaviate-1 stopped      http://127.0.0.1:28090",
            "weaviate-2 stopped      http://127.0.0.1:28100",
            "ollama     stopped      http://127.0.0.1:21435",
        ],
    )
