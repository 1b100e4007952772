"""Summary calls and the ingest's own embeddings, taking turns on one model server.

An ingest embeds and attaches its summaries in batches while the chat model still writes
the next ones. On a server with a few CPU cores the two models then compute at once and
slow each other down by more than they overlap: on 2 cores, a 34-chunk page summarized
by the smallest model took 99.6 and 112.5 s with the batches embedded meanwhile, 76.9 and
78.0 s with turns (docs/benchmarks.md, "Summaries and embeddings take turns"; with the
1.5B summarizer, whose calls dwarf the embeddings, the two were even). So, by
default, a batch is embedded in a turn of its own: new summary calls wait, the ones in
flight finish, the batch is embedded and attached, and the summaries go on
(`SYNOPSIS_INGEST_EXCLUSIVE_MODEL_CALLS`).
"""

from __future__ import annotations

import asyncio
import threading

__all__ = ["ModelTurns"]

#: How often a summary call that waits for its turn looks again (seconds).
_POLL_SECONDS = 0.05


class ModelTurns:
    """Counts the summary calls in flight and holds new ones while paused.

    Pauses nest (two ingests sharing one summarizer may each hold one); calls go on once
    every pause is resumed.
    """

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._in_flight = 0
        self._pauses = 0

    async def enter(self) -> None:
        """Wait until no pause holds, then count one call in flight."""
        while True:
            with self._lock:
                if not self._pauses:
                    self._in_flight += 1
                    return
            await asyncio.sleep(_POLL_SECONDS)

    def leave(self) -> None:
        """One call in flight ended (answered, failed or cancelled)."""
        with self._lock:
            self._in_flight -= 1
            self._lock.notify_all()

    def pause(self) -> None:
        """Hold new calls (until `resume`); those in flight go on."""
        with self._lock:
            self._pauses += 1

    def resume(self) -> None:
        """End one `pause`."""
        with self._lock:
            if self._pauses <= 0:
                raise RuntimeError("resume() without a pause")
            self._pauses -= 1

    def wait_idle(self, timeout: float) -> bool:
        """True once no call is in flight; False if one still is after `timeout` seconds."""
        with self._lock:
            return self._lock.wait_for(lambda: self._in_flight == 0, timeout=timeout)

    @property
    def paused(self) -> bool:
        """True while at least one pause holds."""
        with self._lock:
            return self._pauses > 0
