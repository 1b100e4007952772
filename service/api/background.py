"""A coroutine that runs beside the app for as long as a lifespan lasts."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine
from typing import Any

__all__ = ["running_beside"]


@contextlib.asynccontextmanager
async def running_beside(work: Coroutine[Any, Any, None]) -> AsyncIterator[None]:
    """Run `work` as a task while the `async with` body runs; cancel it and wait for it
    to end when the body ends."""
    task = asyncio.create_task(work)
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
