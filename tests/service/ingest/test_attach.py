"""The summary-to-chunk score and the filter that decides what a chunk is given."""

from __future__ import annotations

import math
import uuid

import pytest

from service.index.records import OriginalRecord, SummaryAttachment, SummaryRecord
from service.ingest.attach import attachment, cosine_similarity, summary_record
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
        (0.7, ("Loop over numbers with range().", [1.0, 1.0])),  # 0.707 ≥ 0.7: attached
        (0.71, ("", [1.0, 0.0])),  # below: the chunk keeps its own vector, no text
    ],
)
def test_attachment_keeps_or_filters_by_similarity(
    min_similarity: float, expected: tuple[str, list[float]]
) -> None:
    item = attachment(
        _summary([1.0, 1.0]), content_vector=[1.0, 0.0], min_similarity=min_similarity
    )
    assert item == SummaryAttachment(
        original_id=ORIGINAL.id,
        summary_id=uuid.UUID(int=2),
        text=expected[0],
        vector=expected[1],
        similarity=0.707107,
    )
