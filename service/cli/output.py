"""What the commands print beside their results: progress and skipped sources on stderr."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from service.ingest.report import IngestEvent

__all__ = ["err", "note", "print_event"]

#: stderr, where progress and the failures a command carries on past are shown.
err = Console(stderr=True, highlight=False)


def note(message: str) -> None:
    """Show a line of progress on stderr."""
    err.print(f"[dim]{message}[/dim]")


def print_event(event: IngestEvent) -> None:
    """Show an ingest's or a sync's progress event on stderr."""
    if event.stage == "summarize":
        if event.done == event.total or event.done % 5 == 0:
            note(f"  summarized {event.done}/{event.total} (last model call {event.seconds:.1f} s)")
    elif event.stage == "split":
        note(f"{event.source}: {event.total} chunks")
    elif event.stage == "embed":
        note(f"  embedded {event.done}")
    elif event.stage == "source":
        note(f"  {event.message}" if event.message != "unchanged" else f"{event.source}: unchanged")
    elif event.stage == "upgrade":
        note(f"index: {event.message}")
    elif event.stage == "error":
        err.print(f"[red]skipped[/red] {event.message}")
