"""What the collections hold (`census`) and the invariants that every ingest, delete and
fault must keep (`assert_invariants`): every summary references exactly one existing
original, the one it was written for; every original has exactly one summary, and the
summary attached to it is that one; no chunk (source, content hash) is stored twice."""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass

from weaviate.classes.query import QueryReference

from service.index.store import Store

__all__ = ["Census", "assert_invariants", "census"]


@dataclass(frozen=True, kw_only=True)
class Census:
    """What the collections hold, and every way they break the invariants."""

    originals: Counter[str]  # per source
    summaries: Counter[str]  # per source
    dangling_summaries: list[uuid.UUID]  # reference missing, not one, or not its original_id
    originals_without_one_summary: dict[uuid.UUID, int]  # original → its number of summaries
    duplicate_chunks: list[tuple[str, str]]  # (source, content hash) stored more than once
    # Originals whose attached summary id is not the id of one of their stored summaries.
    unattached_originals: list[uuid.UUID]

    @property
    def broken(self) -> bool:
        return bool(
            self.dangling_summaries or self.originals_without_one_summary or self.duplicate_chunks
        )


def census(store: Store) -> Census:
    """Read both collections whole and check the invariants (module docstring)."""
    originals: dict[uuid.UUID, tuple[str, str]] = {}
    attached: dict[uuid.UUID, str] = {}
    for obj in store.originals.iterator(return_properties=["source", "content_hash", "summary_id"]):
        originals[obj.uuid] = (str(obj.properties["source"]), str(obj.properties["content_hash"]))
        attached[obj.uuid] = str(obj.properties.get("summary_id") or "")
    summary_ids: dict[uuid.UUID, set[str]] = {}
    per_original: Counter[uuid.UUID] = Counter()
    summaries: Counter[str] = Counter()
    dangling: list[uuid.UUID] = []
    for obj in store.summaries.iterator(
        return_properties=["source", "original_id"],
        return_references=QueryReference(link_on="originalDocument", return_properties=[]),
    ):
        summaries[str(obj.properties["source"])] += 1
        reference = obj.references.get("originalDocument") if obj.references else None
        targets = [target.uuid for target in reference.objects] if reference else []
        original_id = uuid.UUID(str(obj.properties["original_id"]))
        if targets != [original_id] or original_id not in originals:
            dangling.append(obj.uuid)
        per_original[original_id] += 1
        summary_ids.setdefault(original_id, set()).add(str(obj.uuid))
    chunks = Counter(originals.values())
    return Census(
        originals=Counter(source for source, _ in originals.values()),
        summaries=summaries,
        dangling_summaries=dangling,
        originals_without_one_summary={
            original: per_original[original]
            for original in originals
            if per_original[original] != 1
        },
        duplicate_chunks=[chunk for chunk, count in chunks.items() if count > 1],
        unattached_originals=[
            original
            for original, summary in attached.items()
            if summary not in summary_ids.get(original, set())
        ],
    )


def assert_invariants(store: Store) -> Census:
    """Fail with the offending ids unless every invariant holds; return the census."""
    found = census(store)
    assert found.dangling_summaries == []
    assert found.originals_without_one_summary == {}
    assert found.duplicate_chunks == []
    assert found.unattached_originals == []
    return found
