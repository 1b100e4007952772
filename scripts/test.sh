#!/usr/bin/env bash
# The test command: lint, type-check, then the whole test suite (unit and
# integration; integration tests start the local stack on demand).
set -uo pipefail
cd "$(dirname "$0")/.."

uv run --frozen ruff check . || exit 1
uv run --frozen ruff format --check . || exit 1
uv run --frozen mypy || exit 1
uv run --frozen pytest "$@"
status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure" >&2
  exit 1
fi
exit "$status"
