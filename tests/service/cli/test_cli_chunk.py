"""`synopsis chunk`: what would be indexed, as JSON lines or a readable preview (no stack)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from service.cli import main
from splitters.encoding import count_tokens
from tests.loaders.pdfs import sample_pdf

README = """# Tool

Intro text.

## Install

Run this:

```bash
pip install tool
# not a header
```
"""


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_json_lines_have_the_documented_keys(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(README, encoding="utf-8")
    code, stdout, stderr = _run("chunk", str(tmp_path / "README.md"), "--json")

    assert code == 0, stderr
    records = [json.loads(line) for line in stdout.splitlines()]
    assert [(r["headers"], r["chunk_index"]) for r in records] == [
        (["Tool"], 0),
        (["Tool", "Install"], 1),
    ]
    assert records[1]["content"] == "Run this:\n\n```bash\npip install tool\n# not a header\n```"
    for record in records:
        assert set(record) == {"source", "headers", "content", "tokens", "chunk_index"}
        assert record["source"] == str(tmp_path / "README.md")
        assert record["tokens"] == count_tokens(record["content"])


def test_pdf_chunks_name_their_pages(tmp_path: Path) -> None:
    (tmp_path / "manual.pdf").write_bytes(sample_pdf())
    code, stdout, stderr = _run("chunk", str(tmp_path / "manual.pdf"), "--json")

    assert code == 0, stderr
    records = [json.loads(line) for line in stdout.splitlines()]
    assert [(r["headers"][-1], r["page_start"], r["page_end"]) for r in records] == [
        ("Gadget Manual", 1, 1),
        ("Installation", 1, 1),
        ("Usage", 2, 2),
    ]


def test_preview_and_counts_over_a_directory(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(README, encoding="utf-8")
    (tmp_path / "manual.pdf").write_bytes(sample_pdf())
    code, stdout, stderr = _run("chunk", str(tmp_path), "--max-tokens", "100")

    assert code == 0, stderr
    lines = stdout.splitlines()
    assert f"[1] {tmp_path / 'README.md'} § Tool > Install " in "\n".join(lines)
    assert lines[-1].startswith("5 chunks, ")
    assert lines[-1].endswith(" tokens, from 2 documents")


def test_a_source_that_cannot_be_read_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nope.md"
    code, stdout, stderr = _run("chunk", str(missing))

    assert code == 1
    assert "Traceback" not in stdout + stderr
    assert "nope.md" in stderr
    assert stderr.rstrip().splitlines()[-1] == "Error: no chunks: 1 sources failed"
