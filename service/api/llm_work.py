"""Model calls of the API on threads of their own, with a per-key limit.

Handlers run their blocking calls in worker threads. A model call (an answer, a conversation
turn, a document summary) holds its thread for seconds to minutes, and the event loop's
default executor has min(32, CPUs + 4) threads: six on two cores. Six slow answers of one
key held all six, and every search, listing and job poll of every user waited behind them.

So model work runs on `LlmWork`'s own executor of `api_llm_workers` threads; the default
executor keeps the short calls. A streamed answer needs no thread (the model's reply
arrives over async HTTP) but takes one of the same `api_llm_workers` slots while the model
writes, so the slots bound the model calls this process makes at once; a call beyond them
waits for one. A key (without keys: everyone, as `anonymous`) may have `api_llm_per_key`
calls running or waiting; one more is refused at once with `TooManyRequestsError` (429 and
`Retry-After`), before any work. A call counts until its thread is done: a client that
leaves does not free the slot its call still holds. Both limits are per service process.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
from collections import Counter
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, ParamSpec, TypeVar

from litestar.datastructures import State

from service.errors import TooManyRequestsError
from service.settings import Settings

__all__ = ["LlmWork", "Ticket", "provide_llm_work"]

P = ParamSpec("P")
T = TypeVar("T")

#: What a refused caller is told to wait: a model call takes seconds to minutes.
RETRY_AFTER_SECONDS = 10


class Ticket:
    """One call's claim on its key's share; `release` once (later calls do nothing)."""

    def __init__(self, work: LlmWork, owner: str) -> None:
        self._work = work
        self.owner = owner
        self._released = False

    def release(self) -> None:
        """Give the key's share back."""
        if not self._released:
            self._released = True
            self._work._release(self.owner)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the model slots (waiting for one), then release this ticket."""
        try:
            async with self._work._slots:
                yield
        finally:
            self.release()


class LlmWork:
    """The model calls of one app: `workers` slots (threads), `per_key` calls per caller."""

    def __init__(self, *, workers: int, per_key: int) -> None:
        self.workers = workers
        self.per_key = per_key
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="synopsis-llm")
        self._slots = asyncio.Semaphore(workers)
        self._running: Counter[str] = Counter()

    @classmethod
    def for_settings(cls, settings: Settings) -> LlmWork:
        """The limits of `settings` (`api_llm_workers`, `api_llm_per_key`)."""
        return cls(workers=settings.api_limits.llm_workers, per_key=settings.api_limits.llm_per_key)

    def running(self, owner: str) -> int:
        """The calls of `owner` running or waiting for a slot now."""
        return self._running[owner]

    def claim(self, owner: str) -> Ticket:
        """A ticket for one more call of `owner`; `TooManyRequestsError` past its share.
        Call it on the event loop (the count is not locked)."""
        if self._running[owner] >= self.per_key:
            var = Settings.env_names()["api_llm_per_key"]
            raise TooManyRequestsError(
                f"this key has {self._running[owner]} model calls running or waiting, the most "
                f"it may ({var}={self.per_key}); retry once one has ended",
                retry_after=RETRY_AFTER_SECONDS,
            )
        self._running[owner] += 1
        return Ticket(self, owner)

    def _release(self, owner: str) -> None:
        self._running[owner] -= 1
        if self._running[owner] <= 0:
            del self._running[owner]

    async def run(self, owner: str, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(*args, **kwargs)` in a model thread, as a call of `owner` (who may get
        `TooManyRequestsError` at once). The slot and the share are held until the thread is
        done, even when the awaiting request is cancelled."""
        ticket = self.claim(owner)
        try:
            await self._slots.acquire()
        except BaseException:
            ticket.release()
            raise
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()  # as asyncio.to_thread: the request's context
        call = functools.partial(context.run, fn, *args, **kwargs)
        try:
            future: Future[T] = self._executor.submit(call)
        except BaseException:
            self._slots.release()
            ticket.release()
            raise

        def done(_: Future[T]) -> None:
            self._slots.release()
            ticket.release()

        def done_in_loop(finished: Future[T]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: the app shut down
                loop.call_soon_threadsafe(done, finished)

        future.add_done_callback(done_in_loop)
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        """Stop taking calls; queued ones are cancelled, running ones finish on their own."""
        self._executor.shutdown(wait=False, cancel_futures=True)


def provide_llm_work(state: State) -> LlmWork:
    """The app's `LlmWork` (`create_app`'s lifespan opens it)."""
    work: Any = state.llm_work
    assert isinstance(work, LlmWork)
    return work
