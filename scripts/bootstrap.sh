#!/usr/bin/env bash
# Install what Synopsis needs on a Debian machine and build/cache the local stack.
# Idempotent: later runs find everything in place and take seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

# python3.11-doc, mkdocs-doc and rust-doc: the corpora of the question sets (eval/README.md).
# git-doc … python-sphinx-copybutton-doc: the held-out pages of the other documentation
# generators (tests/loaders/generators.py), which the corpus tests skip where they are absent.
apt_packages=(nlohmann-json3-dev libstb-dev python3.11-doc mkdocs-doc rust-doc maven chromium
  git-doc libcommons-lang3-java-doc lmdb-doc python-itsdangerous-doc python-sphinx-copybutton-doc)
missing=()
for package in "${apt_packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "==> installing Debian packages: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

command -v go >/dev/null || { echo "Go (>= 1.24) is required to build the local stack" >&2; exit 1; }
if ! command -v uv >/dev/null; then
  echo "==> installing uv"
  python3 -m pip install --quiet uv
fi

echo "==> installing Python dependencies (uv.lock)"
# With their bytecode: where PYTHONDONTWRITEBYTECODE is set, Python would otherwise compile
# every module from source in every process (each pytest worker: seconds).
uv sync --frozen --quiet --compile-bytecode

echo "==> building or finding the local stack (cached by version)"
uv run synopsis stack build
