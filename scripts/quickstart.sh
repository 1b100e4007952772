#!/usr/bin/env bash
# The quick start: set everything up, start the local stack, index the Python
# tutorial (or the sources given as arguments), then search and ask.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/bootstrap.sh
uv run synopsis stack up

sources=("$@")
((${#sources[@]})) || sources=(/usr/share/doc/python3.11/html/tutorial/)
uv run synopsis ingest "${sources[@]}"

question="I want to write a Python script that prints numbers from 1 to 30."
echo "==> synopsis search \"$question\""
uv run synopsis search "$question" --k 3
echo "==> synopsis ask \"$question\""
uv run synopsis ask "$question" --k 3
