"""The defaults that help texts name, read from `Settings` so that they cannot drift."""

from __future__ import annotations

from service.settings import Settings

__all__ = ["default_of"]

_DEFAULTS = Settings()


def default_of(name: str) -> str:
    """`SYNOPSIS_NAME, value`: the variable that sets the setting `name`, and its default."""
    return f"{Settings.env_names()[name]}, {_DEFAULTS.value(name)}"
