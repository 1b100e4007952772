"""Balanced packing of sized units into groups under a budget.

Given the token sizes of consecutive units, choose where to cut so that, in order
of priority:

1. as few *glued* boundaries as possible are cut (a paragraph ending with ``:`` and
   what follows it, a code block and the text right after it, …);
2. as few groups as possible are made;
3. group sizes are as even as possible (least sum of squares, which for a fixed
   count and total means sizes closest to total / count).

A group never holds a *hard* boundary (pieces of one re-fenced code block) and
never exceeds the budget, except a group of one unit that alone exceeds it.
This is an exact dynamic programme; because a group can only span as many units
as fit in the budget, it runs in O(units × units-per-group).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["pack"]


def pack(
    sizes: Sequence[int],
    budget: int,
    *,
    separator: int = 1,
    glue: Sequence[bool] | None = None,
    hard: Sequence[bool] | None = None,
) -> list[tuple[int, int]]:
    """Return ``(start, stop)`` index ranges that partition ``range(len(sizes))``.

    Args:
        sizes: size of each unit.
        budget: the largest allowed group size (sum of sizes plus separators).
        separator: the size added between two units of one group.
        glue: ``glue[i]`` asks not to cut between unit ``i`` and ``i + 1``.
        hard: ``hard[i]`` forbids grouping unit ``i`` with unit ``i + 1``.
    """
    n = len(sizes)
    if n == 0:
        return []
    no_flags = [False] * n
    glue_ = glue if glue is not None else no_flags
    hard_ = hard if hard is not None else no_flags
    cuts = [0] * (n + 1)
    count = [0] * (n + 1)
    squares = [0] * (n + 1)
    back = [0] * (n + 1)
    for stop in range(1, n + 1):
        best: tuple[int, int, int] | None = None
        best_start = stop - 1
        total = -separator
        begin = stop
        while begin > 0:
            begin -= 1
            total += sizes[begin] + separator
            if begin < stop - 1 and (total > budget or hard_[begin]):
                break
            candidate = (
                cuts[begin] + (1 if begin > 0 and glue_[begin - 1] else 0),
                count[begin] + 1,
                squares[begin] + total * total,
            )
            if best is None or candidate < best:
                best = candidate
                best_start = begin
        assert best is not None
        cuts[stop], count[stop], squares[stop] = best
        back[stop] = best_start
    ranges: list[tuple[int, int]] = []
    stop = n
    while stop > 0:
        ranges.append((back[stop], stop))
        stop = back[stop]
    ranges.reverse()
    return ranges
