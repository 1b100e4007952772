"""Ranking metrics over the in-scope questions: Recall@n and MRR@n.

- Recall@n: the share of questions with at least one relevant hit among the first n.
- MRR@n: the mean of 1 / rank of the first relevant hit (0 when none is in the first n).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from service.evaluation.questions import Query
from service.query.search import Hit

__all__ = ["cutoffs", "first_relevant_rank", "mrr_at", "recall_at", "share", "unique_hits"]


def unique_hits(hits: Iterable[Hit]) -> list[Hit]:
    """The hits in order, each original once (the `both` mode lists some twice)."""
    seen: set[str] = set()
    unique: list[Hit] = []
    for hit in hits:
        if hit.id not in seen:
            seen.add(hit.id)
            unique.append(hit)
    return unique


def first_relevant_rank(query: Query, hits: Sequence[Hit]) -> int | None:
    """1-based rank of the first hit relevant to `query`, or None."""
    for rank, hit in enumerate(hits, start=1):
        if query.is_relevant(hit):
            return rank
    return None


def recall_at(ranks: Sequence[int | None], n: int) -> float:
    """Share of questions whose first relevant hit is in the first `n` (0 for no questions)."""
    if not ranks:
        return 0.0
    return sum(1 for rank in ranks if rank is not None and rank <= n) / len(ranks)


def mrr_at(ranks: Sequence[int | None], n: int) -> float:
    """Mean reciprocal rank, counting only ranks ≤ `n` (0 for no questions)."""
    if not ranks:
        return 0.0
    return sum(1.0 / rank for rank in ranks if rank is not None and rank <= n) / len(ranks)


def cutoffs(k: int) -> tuple[int, ...]:
    """The Recall@n cutoffs reported for a search depth `k`: 1, 5 and k (those ≤ k)."""
    return tuple(sorted({n for n in (1, 5, k) if n <= k}))


def share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0
