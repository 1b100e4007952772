"""`Settings`: the one settings object of Synopsis, composed of its sections.

Library code receives a `Settings`; only `Settings.from_env` reads the environment.
Every setting `name` is set by the variable `SYNOPSIS_<NAME>` (upper case), and declared
with `setting(default, "what it does")` in a section (service/settings/fields.py) or, until
it moves to one, on `Settings` itself with a place in `TOPICS`: docs/configuration.md is
generated from them (scripts/config_docs.py). Comments above a field say why its default
is what it is, pointing to the measurements in docs/.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import os
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import platformdirs

from service.errors import ConfigurationError
from service.settings.answers import AnswerSettings
from service.settings.api import ApiSettings
from service.settings.api_limits import ApiLimits
from service.settings.conversations import ConversationSettings
from service.settings.deadlines import DeadlineSettings
from service.settings.fields import DOC, ENV_PREFIX, Section, convert, setting, setting_from
from service.settings.guard import GuardSettings
from service.settings.ingest import IngestSettings
from service.settings.jobs import JobSettings
from service.settings.loader_limits import LoaderLimits
from service.settings.models import ModelSettings
from service.settings.retention import RetentionSettings
from service.settings.search import SearchSettings
from service.settings.summaries import SummarySettings
from service.settings.urls import UrlSettings

__all__ = [
    "CONSISTENCY_LEVELS",
    "TOPICS",
    "WEAVIATE_NODE_PORT_STRIDE",
    "ConsistencyLevel",
    "Settings",
]

# A field typed as a `Literal` may hold only the values it lists: `from_env` and direct
# construction alike refuse any other, naming the variable and the allowed values.

#: Weaviate's consistency levels, for `read_consistency` and `write_consistency`.
ConsistencyLevel = Literal["ONE", "QUORUM", "ALL"]
CONSISTENCY_LEVELS: tuple[ConsistencyLevel, ...] = typing.get_args(ConsistencyLevel)
#: Node i of a local Weaviate cluster listens on node 0's HTTP and gRPC ports + i times this.
WEAVIATE_NODE_PORT_STRIDE = 10
#: Node counts the local stack runs: one server, or a cluster whose raft survives one loss.
_LOCAL_WEAVIATE_NODES = (1, 3)


#: The topics of the settings, in the order docs/configuration.md shows them, each with
#: its fields (every field in exactly one).
TOPICS: dict[str, tuple[str, ...]] = {
    "Local stack": (
        "data_dir",
        "cache_dir",
        "weaviate_version",
        "ollama_version",
        "local_weaviate_port",
        "local_weaviate_grpc_port",
        "local_ollama_port",
        "weaviate_nodes",
        "weaviate_memory_limit",
        "stack_start_timeout",
        "ollama_native_build",
    ),
    "External Weaviate and Ollama, replication": (
        "weaviate_url",
        "weaviate_grpc_host",
        "weaviate_grpc_port",
        "weaviate_api_key",
        "replication_factor",
        "read_consistency",
        "write_consistency",
        "ollama_url",
        "collection_prefix",
    ),
    DeadlineSettings.TOPIC: tuple(DeadlineSettings.names().values()),
    ModelSettings.TOPIC: tuple(ModelSettings.names().values()),
    IngestSettings.TOPIC: tuple(IngestSettings.names().values()),
    SummarySettings.TOPIC: tuple(SummarySettings.names().values()),
    GuardSettings.TOPIC: tuple(GuardSettings.names().values()),
    UrlSettings.TOPIC: tuple(UrlSettings.names().values()),
    LoaderLimits.TOPIC: tuple(LoaderLimits.names().values()),
    SearchSettings.TOPIC: tuple(SearchSettings.names().values()),
    AnswerSettings.TOPIC: tuple(AnswerSettings.names().values()),
    ConversationSettings.TOPIC: tuple(ConversationSettings.names().values()),
    ApiSettings.TOPIC: tuple(ApiSettings.names().values()),
    ApiLimits.TOPIC: tuple(ApiLimits.names().values()),
    JobSettings.TOPIC: tuple(JobSettings.names().values()),
    RetentionSettings.TOPIC: tuple(RetentionSettings.names().values()),
}


def _default_data_dir() -> Path:
    """the user data directory (`~/.local/share/synopsis` on Linux)"""
    return Path(platformdirs.user_data_dir("synopsis"))


def _default_cache_dir() -> Path:
    """the user cache directory (`~/.cache/synopsis` on Linux)"""
    return Path(platformdirs.user_cache_dir("synopsis"))


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Typed configuration. Build it with `Settings.from_env()` or directly in tests."""

    data_dir: Path = setting_from(
        _default_data_dir,
        "Where the local stack keeps its data: Weaviate's files, Ollama's models, pid files, logs.",
    )
    cache_dir: Path = setting_from(
        _default_cache_dir,
        "Where built server binaries and downloaded model packages are cached, keyed by version.",
    )

    weaviate_url: str = setting(
        "", "An external Weaviate, e.g. `http://weaviate:8080`; empty: the local stack's own."
    )
    weaviate_grpc_host: str = setting(
        "", "The gRPC host of the external Weaviate; empty: the host of the Weaviate URL."
    )
    weaviate_grpc_port: int = setting(50051, "The gRPC port of the external Weaviate.")
    weaviate_api_key: str = setting(
        "", "The API key of an external Weaviate; empty: none. Never printed.", secret=True
    )
    # Weaviate >= 1.38 repairs the copies in the background whenever the factor is above 1;
    # QUORUM reads after QUORUM writes see every acknowledged write and survive one node of
    # three being down (service/index/replication.py).
    replication_factor: int = setting(
        1,
        "Copies of every object of Synopsis's collections, set when they are created; more "
        "than 1 needs that many Weaviate nodes.",
    )
    read_consistency: ConsistencyLevel = setting(
        "QUORUM", "How many copies must answer a read (used only with a factor above 1)."
    )
    write_consistency: ConsistencyLevel = setting(
        "QUORUM", "How many copies must acknowledge a write (used only with a factor above 1)."
    )

    ollama_url: str = setting(
        "", "An external Ollama, e.g. `http://ollama:11434`; empty: the local stack's own."
    )

    collection_prefix: str = setting(
        "",
        "Prefix of the collection names (e.g. `Mxbai` → `MxbaiOriginalDocuments`): re-index "
        "into new collections when the embedding model changes, or keep indexes apart.",
    )

    weaviate_version: str = setting("1.39.0", "The Weaviate version the local stack builds.")
    ollama_version: str = setting("0.24.0", "The Ollama version the local stack builds.")
    local_weaviate_port: int = setting(
        18080,
        "The local Weaviate's HTTP port (loopback); its cluster ports are this + 1…4.",
    )
    local_weaviate_grpc_port: int = setting(15051, "The local Weaviate's gRPC port (loopback).")
    local_ollama_port: int = setting(11435, "The local Ollama's port (loopback).")
    weaviate_nodes: int = setting(
        1,
        "Weaviate servers of the local stack: 1, or 3 for a cluster on loopback whose node i "
        "takes the ports + 10·i (clients use node 0).",
    )
    weaviate_memory_limit: str = setting(
        "2GiB", "Go's soft memory limit (GOMEMLIMIT) of each local Weaviate server."
    )
    stack_start_timeout: float = setting(
        120.0, "Seconds `synopsis stack up` waits for a local server to be ready."
    )
    ollama_native_build: bool = setting(
        True,
        "Build the local Ollama for this CPU (-march=native; the cache key includes the CPU's "
        "flags, so the binary is never reused elsewhere).",
    )

    jobs: JobSettings = field(default_factory=JobSettings)
    answers: AnswerSettings = field(default_factory=AnswerSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    guard: GuardSettings = field(default_factory=GuardSettings)
    summaries: SummarySettings = field(default_factory=SummarySettings)
    models: ModelSettings = field(default_factory=ModelSettings)
    deadlines: DeadlineSettings = field(default_factory=DeadlineSettings)
    ingest: IngestSettings = field(default_factory=IngestSettings)
    loader_limits: LoaderLimits = field(default_factory=LoaderLimits)
    urls: UrlSettings = field(default_factory=UrlSettings)
    api_limits: ApiLimits = field(default_factory=ApiLimits)
    api: ApiSettings = field(default_factory=ApiSettings)
    retention: RetentionSettings = field(default_factory=RetentionSettings)
    conversations: ConversationSettings = field(default_factory=ConversationSettings)

    def __post_init__(self) -> None:
        self._check_choices()
        self._check_replication()
        self._check_local_ports()

    def _check_choices(self) -> None:
        """Every field typed as a `Literal` holds one of the values it lists."""
        names = self.env_names()
        for name, allowed in _own_choices():
            value = getattr(self, name)
            if value not in allowed:
                raise ConfigurationError(
                    f"{names[name]}={value!r} is not one of {', '.join(map(str, allowed))}"
                )

    def _check_replication(self) -> None:
        """Node count, replication factor and consistency levels that can work together."""
        names = self.env_names()
        if self.weaviate_nodes not in _LOCAL_WEAVIATE_NODES:
            raise ConfigurationError(
                f"{names['weaviate_nodes']}={self.weaviate_nodes}: the local stack runs 1 "
                "Weaviate node or a cluster of 3"
            )
        if self.replication_factor < 1:
            raise ConfigurationError(f"{names['replication_factor']} must be at least 1")
        if self.uses_local_weaviate and self.replication_factor > self.weaviate_nodes:
            raise ConfigurationError(
                f"{names['replication_factor']}={self.replication_factor} needs as many "
                f"Weaviate nodes, but the local stack runs {self.weaviate_nodes}; set "
                f"{names['weaviate_nodes']}=3 (or use an external cluster)"
            )

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

    def _check_local_ports(self) -> None:
        """Every local port in range and distinct (Weaviate also takes HTTP port + 1…4, and
        node i of a local cluster the HTTP and gRPC ports + 10·i)."""
        names = self.env_names()
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

    @property
    def uses_local_weaviate(self) -> bool:
        """True when no external Weaviate is configured."""
        return not self.weaviate_url

    @property
    def uses_local_ollama(self) -> bool:
        """True when no external Ollama is configured."""
        return not self.ollama_url

    @property
    def resolved_ollama_url(self) -> str:
        """The Ollama base URL in use: the external one, or the local stack's."""
        return self.ollama_url or f"http://127.0.0.1:{self.local_ollama_port}"

    @classmethod
    def choices(cls) -> dict[str, tuple[object, ...]]:
        """The settings that take one of a fixed set of values, each with its values in order."""
        found = dict(_own_choices())
        for kind in _sections().values():
            names = kind.names()
            found.update((names[a], values) for a, values in kind.choices().items())
        return found

    @classmethod
    def descriptions(cls) -> dict[str, str]:
        """What every setting does, in one line (empty for a field given none), by name."""
        return {name: str(f.metadata.get(DOC, "")) for name, (f, _) in _fields().items()}

    @classmethod
    def env_names(cls) -> dict[str, str]:
        """Map every setting's name to the environment variable that sets it."""
        return {name: ENV_PREFIX + name.upper() for name in _fields()}

    @classmethod
    def paths(cls) -> dict[str, str]:
        """Where every setting is, by name: `jobs_workers` → `jobs.workers`."""
        return dict(_paths())

    @classmethod
    def field_of(cls, name: str) -> tuple[dataclasses.Field[object], object]:
        """The dataclass field that holds the setting `name`, and its type."""
        return _fields()[name]

    def value(self, name: str) -> Any:
        """The value of the setting `name` (as `from_env` and `with_overrides` name it)."""
        return operator.attrgetter(_paths()[name])(self)

    def with_overrides(self, **values: object) -> Settings:
        """These settings with the settings named in `values` (by their names, as
        `SYNOPSIS_<NAME>` sets them) changed, checked as `from_env` checks them."""
        paths = _paths()
        unknown = sorted(set(values) - set(paths))
        if unknown:
            raise TypeError(f"no such settings: {', '.join(unknown)}")
        own: dict[str, object] = {}
        sections: dict[str, dict[str, object]] = {}
        for name, value in values.items():
            section, _, attribute = paths[name].rpartition(".")
            if section:
                sections.setdefault(section, {})[attribute] = value
            else:
                own[attribute] = value
        for section, changes in sections.items():
            own[section] = dataclasses.replace(getattr(self, section), **changes)
        return dataclasses.replace(self, **own)  # type: ignore[arg-type]

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Load settings from `environ` (default: `os.environ`); unset variables keep defaults."""
        env = os.environ if environ is None else environ
        hints = typing.get_type_hints(cls)
        values: dict[str, object] = {
            section: kind.from_env(env) for section, kind in _sections().items()
        }
        for f in dataclasses.fields(cls):
            raw = env.get(ENV_PREFIX + f.name.upper())
            if f.name in values or raw is None:
                continue
            values[f.name] = convert(ENV_PREFIX + f.name.upper(), raw.strip(), hints[f.name])
        return cls(**values)  # type: ignore[arg-type]


@functools.cache
def _sections() -> dict[str, type[Section]]:
    """The sections of `Settings`, by attribute, in order."""
    hints = typing.get_type_hints(Settings)
    return {
        f.name: hints[f.name]
        for f in dataclasses.fields(Settings)
        if isinstance(hints[f.name], type) and issubclass(hints[f.name], Section)
    }


@functools.cache
def _fields() -> dict[str, tuple[dataclasses.Field[object], object]]:
    """Every setting's field and type, by name."""
    found: dict[str, tuple[dataclasses.Field[object], object]] = {}
    sections = _sections()
    hints = typing.get_type_hints(Settings)
    for f in dataclasses.fields(Settings):
        kind = sections.get(f.name)
        if kind is None:
            found[f.name] = (f, hints[f.name])
            continue
        names, kinds = kind.names(), typing.get_type_hints(kind)
        for member in dataclasses.fields(kind):
            found[names[member.name]] = (member, kinds[member.name])
    return found


@functools.cache
def _paths() -> dict[str, str]:
    """Every setting's attribute path, by name."""
    sections = _sections()
    paths: dict[str, str] = {}
    for f in dataclasses.fields(Settings):
        kind = sections.get(f.name)
        if kind is None:
            paths[f.name] = f.name
        else:
            paths.update((name, f"{f.name}.{a}") for a, name in kind.names().items())
    return paths


@functools.cache
def _own_choices() -> tuple[tuple[str, tuple[object, ...]], ...]:
    """(field, values) of every field of `Settings` itself typed as a `Literal` (read once)."""
    hints = typing.get_type_hints(Settings)
    return tuple(
        (f.name, typing.get_args(hints[f.name]))
        for f in dataclasses.fields(Settings)
        if typing.get_origin(hints[f.name]) is Literal
    )
