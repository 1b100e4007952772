"""An ingest's (or a delete's) hold on the sources it changes: one holder per source.

Two ingests of one source at once — several job workers, two replicas of the service,
the CLI beside the API — would each decide what to delete from what they read before the
other wrote: the chunks of the one that wrote first stay, orphaned. So an ingest takes a
lease on each source before it reads the source's record and keeps it until the source's
summaries are attached (`service.index.leases`); a second ingest of that source waits
for it, then finds the first one's result (unchanged, or changed and repaired).

- The lease is taken before anything of the source is read, and read back after the
  lease store's settle time before the first write (`confirm`): of two takers at the very
  same moment only one writes. An unchanged source is never written, so it costs no
  settle time.
- A thread renews every held lease each third of `seconds`, for as long as the ingest
  runs, so a long summary call never loses it; a killed process's leases end after
  `seconds` and are taken over. Every call of the ingest has a deadline, so an ingest
  that holds a lease ends.
- A renewal that finds the lease taken (this process was paused past its end) marks the
  source lost: its next `confirm` raises `SourceBusyError` and nothing more is written.

`holding` holds one source for a block (a delete, a relabel, a registered source's sync)
and refuses, with the caller's message, when another holder still has it after `wait`
seconds (by default at once).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Protocol

from service.errors import SourceBusyError

__all__ = ["Leases", "SourceLocks", "holding", "source_lease"]

log = logging.getLogger(__name__)


class Leases(Protocol):
    """What the locks need of a lease store (`service.index.leases.LeaseStore`)."""

    @property
    def settle(self) -> float: ...

    def take(self, name: str, *, holder: str, seconds: float) -> bool: ...

    def holder(self, name: str) -> str | None: ...

    def renew(self, name: str, *, holder: str, seconds: float) -> bool: ...

    def release(self, name: str, *, holder: str) -> None: ...


def source_lease(source: str) -> str:
    """The lease name of `source`."""
    return f"source\n{source}"


def new_holder() -> str:
    """A holder id that names this process (host, pid) and is unique per use."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class SourceLocks:
    """The leases one ingest (or delete) holds, with the thread that renews them.

    `acquire` waits up to `wait` seconds for a source another holder has, calling
    `on_wait` every `poll` seconds (whatever it raises, e.g. a job's stop, ends the wait).
    Close it (or use `with`) to release every lease and stop the renewals.
    """

    def __init__(
        self,
        leases: Leases,
        *,
        seconds: float = 60.0,
        wait: float = 600.0,
        poll: float = 0.5,
        settle: float | None = None,
        on_wait: Callable[[str], None] | None = None,
        holder: str | None = None,
    ) -> None:
        self.leases = leases
        self.seconds = seconds
        self.wait = wait
        self.poll = poll
        self.settle = leases.settle if settle is None else settle
        self.holder = holder or new_holder()
        self._on_wait = on_wait or (lambda _source: None)
        self._held: dict[str, float] = {}  # source → monotonic time its lease was written
        self._lost: set[str] = set()
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._renewer: threading.Thread | None = None

    def __enter__(self) -> SourceLocks:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def acquire(self, source: str, *, wait: float | None = None) -> bool:
        """Take `source`'s lease, waiting up to `wait` (default: the locks' own) seconds
        while another holder has it; False when it is still held after that."""
        deadline = time.monotonic() + (self.wait if wait is None else wait)
        name = source_lease(source)
        while True:
            if self.leases.take(name, holder=self.holder, seconds=self.seconds):
                with self._lock:
                    self._held[source] = time.monotonic()
                    self._lost.discard(source)
                self._start_renewing()
                return True
            if time.monotonic() + self.poll > deadline:
                return False
            self._on_wait(source)
            time.sleep(self.poll)

    def confirm(self, source: str) -> None:
        """Before the first write of `source`: make sure the lease is this holder's
        (after the settle time); `SourceBusyError` when another holder has it."""
        with self._lock:
            taken = self._held.get(source)
            lost = source in self._lost
        if taken is None or lost:
            raise SourceBusyError(f"{source}: this ingest no longer holds it (its lease was lost)")
        remaining = taken + self.settle - time.monotonic()
        if remaining > 0:
            time.sleep(remaining)
        found = self.leases.holder(source_lease(source))
        if found != self.holder:
            with self._lock:
                self._held.pop(source, None)
            raise SourceBusyError(
                f"{source}: another ingest or delete of it took it at the same moment "
                f"({found or 'gone'}); try again"
            )

    def release(self, source: str) -> None:
        """Give `source`'s lease up."""
        with self._lock:
            held = self._held.pop(source, None) is not None
            self._lost.discard(source)
        if held:
            self.leases.release(source_lease(source), holder=self.holder)

    def held(self) -> list[str]:
        """The sources whose lease this holder has."""
        with self._lock:
            return sorted(self._held)

    def close(self) -> None:
        """Release every lease and stop renewing. After a failed release (Weaviate down or
        hung) the rest are left to end by themselves rather than each waiting out its
        call's deadline."""
        self._closed.set()
        held = self.held()
        for index, source in enumerate(held):
            try:
                self.release(source)
            except Exception as exc:
                log.warning(
                    "could not release the leases of %d sources (they end by themselves "
                    "within %g s): %s",
                    len(held) - index,
                    self.seconds,
                    exc,
                )
                break
        if self._renewer is not None and self._renewer is not threading.current_thread():
            self._renewer.join(timeout=10)

    def _start_renewing(self) -> None:
        with self._lock:
            if self._renewer is not None or self._closed.is_set():
                return
            self._renewer = threading.Thread(
                target=self._renew_forever, name="source-leases", daemon=True
            )
        self._renewer.start()

    def _renew_forever(self) -> None:
        while not self._closed.wait(timeout=self.seconds / 3):
            for source in self.held():
                try:
                    kept = self.leases.renew(
                        source_lease(source), holder=self.holder, seconds=self.seconds
                    )
                except Exception as exc:  # Weaviate down: try again next round
                    log.warning("could not renew the lease of %s: %s", source, exc)
                    continue
                if not kept:
                    log.warning("the lease of %s was taken by another holder", source)
                    with self._lock:
                        if source in self._held:
                            self._lost.add(source)


@contextlib.contextmanager
def holding(
    leases: Leases, source: str, *, seconds: float, busy: str, wait: float = 0.0
) -> Iterator[SourceLocks]:
    """Hold `source` for the block, as an ingest holds it: its lease is taken (waiting up
    to `wait` seconds while another holder has it) and confirmed before the block runs,
    and released after it. `SourceBusyError(busy)` when another holder keeps it."""
    with SourceLocks(leases, seconds=seconds) as locks:
        if not locks.acquire(source, wait=wait):
            raise SourceBusyError(busy)
        locks.confirm(source)
        yield locks
