"""The `synopsis` command run in-process, on a test's settings."""

from __future__ import annotations

from collections.abc import Mapping

from click.testing import CliRunner

from service.cli import main
from service.settings import Settings
from tests.support.models import model_env

__all__ = ["cli"]


def cli(
    settings: Settings, *args: str, env: Mapping[str, str] | None = None
) -> tuple[int, str, str]:
    """Run `synopsis ARGS` in-process on `settings`' collections and chat models: (exit
    code, stdout, stderr)."""
    result = CliRunner().invoke(
        main,
        list(args),
        env={
            "SYNOPSIS_COLLECTION_PREFIX": settings.external.collection_prefix,
            **model_env(settings),
            **(env or {}),
        },
    )
    return result.exit_code, result.stdout, result.stderr
