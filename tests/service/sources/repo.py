"""A temporary git repository for tests: files written, committed, branched."""

from __future__ import annotations

import subprocess
from pathlib import Path


class Repo:
    """A git repository at `path`, committed to by the test (no global git config used)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(self.path), "-c", "user.name=Test", "-c", "user.email=t@example",
             "-c", "commit.gpgsign=false", *args],
            capture_output=True,
            text=True,
            check=True,
        )  # fmt: skip
        return done.stdout.strip()

    def write(self, files: dict[str, str | None]) -> None:
        """Write (or, for None, delete) files, relative to the repository."""
        for name, text in files.items():
            path = self.path / name
            if text is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    def commit(self, files: dict[str, str | None], message: str = "change") -> str:
        """Write `files`, commit everything, and return the new commit's id."""
        self.write(files)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")
