#!/usr/bin/env bash
# The test command: lint, type-check, then the whole test suite (unit and
# integration; integration tests start the local stack on demand). Arguments go to
# pytest (e.g. a file or -k); exit 1 when no test at all was collected.
set -uo pipefail
cd "$(dirname "$0")/.."

uv run --frozen ruff check . || exit 1
uv run --frozen ruff format --check . || exit 1
# mypy's cache lives outside the clone, so a fresh clone reuses it (about 30 s of
# checking on 2 cores becomes a few); mypy compares each file's hash with its cache
# entry, so an entry of other code is never used.
export MYPY_CACHE_DIR="${MYPY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/synopsis/mypy}"
uv run --frozen mypy || exit 1
if [ "$#" -gt 0 ]; then
  # Arguments (a file, -m, -k …) go to one pytest run in one process, as given.
  uv run --frozen pytest --durations=30 "$@"
  status=$?
  if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests: that is a failure" >&2
    exit 1
  fi
  exit "$status"
fi
# The tests that need no stack (the unit and the corpus tests) on two pytest-xdist
# workers (the Python docs are loaded once, by the first worker that reads them); then
# the integration tests in one process, one at a time (they share the one local stack,
# and the model is CPU-bound).
# --durations: each part ends with its 30 slowest tests (docs/testing.md lists them).
uv run --frozen pytest -n 2 -m "not integration" --durations=30
unit=$?
uv run --frozen pytest -m integration --durations=30
stack=$?
if [ "$unit" -eq 5 ] || [ "$stack" -eq 5 ]; then
  echo "pytest collected no tests in one part: that is a failure" >&2
  exit 1
fi
[ "$unit" -eq 0 ] || exit "$unit"
exit "$stack"
