"""Small Markdown documents that tests write: sections they choose (`write_markdown`), or
six short ones whose summaries only need to exist (`six_sections_markdown`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

__all__ = ["SIX_SECTIONS", "six_sections_markdown", "write_markdown"]


def write_markdown(path: Path, title: str, sections: Mapping[str, str]) -> Path:
    """A Markdown file: `# title`, then one `## header` section per entry."""
    body = "\n\n".join(f"## {header}\n\n{text.strip()}" for header, text in sections.items())
    path.write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
    return path


#: Six short sections, one chunk each: a document whose summaries only need to exist (jobs,
#: faults, cancels), small enough to summarize in seconds with `cheap_settings`, large
#: enough that a held ingest still has several summaries pending.
SIX_SECTIONS = {
    "Installing": "Install Quillmark with `pip install quillmark`; it needs Python 3.10.",
    "Configuring": "Settings live in `quill.toml`; `quill config --show` prints them.",
    "Caching": "Rendered pages are cached in `~/.cache/quillmark`; set `cache_dir` to move it.",
    "Logging": "Logs go to `quill.log`; `log_max_bytes` rotates the file when it grows.",
    "Themes": "A theme is a folder of templates; `quill theme add NAME` installs one.",
    "Publishing": "`quill publish` uploads the rendered site to the configured target.",
}


def six_sections_markdown(title: str = "Quillmark guide") -> str:
    """`SIX_SECTIONS` as one Markdown document."""
    body = "\n\n".join(f"## {header}\n\n{text}" for header, text in SIX_SECTIONS.items())
    return f"# {title}\n\n{body}\n"
