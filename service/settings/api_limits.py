"""The HTTP API's limits: of a query, a search, a body, an upload, a crawl, the model calls."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from service.errors import ConfigurationError
from service.settings.answers import ANSWER_MAX_K
from service.settings.fields import Section, setting

__all__ = ["MAX_K", "ApiLimits"]

#: The most hits one search returns (`SYNOPSIS_API_MAX_K` may only lower it).
MAX_K = 100


@dataclass(frozen=True, kw_only=True)
class ApiLimits(Section):
    """The HTTP API's limits (`SYNOPSIS_API_MAX_*`, `SYNOPSIS_API_LLM_*`,
    `SYNOPSIS_API_SOURCE_DIRECTORIES`)."""

    TOPIC = "HTTP API limits"
    PREFIX = "api_"

    max_query_chars: int = setting(
        4000, "Characters of a search query or a question, at most (400 beyond)."
    )
    max_k: int = setting(
        100, f"Hits of one search, at most 100 (an answer cites at most {ANSWER_MAX_K} passages)."
    )
    max_body_bytes: int = setting(1_048_576, "Bytes of a JSON request body, at most (413 beyond).")
    llm_workers: int = setting(
        4,
        "Model calls (answers, conversation turns, document summaries) one service process "
        "runs at once, on threads of their own.",
    )
    llm_per_key: int = setting(
        2,
        "Model calls one API key (without keys: everyone) may have running or waiting; one "
        "more is 429 with Retry-After.",
    )
    max_upload_file_bytes: int = setting(
        20_000_000, "Bytes of one uploaded file (or inline `content`), at most."
    )
    max_upload_bytes: int = setting(50_000_000, "Bytes of one `POST /documents` request, at most.")
    max_upload_files: int = setting(50, "Files of one `POST /documents` request, at most.")
    max_crawl_depth: int = setting(5, "`crawl_depth` of a URL job over the API, at most.")
    max_crawl_pages: int = setting(1_000, "`max_pages` of a URL job over the API, at most.")
    source_directories: str = setting(
        "",
        "Absolute directories (comma-separated) under which `POST /sources` may register a "
        "directory source; empty: none (the CLI registers any).",
    )

    def check(self) -> None:
        names = self.variables()
        for attribute in (
            "max_query_chars",
            "max_k",
            "max_body_bytes",
            "llm_workers",
            "llm_per_key",
        ):
            if getattr(self, attribute) < 1:
                raise ConfigurationError(f"{names[attribute]} must be at least 1")
        for directory in self.source_directory_paths:
            if not directory.is_absolute():
                raise ConfigurationError(
                    f"{names['source_directories']}: {str(directory)!r} is not an absolute path"
                )
        if self.max_k > MAX_K:
            raise ConfigurationError(
                f"{names['max_k']} must be at most {MAX_K} (the most hits one search returns)"
            )

    @property
    def source_directory_paths(self) -> tuple[Path, ...]:
        """The directories of `api_source_directories` (empty when it is not set)."""
        return tuple(
            Path(entry.strip()).expanduser()
            for entry in self.source_directories.split(",")
            if entry.strip()
        )
