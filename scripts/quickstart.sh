#!/usr/bin/env bash
# The quick start: set everything up, start the local stack and the API, submit the
# Python tutorial (or the sources given as arguments) as an ingest job, then search and
# ask as soon as its chunks are searchable. The summaries keep being written by the API
# in the background; `synopsis docs list` and the search page show how many are pending.
# `synopsis ingest` is the blocking alternative (it returns once every summary exists).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

bash scripts/bootstrap.sh
uv run --frozen synopsis stack up

# The API, in the background (it runs the ingest job); one that already answers is used.
host=127.0.0.1
port="${SYNOPSIS_API_PORT:-8000}"
api="http://$host:$port"
run_dir="$(uv run --frozen python -c 'from service.settings import Settings; print(Settings.from_env().stack.data_dir)')/run"
if curl -fsS "$api/health" >/dev/null 2>&1; then
  echo "==> the API already answers on $api"
  serve_pid="$(cat "$run_dir/api.pid" 2>/dev/null || true)"
else
  mkdir -p "$run_dir"
  synopsis_bin="$(uv run --frozen python -c 'import os, sys; print(os.path.join(os.path.dirname(sys.executable), "synopsis"))')"
  echo "==> starting the API on $api (log: $run_dir/api.log)"
  nohup "$synopsis_bin" serve --host "$host" --port "$port" >>"$run_dir/api.log" 2>&1 </dev/null &
  serve_pid=$!
  echo "$serve_pid" >"$run_dir/api.pid"
  finished=""
  trap '[ -n "$finished" ] || echo "the API still runs: stop it with kill $serve_pid" >&2' EXIT
  until curl -fsS "$api/health" >/dev/null 2>&1; do
    if ! kill -0 "$serve_pid" 2>/dev/null; then
      echo "the API exited while starting; last lines of $run_dir/api.log:" >&2
      tail -n 20 "$run_dir/api.log" >&2
      exit 1
    fi
    sleep 0.5
  done
fi

sources=("$@")
((${#sources[@]})) || sources=(/usr/share/doc/python3.11/html/tutorial/)
echo "==> submitting ${sources[*]} as an ingest job; waiting until its chunks are searchable"
uv run --frozen python scripts/submit_ingest.py --api "$api" "${sources[@]}"

question="I want to write a Python script that prints numbers from 1 to 30."
echo "==> synopsis search \"$question\""
uv run --frozen synopsis search "$question" --k 3
echo "==> first search answered $((SECONDS - started)) s after the quick start began"
echo "==> synopsis ask \"$question\""
uv run --frozen synopsis ask "$question" --k 3

finished=1
echo
echo "The search page: $api/ — it and \`uv run synopsis docs list\` show how many summaries"
echo "are still pending (the API keeps writing them in the background)."
echo "Stop everything:"
if [ -n "${serve_pid:-}" ]; then
  echo "  kill $serve_pid    # the API (its pid is in $run_dir/api.pid)"
fi
echo "  uv run synopsis stack down    # Weaviate and Ollama"
