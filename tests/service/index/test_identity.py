"""Deterministic identities: the same inputs always give the same ids, any change a new one."""

from __future__ import annotations

import uuid

import pytest

from service.index.identity import NAMESPACE, chunk_id, content_hash, summary_id

SOURCE = "/usr/share/doc/python3.11/html/tutorial/controlflow.html"
HASH = content_hash("4. More Control Flow Tools > 4.3. The `range()` Function\n\ntext")


def test_content_hash_is_sha256_of_utf8() -> None:
    assert content_hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert content_hash("é") == "4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c"


def test_chunk_id_is_uuid5_of_source_and_hash() -> None:
    expected = uuid.uuid5(NAMESPACE, f"chunk\n{SOURCE}\n{HASH}")
    assert chunk_id(SOURCE, HASH) == expected
    assert chunk_id(SOURCE, HASH) == chunk_id(SOURCE, HASH)
    assert expected.version == 5


def test_summary_id_is_uuid5_of_chunk_model_and_version() -> None:
    chunk = chunk_id(SOURCE, HASH)
    expected = uuid.uuid5(NAMESPACE, f"summary\n{chunk}\nsmollm2-135m-instruct\nv1")
    assert summary_id(chunk, "smollm2-135m-instruct", "v1") == expected


@pytest.mark.parametrize(
    ("source", "chunk_hash"),
    [
        ("/other/controlflow.html", HASH),  # same chunk in another source
        (SOURCE, content_hash("4. More Control Flow Tools\n\ntext")),  # another chunk
    ],
)
def test_chunk_id_changes_with_source_or_content(source: str, chunk_hash: str) -> None:
    assert chunk_id(source, chunk_hash) != chunk_id(SOURCE, HASH)


@pytest.mark.parametrize(
    ("model", "version"),
    [("smollm2-135m-instruct", "v2"), ("llama3.1", "v1")],
)
def test_summary_id_changes_with_model_or_prompt_version(model: str, version: str) -> None:
    chunk = chunk_id(SOURCE, HASH)
    assert summary_id(chunk, model, version) != summary_id(chunk, "smollm2-135m-instruct", "v1")
