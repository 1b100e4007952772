"""The CLI module stays light: heavy modules load only in the commands that need them."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_cli_does_not_import_the_pipeline() -> None:
    code = (
        "import sys, service.cli; "
        "print(sorted(m for m in ('pymupdf', 'langchain_ollama', 'loaders', 'weaviate') "
        "if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_a_search_does_not_import_the_loaders_or_the_chat_model() -> None:
    code = (
        "import sys, service.synopsis, service.query.search; "
        "print(sorted(m for m in ('pymupdf', 'langchain_ollama', 'loaders', 'bs4') "
        "if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
