"""The `synopsis` CLI's errors: one line on stderr and a non-zero exit, never a traceback.

These run without the stack: both servers are configured as external and unreachable
(a closed loopback port), so nothing is started and any connection fails at once.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner

from service.cli import main

_UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing listens there
ENV = {
    "SYNOPSIS_WEAVIATE_URL": _UNREACHABLE,
    "SYNOPSIS_WEAVIATE_GRPC_PORT": "10",
    "SYNOPSIS_OLLAMA_URL": _UNREACHABLE,
    "SYNOPSIS_COLLECTION_PREFIX": "TestCliUnit",
}


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env={**ENV, **(env or {})})
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("search", ""), "the query is empty"),
        (("search", "   "), "the query is empty"),
        (("ask", ""), "the query is empty"),
    ],
)
def test_invalid_requests_fail_before_any_connection(args: tuple[str, ...], message: str) -> None:
    assert _run(*args) == (1, "", f"Error: {message}\n")


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("search", "range", "--k", "0"), "'--k'"),
        (("search", "range", "--alpha", "1.5"), "'--alpha'"),
        (("search", "range", "--mode", "best"), "'--mode'"),
        (("search", "range", "--max-distance", "3"), "'--max-distance'"),
        (("ask", "why?", "--k", "21"), "'--k'"),
    ],
)
def test_bad_options_are_usage_errors(args: tuple[str, ...], option: str) -> None:
    code, stdout, stderr = _run(*args)
    assert (code, stdout) == (2, "")
    assert f"Invalid value for {option}" in stderr.splitlines()[-1]


def test_a_malformed_setting_is_one_line() -> None:
    code, stdout, stderr = _run("search", "range", env={"SYNOPSIS_SEARCH_K": "five"})
    assert (code, stdout) == (1, "")
    assert stderr == (
        "Error: SYNOPSIS_SEARCH_K='five' is invalid: "
        "invalid literal for int() with base 10: 'five'\n"
    )


@pytest.mark.parametrize(
    "args",
    [("search", "range()"), ("ask", "What does range() return?"), ("docs", "list")],
)
def test_an_unreachable_weaviate_is_one_line(args: tuple[str, ...]) -> None:
    code, stdout, stderr = _run(*args)
    assert (code, stdout) == (1, "")
    assert stderr == (
        f"Error: cannot connect to Weaviate at {_UNREACHABLE}: Connection to Weaviate failed. "
        "Details: Error: [Errno 111] Connection refused. "
        f"Is Weaviate running and reachable at {_UNREACHABLE}?\n"
    )


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (("serve", "--host", "0.0.0.0"), {}),
        (("serve", "--host", "10.1.2.3", "--workers", "2"), {}),
        (("serve",), {"SYNOPSIS_API_HOST": "0.0.0.0"}),
        (("serve", "--host", "0.0.0.0"), {"SYNOPSIS_API_ALLOW_OPEN": "false"}),
    ],
)
def test_serve_refuses_an_open_api_beyond_loopback(
    args: tuple[str, ...], env: dict[str, str]
) -> None:
    code, stdout, stderr = _run(*args, env=env)
    assert (code, stdout) == (1, "")
    [line] = stderr.splitlines()
    assert line.startswith("Error: refusing to serve on ")
    assert "without API keys: set SYNOPSIS_API_READ_KEYS, SYNOPSIS_API_WRITE_KEYS" in line
    assert "SYNOPSIS_API_ALLOW_OPEN=true" in line


def test_serve_refuses_a_metrics_directory_it_cannot_create(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    wanted = blocker / "metrics"
    code, stdout, stderr = _run("serve", env={"PROMETHEUS_MULTIPROC_DIR": str(wanted)})
    assert (code, stdout) == (1, "")
    [line] = stderr.splitlines()
    assert line == (
        f"Error: PROMETHEUS_MULTIPROC_DIR={wanted}: cannot be created (Not a directory); "
        "point it at a writable directory or unset it"
    )


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (("serve",), {}),  # loopback
        (("serve", "--host", "0.0.0.0"), {"SYNOPSIS_API_READ_KEYS": "some-read-key"}),
        (("serve", "--host", "0.0.0.0"), {"SYNOPSIS_API_ALLOW_OPEN": "true"}),
        (("serve", "--workers", "3"), {}),  # the parent checks the stack once
    ],
)
def test_serve_opens_the_stack_before_listening(args: tuple[str, ...], env: dict[str, str]) -> None:
    code, stdout, stderr = _run(*args, env=env)
    assert (code, stdout) == (1, "")
    assert stderr.startswith(f"Error: cannot connect to Weaviate at {_UNREACHABLE}: ")
    assert len(stderr.splitlines()) == 1


def test_a_hit_line_ends_with_its_version_and_when_it_was_indexed() -> None:
    import datetime as dt  # noqa: PLC0415

    from service.cli.query import _where  # noqa: PLC0415
    from service.query.search import Hit  # noqa: PLC0415

    hit = Hit(
        id="1", source="a.md", title="", headers=[], chunk_index=0, content="", summary=None,
        score=1.0, leg="joint",
    )  # fmt: skip
    assert _where(hit) == ""  # written before chunks kept them
    at = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.UTC)
    assert _where(dataclasses.replace(hit, version="3.11", indexed_at=at)) == (
        "  (version 3.11, indexed 2026-12-01 09:30 UTC)"
    )
    assert _where(dataclasses.replace(hit, indexed_at=at)) == (
        "  (version none, indexed 2026-12-01 09:30 UTC)"
    )


@pytest.mark.parametrize("name", ["search_k", "search_alpha", "api_host", "max_pages"])
def test_help_texts_name_the_variable_and_the_default_of_a_setting(name: str) -> None:
    from service.cli.defaults import default_of  # noqa: PLC0415
    from service.settings import Settings  # noqa: PLC0415

    assert default_of(name) == f"SYNOPSIS_{name.upper()}, {Settings().value(name)}"
