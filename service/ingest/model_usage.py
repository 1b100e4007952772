"""What the model server says of its own work on the summaries: tokens and seconds.

Ollama reports, with each reply, how many prompt tokens it read and output tokens it
wrote and how long each took (`prompt_eval_count`, `prompt_eval_duration`, `eval_count`,
`eval_duration`, `load_duration`, in nanoseconds; langchain-ollama passes them on as
the reply's `response_metadata`). Summed over an ingest's summary calls they say how
much of the summarize stage is the model's own work and how much is waiting around it.

Calls run concurrently, so the seconds of two calls may overlap: `busy_seconds` is the
wall-clock time during which at least one call was being computed (the union of each
call's computing interval, which ends when its reply arrives), comparable with the
stage's wall time; `compute_seconds` is the plain sum.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ModelUsage"]

_NANOSECONDS = 1e9


@dataclass(kw_only=True)
class ModelUsage:
    """Summed counts and durations of the model calls that reported them."""

    calls: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    load_seconds: float = 0.0
    prompt_seconds: float = 0.0
    output_seconds: float = 0.0
    # Each call's computing interval on the monotonic clock: (start, end).
    intervals: list[tuple[float, float]] = field(default_factory=list, repr=False)

    def add(self, metadata: Mapping[str, Any], *, ended_at: float) -> None:
        """Count one reply's `response_metadata`, received at `ended_at`
        (`time.monotonic()`). A reply without Ollama's counts adds nothing."""
        if "eval_count" not in metadata and "prompt_eval_count" not in metadata:
            return
        prompt = _seconds(metadata.get("prompt_eval_duration"))
        output = _seconds(metadata.get("eval_duration"))
        self.calls += 1
        self.prompt_tokens += _count(metadata.get("prompt_eval_count"))
        self.output_tokens += _count(metadata.get("eval_count"))
        self.load_seconds += _seconds(metadata.get("load_duration"))
        self.prompt_seconds += prompt
        self.output_seconds += output
        self.intervals.append((ended_at - prompt - output, ended_at))

    @property
    def compute_seconds(self) -> float:
        """Seconds spent reading prompts and writing replies, summed over the calls."""
        return self.prompt_seconds + self.output_seconds

    @property
    def busy_seconds(self) -> float:
        """Wall-clock seconds during which at least one call was being computed."""
        total = 0.0
        end = float("-inf")
        for start, stop in sorted(self.intervals):
            if stop <= end:
                continue
            total += stop - max(start, end)
            end = stop
        return total

    def to_dict(self) -> dict[str, float | int]:
        """The figures, rounded, without the intervals (as a job's report keeps them)."""
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
            "load_seconds": round(self.load_seconds, 2),
            "prompt_seconds": round(self.prompt_seconds, 2),
            "output_seconds": round(self.output_seconds, 2),
            "busy_seconds": round(self.busy_seconds, 2),
        }

    def since(self, before: ModelUsage) -> ModelUsage:
        """What was added after `before` (a copy taken earlier of this usage)."""
        return ModelUsage(
            calls=self.calls - before.calls,
            prompt_tokens=self.prompt_tokens - before.prompt_tokens,
            output_tokens=self.output_tokens - before.output_tokens,
            load_seconds=self.load_seconds - before.load_seconds,
            prompt_seconds=self.prompt_seconds - before.prompt_seconds,
            output_seconds=self.output_seconds - before.output_seconds,
            intervals=self.intervals[len(before.intervals) :],
        )

    def copy(self) -> ModelUsage:
        return dataclasses.replace(self, intervals=list(self.intervals))

    def merge(self, other: ModelUsage) -> None:
        """Add `other`'s calls to these."""
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.output_tokens += other.output_tokens
        self.load_seconds += other.load_seconds
        self.prompt_seconds += other.prompt_seconds
        self.output_seconds += other.output_seconds
        self.intervals.extend(other.intervals)


def _seconds(value: object) -> float:
    return value / _NANOSECONDS if isinstance(value, int | float) else 0.0


def _count(value: object) -> int:
    return value if isinstance(value, int) else 0
