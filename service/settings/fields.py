"""How a setting is declared, read from its variable and checked: `setting`, `Section`.

A setting has a name (`jobs_workers`), set by the variable `SYNOPSIS_<NAME>`
(`SYNOPSIS_JOBS_WORKERS`). It is a field of a `Section` (one topic of
docs/configuration.md): the section's `PREFIX` plus the field's name (`jobs_` +
`workers`), unless the field gives its own with `setting(..., name=...)`.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal, Self, TypeVar

from service.errors import ConfigurationError

__all__ = ["DOC", "ENV_PREFIX", "NAME", "Section", "convert", "setting", "setting_from"]

ENV_PREFIX = "SYNOPSIS_"
#: The key of a field's description in its metadata (`Settings.descriptions()`).
DOC = "doc"
#: The key of a field's setting name in its metadata, when it is not PREFIX + field name.
NAME = "name"

_T = TypeVar("_T")


def _metadata(doc: str, name: str | None) -> dict[str, str]:
    return {DOC: doc} if name is None else {DOC: doc, NAME: name}


def setting(default: _T, doc: str, *, secret: bool = False, name: str | None = None) -> _T:
    """A setting: its default and what it does, in one line (with its unit); a `secret`
    one is left out of the settings' repr; `name` when it is not the section's prefix +
    the field's name."""
    return field(default=default, repr=not secret, metadata=_metadata(doc, name))


def setting_from(factory: Callable[[], _T], doc: str, *, name: str | None = None) -> _T:
    """A setting whose default `factory` computes."""
    return field(default_factory=factory, metadata=_metadata(doc, name))


@dataclass(frozen=True, kw_only=True)
class Section:
    """The settings of one topic (a heading of docs/configuration.md).

    A field typed as a `Literal` may hold only the values it lists: reading the
    environment and direct construction alike refuse any other, naming the variable and
    the allowed values. `check` refuses values out of bounds, naming the variable too.
    """

    #: The heading of docs/configuration.md that lists this section's settings.
    TOPIC: ClassVar[str] = ""
    #: The start of the names of this section's settings (`jobs_`).
    PREFIX: ClassVar[str] = ""

    def __post_init__(self) -> None:
        variables = self.variables()
        for attribute, allowed in self.choices().items():
            value = getattr(self, attribute)
            if value not in allowed:
                raise ConfigurationError(
                    f"{variables[attribute]}={value!r} is not one of {', '.join(map(str, allowed))}"
                )
        self.check()

    def check(self) -> None:
        """Refuse values that are out of bounds (`ConfigurationError` naming the variable)."""

    @classmethod
    def names(cls) -> dict[str, str]:
        """Each field's setting name, by field."""
        return dict(_names(cls))

    @classmethod
    def variables(cls) -> dict[str, str]:
        """Each field's environment variable, by field."""
        return {attribute: ENV_PREFIX + name.upper() for attribute, name in _names(cls)}

    @classmethod
    def choices(cls) -> dict[str, tuple[object, ...]]:
        """The fields that take one of a fixed set of values, each with its values in order."""
        return dict(_choices(cls))

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Self:
        """This section as `environ` sets it; unset variables keep the defaults."""
        hints = typing.get_type_hints(cls)
        values: dict[str, object] = {}
        for attribute, variable in cls.variables().items():
            raw = environ.get(variable)
            if raw is not None:
                values[attribute] = convert(variable, raw.strip(), hints[attribute])
        return cls(**values)


#: What `_names` and `_choices` found, by section (each read once).
_NAMES: dict[type[Section], tuple[tuple[str, str], ...]] = {}
_CHOICES: dict[type[Section], tuple[tuple[str, tuple[object, ...]], ...]] = {}


def _names(cls: type[Section]) -> tuple[tuple[str, str], ...]:
    """(field, setting name) of every field of `cls`."""
    if cls not in _NAMES:
        _NAMES[cls] = tuple(
            (f.name, str(f.metadata.get(NAME) or cls.PREFIX + f.name))
            for f in dataclasses.fields(cls)
        )
    return _NAMES[cls]


def _choices(cls: type[Section]) -> tuple[tuple[str, tuple[object, ...]], ...]:
    """(field, values) of every field of `cls` typed as a `Literal`."""
    if cls not in _CHOICES:
        hints = typing.get_type_hints(cls)
        _CHOICES[cls] = tuple(
            (f.name, typing.get_args(hints[f.name]))
            for f in dataclasses.fields(cls)
            if typing.get_origin(hints[f.name]) is Literal
        )
    return _CHOICES[cls]


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def convert(var: str, raw: str, kind: object) -> object:
    """The value of `raw`, read from the variable `var`, as a field of type `kind`."""
    if typing.get_origin(kind) is Literal:
        kind = type(typing.get_args(kind)[0])  # the value is checked when it is set
    try:
        if kind is bool:
            lowered = raw.lower()
            if lowered not in _TRUE | _FALSE:
                raise ValueError(f"expected one of {sorted(_TRUE | _FALSE)}")
            return lowered in _TRUE
        if kind is int:
            return int(raw)
        if kind is float:
            return float(raw)
        if kind is Path:
            if not raw:
                raise ValueError("expected a path")
            return Path(raw).expanduser()
        return raw
    except ValueError as exc:
        raise ConfigurationError(f"{var}={raw!r} is invalid: {exc}") from exc
