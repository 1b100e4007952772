"""What an ingest tells its caller: progress events while it runs, a report when it ends.

`service.ingest.pipeline.Ingestor` emits an `IngestEvent` per stage of each source and
returns an `IngestReport`; the CLI, jobs and benchmarks show them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from service.ingest.model_usage import ModelUsage

__all__ = ["STAGES", "IngestEvent", "IngestReport"]

#: "context": embedding each attached summary with its chunk (the `context` vector).
STAGES = ("load", "split", "summarize", "embed", "context", "write")


@dataclass(frozen=True, kw_only=True)
class IngestEvent:
    """Progress of an ingest: a stage of one source, with counts where they apply."""

    stage: str  # one of STAGES, "source" (a source finished), "error", "upgrade" (the
    # index gains what this version stores: `pipeline.Ingestor._upgrade_context`), or
    # "wait": the model is still writing summaries, about twice a second — not progress, a chance
    # for the caller to stop the ingest by raising from its callback; or "held": another
    # ingest holds the source, this one waits for it (bounded by its own limit,
    # SYNOPSIS_INGEST_LOCK_WAIT_SECONDS), about twice a second — alive, not stalled
    source: str
    message: str = ""
    done: int = 0
    total: int = 0
    seconds: float = 0.0  # "summarize": the wall time of the last model call


@dataclass(kw_only=True)
class IngestReport:
    """What an ingest did."""

    sources: int = 0
    unchanged_sources: int = 0
    new_chunks: int = 0
    unchanged_chunks: int = 0
    deleted_chunks: int = 0
    llm_calls: int = 0
    cached_summaries: int = 0
    retried_summaries: int = 0  # flagged by the guard, the stricter retry passed
    extractive_summaries: int = 0  # flagged twice: the extractive fallback was stored
    # Of those, flagged once and not retried: recent strict retries rarely passed
    # (`service.ingest.retry_rate`).
    unretried_summaries: int = 0
    filtered_summaries: int = 0  # scored below the similarity threshold: not attached
    slow_summary_calls: int = 0  # model calls over the summarizer's slow threshold
    timed_out_summaries: int = 0  # every attempt timed out: the extractive one was stored
    objects_written: int = 0
    # What the model server reports of the summary calls: tokens and its own seconds.
    model: ModelUsage = field(default_factory=ModelUsage)
    failed: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    wall_seconds: float = 0.0

    def summary_line(self) -> str:
        """One line for the end of `synopsis ingest`."""
        return (
            f"{self.sources} sources ({self.unchanged_sources} unchanged): "
            f"{self.new_chunks} new, {self.unchanged_chunks} unchanged, "
            f"{self.deleted_chunks} deleted chunks; {self.llm_calls} LLM calls, "
            f"{self.cached_summaries} cached summaries"
            + (
                f" ({self.retried_summaries} retried, {self.extractive_summaries} extractive"
                + (
                    f", {self.unretried_summaries} of them without a retry"
                    if self.unretried_summaries
                    else ""
                )
                + ")"
                if self.retried_summaries or self.extractive_summaries
                else ""
            )
            + (f", {self.filtered_summaries} filtered" if self.filtered_summaries else "")
            + (f"; {self.slow_summary_calls} slow model calls" if self.slow_summary_calls else "")
            + (
                f"; {self.timed_out_summaries} summaries timed out (extractive stored; "
                "SYNOPSIS_SUMMARY_TIMEOUT raises the limit, `synopsis resummarize --kind "
                "extractive` redoes them)"
                if self.timed_out_summaries
                else ""
            )
            + f"; {self.wall_seconds:.1f} s"
            + (f"; {len(self.failed)} sources failed" if self.failed else "")
        )

    def model_line(self) -> str:
        """How much of the summarize stage the model itself computed, and its tokens per
        call ("" when no call reported them)."""
        usage = self.model
        if not usage.calls:
            return ""
        stage = self.seconds.get("summarize", 0.0)
        share = f" ({usage.busy_seconds / stage:.0%} of it)" if stage > 0 else ""
        return (
            f"summarize {stage:.1f} s: the model computing {usage.busy_seconds:.1f} s{share}; "
            f"per call {usage.prompt_tokens / usage.calls:.0f} prompt tokens "
            f"({usage.prompt_seconds / usage.calls:.2f} s), "
            f"{usage.output_tokens / usage.calls:.0f} output tokens "
            f"({usage.output_seconds / usage.calls:.2f} s), over {usage.calls} calls"
        )
