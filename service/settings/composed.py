"""`Settings`: the one settings object of Synopsis, composed of its sections.

Each section (service/settings/<section>.py) is the settings of one topic of
docs/configuration.md, in the order the page shows them. Every setting `name` is set by
the variable `SYNOPSIS_<NAME>` (upper case) and declared with
`setting(default, "what it does")` in its section; docs/configuration.md is generated
from them (scripts/config_docs.py). Comments above a field say why its default is what
it is, pointing to the measurements in docs/.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import os
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from service.errors import ConfigurationError
from service.settings.answers import AnswerSettings
from service.settings.api import ApiSettings
from service.settings.api_limits import ApiLimits
from service.settings.conversations import ConversationSettings
from service.settings.deadlines import DeadlineSettings
from service.settings.external import ExternalSettings
from service.settings.fields import DOC, ENV_PREFIX, Section
from service.settings.guard import GuardSettings
from service.settings.ingest import IngestSettings
from service.settings.jobs import JobSettings
from service.settings.loader_limits import LoaderLimits
from service.settings.models import ModelSettings
from service.settings.retention import RetentionSettings
from service.settings.search import SearchSettings
from service.settings.stack import StackSettings
from service.settings.summaries import SummarySettings
from service.settings.urls import UrlSettings

__all__ = ["TOPICS", "Settings"]


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Typed configuration, one section per topic. Build it with `Settings.from_env()`
    (or `Settings()` for the defaults); change a few settings with `with_overrides`."""

    stack: StackSettings = field(default_factory=StackSettings)
    external: ExternalSettings = field(default_factory=ExternalSettings)
    deadlines: DeadlineSettings = field(default_factory=DeadlineSettings)
    models: ModelSettings = field(default_factory=ModelSettings)
    ingest: IngestSettings = field(default_factory=IngestSettings)
    summaries: SummarySettings = field(default_factory=SummarySettings)
    guard: GuardSettings = field(default_factory=GuardSettings)
    urls: UrlSettings = field(default_factory=UrlSettings)
    loader_limits: LoaderLimits = field(default_factory=LoaderLimits)
    search: SearchSettings = field(default_factory=SearchSettings)
    answers: AnswerSettings = field(default_factory=AnswerSettings)
    conversations: ConversationSettings = field(default_factory=ConversationSettings)
    api: ApiSettings = field(default_factory=ApiSettings)
    api_limits: ApiLimits = field(default_factory=ApiLimits)
    jobs: JobSettings = field(default_factory=JobSettings)
    retention: RetentionSettings = field(default_factory=RetentionSettings)

    def __post_init__(self) -> None:
        """What no one section can check: a replication the local stack can serve."""
        factor, nodes = self.external.replication_factor, self.stack.weaviate_nodes
        if self.uses_local_weaviate and factor > nodes:
            names = self.env_names()
            raise ConfigurationError(
                f"{names['replication_factor']}={factor} needs as many Weaviate nodes, but "
                f"the local stack runs {nodes}; set {names['weaviate_nodes']}=3 (or use an "
                "external cluster)"
            )

    @property
    def uses_local_weaviate(self) -> bool:
        """True when no external Weaviate is configured."""
        return not self.external.weaviate_url

    @property
    def uses_local_ollama(self) -> bool:
        """True when no external Ollama is configured."""
        return not self.external.ollama_url

    @property
    def resolved_ollama_url(self) -> str:
        """The Ollama base URL in use: the external one, or the local stack's."""
        return self.external.ollama_url or f"http://127.0.0.1:{self.stack.local_ollama_port}"

    @classmethod
    def choices(cls) -> dict[str, tuple[object, ...]]:
        """The settings that take one of a fixed set of values, each with its values in order."""
        found: dict[str, tuple[object, ...]] = {}
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
        changes: dict[str, dict[str, object]] = {}
        for name, value in values.items():
            section, _, attribute = paths[name].partition(".")
            changes.setdefault(section, {})[attribute] = value
        sections = {
            section: dataclasses.replace(getattr(self, section), **fields)
            for section, fields in changes.items()
        }
        return dataclasses.replace(self, **sections)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Load settings from `environ` (default: `os.environ`); unset variables keep defaults."""
        env = os.environ if environ is None else environ
        sections = {section: kind.from_env(env) for section, kind in _sections().items()}
        return cls(**sections)  # type: ignore[arg-type]


@functools.cache
def _sections() -> dict[str, type[Section]]:
    """The sections of `Settings`, by attribute, in order."""
    hints = typing.get_type_hints(Settings)
    return {f.name: hints[f.name] for f in dataclasses.fields(Settings)}


@functools.cache
def _fields() -> dict[str, tuple[dataclasses.Field[object], object]]:
    """Every setting's field and type, by name, in the order of the sections."""
    found: dict[str, tuple[dataclasses.Field[object], object]] = {}
    for kind in _sections().values():
        names, kinds = kind.names(), typing.get_type_hints(kind)
        for member in dataclasses.fields(kind):
            found[names[member.name]] = (member, kinds[member.name])
    return found


@functools.cache
def _paths() -> dict[str, str]:
    """Every setting's attribute path, by name."""
    return {
        name: f"{section}.{attribute}"
        for section, kind in _sections().items()
        for attribute, name in kind.names().items()
    }


#: The topics of the settings, in the order docs/configuration.md shows them, each with
#: its settings' names (every setting in exactly one): one per section.
TOPICS: dict[str, tuple[str, ...]] = {
    kind.TOPIC: tuple(kind.names().values()) for kind in _sections().values()
}
