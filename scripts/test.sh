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
# The tests that need no stack (the unit tests and the hostile-input corpus) on two
# pytest-xdist workers (`worksteal`: a worker that runs out takes pending tests from the
# other, so that a few slow tests at the end do not leave a core idle); then the
# integration tests in one process, one at a time (they share the one local stack, and
# the model is CPU-bound on 2 cores).
# Beside the integration tests, at the lowest CPU priority: the corpus tests of the
# loaders and splitters over the Python docs and the site generators' pages (about a
# minute of CPU, no server, no deadline). The integration tests leave about 40 % of the
# two cores idle (they wait on servers they start, stop or hang); at the lowest priority
# those tests take that idle time and yield the cores to the model whenever it computes. The
# hostile-input corpus stays in the first part: its cases race fetch deadlines.
# --durations: each part ends with its 30 slowest tests (docs/testing.md lists them).
beside=(tests/loaders/test_python_docs.py tests/splitters/test_corpus.py tests/loaders/test_generators.py)
ignored=()
for file in "${beside[@]}"; do ignored+=(--ignore "$file"); done
uv run --frozen pytest -n 2 --dist worksteal -m "not integration" "${ignored[@]}" --durations=30
unit=$?
beside_log="$(mktemp -t synopsis-corpus.XXXXXX)"
# Where the kernel groups processes by session (autogroup), nice counts only within a
# session, and Ollama and Weaviate run in sessions of their own: so a session of its own
# whose group has the lowest priority, and nice where there is no such grouping. (This
# script has no job control, so setsid needs no fork and $! is that process.)
setsid sh -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec nice -n 19 "$@"' lowest \
  uv run --frozen pytest -p no:cacheprovider -m "not integration" --durations=30 \
  "${beside[@]}" >"$beside_log" 2>&1 &
beside_pid=$!
# An interrupted run does not leave them running.
trap 'kill "$beside_pid" 2>/dev/null || true' EXIT
uv run --frozen pytest -m integration --durations=30
stack=$?
wait "$beside_pid"
corpus=$?
echo "==> the corpus tests run beside the integration tests:"
cat "$beside_log"
rm -f "$beside_log"
for status in "$unit" "$stack" "$corpus"; do
  if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests in one part: that is a failure" >&2
    exit 1
  fi
done
[ "$unit" -eq 0 ] || exit "$unit"
[ "$corpus" -eq 0 ] || exit "$corpus"
exit "$stack"
