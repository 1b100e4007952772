"""Per-key caps that hold across processes: at most `limit` holders per key at a time.

A count followed by a create lets two requests of one key that arrive together both pass
(and two replicas cannot share a lock in memory). So each key has `limit` numbered slots,
each a lease (`service.index.leases`) that does not end by itself: taking slot i writes
the lease `kind/key/i` — Weaviate refuses the second insert of an id, and a taker reads
its slot back after the settle time, so one holder per slot — and the holder (a job, a
conversation) gives it back when it ends. A slot whose holder ended without giving it
back (a killed process) is freed by the sweeper (`service.retention`).
"""

from __future__ import annotations

import time
from typing import Protocol

__all__ = ["SLOT_SECONDS", "SlotLeases", "Slots"]

#: A slot's lease does not end by itself: its holder, or the sweeper, releases it.
SLOT_SECONDS = 100 * 365 * 24 * 3600.0


class SlotLeases(Protocol):
    """What slots need of a lease store (`service.index.leases.LeaseStore`)."""

    @property
    def settle(self) -> float: ...

    def take(self, name: str, *, holder: str, seconds: float, group: str = "") -> bool: ...

    def holder(self, name: str) -> str | None: ...

    def count(self, group: str) -> int: ...

    def release_held(self, holder: str, *, kind: str) -> int: ...


class Slots:
    """`limit` slots per key of one kind (`jobs`, `conversations`)."""

    def __init__(
        self,
        leases: SlotLeases,
        *,
        kind: str,
        limit: int,
        settle: float | None = None,
    ) -> None:
        self.leases = leases
        self.kind = kind
        self.limit = limit
        self.settle = leases.settle if settle is None else settle

    def take(self, key: str, holder: str) -> bool:
        """A slot of `key` for `holder`; False when all `limit` are held."""
        group = f"{self.kind}\n{key}"
        used = self.leases.count(group)
        if used >= self.limit:
            return False
        # Slots fill from 0, so the first free one is usually at `used`.
        for offset in range(self.limit):
            name = f"{group}\n{(used + offset) % self.limit}"
            if not self.leases.take(name, holder=holder, seconds=SLOT_SECONDS, group=group):
                continue
            time.sleep(self.settle)
            if self.leases.holder(name) == holder:
                return True
        return False

    def held(self, key: str) -> int:
        """How many slots of `key` are held."""
        return self.leases.count(f"{self.kind}\n{key}")

    def release(self, holder: str) -> None:
        """Give back `holder`'s slot (nothing when it has none)."""
        self.leases.release_held(holder, kind=self.kind)
