"""An in-memory lease store for unit tests: `LeaseStore`'s contract (take, holder, renew,
release, with leases that end) over a dict. The real one is tests of Weaviate's."""

from __future__ import annotations

import threading
import time


class MemoryLeases:
    """Leases by name: (holder, monotonic end)."""

    #: Read-backs need no wait: one process, one dict.
    settle = 0.0

    def __init__(self) -> None:
        self.leases: dict[str, tuple[str, float]] = {}
        self.renewals = 0
        self._lock = threading.Lock()

    def take(self, name: str, *, holder: str, seconds: float) -> bool:
        with self._lock:
            current = self.leases.get(name)
            if current is not None and current[0] != holder and current[1] > time.monotonic():
                return False
            self.leases[name] = (holder, time.monotonic() + seconds)
            return True

    def holder(self, name: str) -> str | None:
        with self._lock:
            current = self.leases.get(name)
        if current is None or current[1] <= time.monotonic():
            return None
        return current[0]

    def renew(self, name: str, *, holder: str, seconds: float) -> bool:
        with self._lock:
            current = self.leases.get(name)
            if current is None or current[0] != holder:
                return False
            self.leases[name] = (holder, time.monotonic() + seconds)
            self.renewals += 1
            return True

    def release(self, name: str, *, holder: str) -> None:
        with self._lock:
            current = self.leases.get(name)
            if current is not None and current[0] == holder:
                del self.leases[name]
