"""Deterministic identities of chunks and summaries.

chunk id   = uuid5(NAMESPACE, source_id + chunk content hash)
summary id = uuid5(NAMESPACE, chunk id + model + prompt version)

Re-ingesting an unchanged source therefore yields the same ids, which is what makes
ingestion idempotent: an unchanged chunk is not written again and its summary is not
asked for again; a summary written by another model or prompt version gets another id,
so a stale one is found and replaced (docs/summary-quality.md, "Recorded fallback").
"""

from __future__ import annotations

import hashlib
import uuid

__all__ = ["NAMESPACE", "chunk_id", "content_hash", "summary_id"]

#: Fixed namespace for every Synopsis uuid5.
NAMESPACE = uuid.UUID("5b0c6f1e-8f0e-4d53-9b8e-3c1f2a9d7e10")


def content_hash(text: str) -> str:
    """sha256 hex digest of `text` (UTF-8).

    The same function as `loaders.documents.content_hash`, kept here so that a search
    does not import the loaders (and BeautifulSoup) at start-up."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chunk_id(source_id: str, chunk_hash: str) -> uuid.UUID:
    """The id of the chunk of `source_id` whose content hashes to `chunk_hash`."""
    return uuid.uuid5(NAMESPACE, f"chunk\n{source_id}\n{chunk_hash}")


def summary_id(chunk: uuid.UUID, model: str, prompt_version: str) -> uuid.UUID:
    """The id of the summary of `chunk` written by `model` with prompt `prompt_version`."""
    return uuid.uuid5(NAMESPACE, f"summary\n{chunk}\n{model}\n{prompt_version}")
