"""Whether the guard's strict retry is still worth its model call.

A summary the guard flags is written again with a stricter prompt before the extractive
summary replaces it. With some models that retry almost never passes: SmolLM2-135M's
passed 4 of 100 on the labeled sample, and 3 of those 4 were invented
(docs/summary-quality.md, section 5), so the retry doubled the model calls of a flagged
chunk for nothing. `RetryRate` keeps whether each of the last `WINDOW` retries passed;
once `MIN_JUDGED` have been seen and fewer than `floor` of them passed, a flagged
summary goes straight to the extractive one — except every `PROBE_EVERY`-th, which is
still retried, so that a model (or a corpus) that does better is noticed again.
"""

from __future__ import annotations

import threading
from collections import deque

__all__ = ["MIN_JUDGED", "PROBE_EVERY", "WINDOW", "RetryRate"]

#: The retries the share is taken over (the most recent ones).
WINDOW = 50
#: Retries seen before any is skipped.
MIN_JUDGED = 20
#: While retries are skipped, one flagged summary in this many is still retried.
PROBE_EVERY = 10


class RetryRate:
    """The share of recent strict retries that passed, and whether to try the next."""

    def __init__(self, *, floor: float) -> None:
        self.floor = floor  # 0: always retry
        self._passed: deque[bool] = deque(maxlen=WINDOW)
        self._skipped_in_a_row = 0
        self._lock = threading.Lock()

    def record(self, *, passed: bool) -> None:
        with self._lock:
            self._passed.append(passed)

    @property
    def share(self) -> float | None:
        """The share of the recent retries that passed (None before any)."""
        with self._lock:
            return sum(self._passed) / len(self._passed) if self._passed else None

    def worth_a_retry(self) -> bool:
        """True unless enough recent retries were seen and too few of them passed (then
        every `PROBE_EVERY`-th is still worth one)."""
        with self._lock:
            judged = len(self._passed)
            if self.floor <= 0 or judged < MIN_JUDGED:
                return True
            if sum(self._passed) / judged >= self.floor:
                self._skipped_in_a_row = 0
                return True
            self._skipped_in_a_row += 1
            if self._skipped_in_a_row >= PROBE_EVERY:
                self._skipped_in_a_row = 0
                return True
            return False
