"""`QueryBatcher`: the query texts of concurrent searches share one embedding call.

A caller that finds no call in flight sends its text at once, alone: a lone search
waits for nothing. Texts that arrive while a call runs queue up; when that call ends,
one of the queued callers sends the queue (at most `max_batch` texts) in one call, and
every caller gets its own vector back. So under load a call carries every query that
arrived during the previous one, and one model request serves many searches.

Failures reach every caller whose text was in the failed call, as the error the call
raised (the embedder turns the model client's errors into `ModelError`); a caller that
waited `wait_timeout` seconds without its text being sent gives up with a `ModelError`.
Callers run in any threads (the API's handlers run in a thread pool); the call itself
runs in the thread of the caller that sends it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence

from service.errors import ModelError, SynopsisError

__all__ = ["EmbedMany", "QueryBatcher"]

#: Embeds texts in one call: a vector per text in their order, or, for a text that alone
#: was refused, the error to raise in its caller.
EmbedMany = Callable[[list[str]], Sequence["list[float] | SynopsisError"]]


class _Waiter:
    """One caller's text, and what it gets back."""

    __slots__ = ("batch", "done", "error", "text", "vector")

    def __init__(self, text: str) -> None:
        self.text = text
        self.done = threading.Event()  # set when the vector or the error is in, or `batch`
        self.vector: list[float] | None = None
        self.error: BaseException | None = None
        self.batch: list[_Waiter] | None = None  # set: this caller sends these texts

    def result(self) -> list[float]:
        if self.error is not None:
            raise self.error
        assert self.vector is not None  # the sender sets one of the two
        return self.vector


class QueryBatcher:
    """Sends the texts of concurrent `embed` calls together (see the module docstring)."""

    def __init__(
        self,
        embed_many: EmbedMany,
        *,
        max_batch: int = 32,
        max_in_flight: int = 1,
        wait_timeout: float | None = None,
    ) -> None:
        if max_batch < 1 or max_in_flight < 1:
            raise ValueError("max_batch and max_in_flight must be at least 1")
        self._embed_many = embed_many
        self.max_batch = max_batch
        self.max_in_flight = max_in_flight
        self.wait_timeout = wait_timeout
        self._lock = threading.Lock()
        self._queue: deque[_Waiter] = deque()
        self._in_flight = 0
        #: Calls sent, and the texts they carried (a text asked twice in one call counts
        #: once): the mean batch size is `texts / calls`.
        self.calls = 0
        self.texts = 0

    def embed(self, text: str) -> list[float]:
        """The vector of `text`, computed alone or with the texts of concurrent callers."""
        waiter = _Waiter(text)
        with self._lock:
            if self._in_flight < self.max_in_flight:
                self._in_flight += 1
                batch: list[_Waiter] | None = [waiter, *self._take(self.max_batch - 1)]
            else:
                self._queue.append(waiter)
                batch = None
        if batch is None:
            batch = self._wait(waiter)
        if batch is not None:
            self._send(batch)
        return waiter.result()

    def _wait(self, waiter: _Waiter) -> list[_Waiter] | None:
        """Wait until `waiter` has its result (None) or is to send a batch (that batch)."""
        if not waiter.done.wait(self.wait_timeout):
            with self._lock:
                queued = waiter in self._queue
                if queued:
                    self._queue.remove(waiter)
            if queued:
                raise ModelError(
                    f"no embedding call could take this query within {self.wait_timeout:g} s: "
                    "the calls before it did not end (the model server is slow or hangs)"
                )
            # Taken into a call meanwhile: the sender sets its result whatever happens.
            waiter.done.wait()
        if waiter.batch is not None and waiter.vector is None and waiter.error is None:
            return waiter.batch
        return None

    def _take(self, count: int) -> list[_Waiter]:
        """Up to `count` queued waiters, oldest first (called under the lock)."""
        taken: list[_Waiter] = []
        while self._queue and len(taken) < count:
            taken.append(self._queue.popleft())
        return taken

    def _send(self, batch: list[_Waiter]) -> None:
        """One call for the texts of `batch`; every waiter in it gets its vector or an error,
        then the next queued texts go to one of their callers to send."""
        try:
            texts = list(dict.fromkeys(waiter.text for waiter in batch))
            with self._lock:
                self.calls += 1
                self.texts += len(texts)
            try:
                found = list(self._embed_many(texts))
            except SynopsisError as exc:
                found = [exc] * len(texts)
            if len(found) != len(texts):
                error = ModelError(
                    f"the embedding model returned {len(found)} vectors for {len(texts)} texts"
                )
                found = [error] * len(texts)
            results = dict(zip(texts, found, strict=True))
            for waiter in batch:
                result = results[waiter.text]
                if isinstance(result, SynopsisError):
                    waiter.error = result
                else:
                    waiter.vector = result
        except BaseException as exc:  # an unexpected error: every waiter must still get one
            for waiter in batch:
                if waiter.vector is None and waiter.error is None:
                    waiter.error = (
                        exc
                        if isinstance(exc, SynopsisError)
                        else ModelError(f"the shared embedding call failed: {exc!r}")
                    )
            raise
        finally:
            for waiter in batch:
                waiter.done.set()
            self._hand_off()

    def _hand_off(self) -> None:
        """Give this call's slot to the oldest queued caller, with the texts queued so far."""
        with self._lock:
            if not self._queue:
                self._in_flight -= 1
                return
            batch = self._take(self.max_batch)
            sender = batch[0]
            sender.batch = batch
        sender.done.set()
