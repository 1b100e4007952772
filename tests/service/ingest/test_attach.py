"""The summary-to-chunk score, the filter that decides what a chunk is given, and the
context vector each kept summary costs."""

from __future__ import annotations

import dataclasses
import math
import uuid
from collections.abc import Sequence

import pytest

from service.index.records import (
    OriginalRecord,
    SummaryAttachment,
    SummaryRecord,
    context_text,
)
from service.ingest.attach import attachment, attachments, cosine_similarity, summary_record
from service.ingest.summarize import SummaryResult

ORIGINAL = OriginalRecord(
    id=uuid.UUID(int=1),
    source="s.md",
    title="T",
    headers=["A", "B"],
    chunk_index=0,
    content="Use `range()` to loop.",
    content_hash="h",
)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([1.0, 0.0], [1.0, 0.0], 1.0),
        ([1.0, 0.0], [0.0, 1.0], 0.0),
        ([1.0, 0.0], [-1.0, 0.0], -1.0),
        ([1.0, 1.0], [1.0, 0.0], 1 / math.sqrt(2)),
        ([0.0, 0.0], [1.0, 0.0], 0.0),
    ],
)
def test_cosine_similarity(a: list[float], b: list[float], expected: float) -> None:
    assert cosine_similarity(a, b) == pytest.approx(expected)


def _summary(vector: list[float]) -> SummaryRecord:
    return summary_record(
        ORIGINAL,
        SummaryResult(text="Loop over numbers with range()."),
        summary_id=uuid.UUID(int=2),
        vector=vector,
        content_vector=[1.0, 0.0],
        model="m",
        prompt_version="v",
    )


def test_the_record_is_scored_against_its_chunk_and_keeps_its_provenance() -> None:
    record = _summary([1.0, 1.0])
    assert record.similarity == 0.707107
    assert (record.original_id, record.model, record.prompt_version) == (
        ORIGINAL.id,
        "m",
        "v",
    )
    assert record.identifiers == ["range"]


@pytest.mark.parametrize(
    ("min_similarity", "expected"),
    [
        # 0.707 ≥ 0.7: attached, with the context vector
        (0.7, ("Loop over numbers with range().", [1.0, 1.0], [0.5, 0.5])),
        # below: the chunk keeps its own vector for both, and no text
        (0.71, ("", [1.0, 0.0], [1.0, 0.0])),
    ],
)
def test_attachment_keeps_or_filters_by_similarity(
    min_similarity: float, expected: tuple[str, list[float], list[float]]
) -> None:
    item = attachment(
        _summary([1.0, 1.0]),
        content_vector=[1.0, 0.0],
        context_vector=[0.5, 0.5],
        min_similarity=min_similarity,
    )
    assert item == SummaryAttachment(
        original_id=ORIGINAL.id,
        summary_id=uuid.UUID(int=2),
        text=expected[0],
        vector=expected[1],
        context_vector=expected[2],
        similarity=0.707107,
        # What the summary is goes with it either way (shown with the chunk).
        kind="llm",
        model="m",
    )


class _Recorder:
    """Embeds each text as [its length, 1] and remembers what it was asked."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return [[float(len(text)), 1.0] for text in texts]


def test_the_context_text_is_the_header_path_the_summary_then_the_chunk() -> None:
    assert context_text(["A", "B"], "Sum.", "Body.") == "A > B\n\nSum.\n\nBody."
    assert context_text([], "", "Body.") == "Body."


def test_attachments_embed_each_kept_summary_with_its_chunk_and_skip_orphans() -> None:
    kept = _summary([1.0, 1.0])  # similarity 0.707
    other = OriginalRecord(**{**ORIGINAL.__dict__, "id": uuid.UUID(int=3)})
    filtered = dataclasses.replace(kept, id=uuid.UUID(int=4), original_id=other.id, similarity=0.1)
    orphan = dataclasses.replace(kept, id=uuid.UUID(int=5), original_id=uuid.UUID(int=9))
    originals = {
        ORIGINAL.id: dataclasses.replace(ORIGINAL, vector=[1.0, 0.0]),
        other.id: dataclasses.replace(other, vector=[0.0, 1.0]),
    }
    embedder = _Recorder()
    items = attachments([kept, filtered, orphan], originals, embedder=embedder, min_similarity=0.5)
    text = context_text(ORIGINAL.headers, kept.summary, ORIGINAL.content)
    assert embedder.texts == [text]  # one embedding: the kept summary's context
    assert [(i.original_id, i.text, i.context_vector) for i in items] == [
        (ORIGINAL.id, kept.summary, [float(len(text)), 1.0]),
        (other.id, "", [0.0, 1.0]),  # filtered: its chunk's own vector
    ]
