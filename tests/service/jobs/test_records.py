"""Job records: the spec's round trip and how ingest events become progress."""

from __future__ import annotations

from service.ingest.report import IngestEvent
from service.jobs.records import JobFile, JobProgress, JobSpec, ProgressTracker


def test_a_spec_round_trips_through_its_stored_json() -> None:
    files = (
        JobFile(path="/d/uploads/j/000-a.md", source="guide/a.md", content_type="text/markdown"),
        JobFile(path="/d/uploads/j/001-b.pdf", source="b.pdf", content_type="application/pdf",
                title="B", size=12),
    )  # fmt: skip
    for spec in (
        JobSpec(kind="files", files=files),
        JobSpec(kind="url", url="https://docs.example.org/", crawl_depth=2, max_pages=40),
        JobSpec(kind="sync", name="guide"),
        JobSpec(kind="url", url="https://docs.example.org/3.12/", version="3.12"),
    ):
        assert JobSpec.from_json(spec.to_json()) == spec
    # A job stored before specs kept a version has none.
    assert JobSpec.from_json('{"kind": "url", "url": "https://h/"}').version == ""
    assert JobSpec(kind="files", files=files).sources() == ["guide/a.md", "b.pdf"]
    assert JobSpec(kind="url", url="https://h/").sources() == ["https://h/"]
    assert JobSpec(kind="sync", name="guide").sources() == []


def test_progress_ignores_keys_it_does_not_know() -> None:
    assert JobProgress.from_dict({"chunks": 3, "written": 3, "from_a_newer_version": 1}) == (
        JobProgress(chunks=3, written=3)
    )


def _events() -> list[tuple[IngestEvent, float]]:
    return [
        (IngestEvent(stage="split", source="a", total=3), 0.0),
        (IngestEvent(stage="write", source="a", done=3, total=3), 0.1),
        (IngestEvent(stage="split", source="b", total=2), 0.2),
        (IngestEvent(stage="write", source="b", done=2, total=2), 0.3),
        (IngestEvent(stage="source", source="c", message="unchanged"), 0.4),
        (IngestEvent(stage="error", source="d", message="d: HTTP 404"), 0.5),
        (IngestEvent(stage="summarize", source="a", done=1, total=3), 10.0),
        (IngestEvent(stage="summarize", source="a", done=2, total=3), 14.0),
        (IngestEvent(stage="summarize", source="a", done=3, total=3), 18.0),
        (IngestEvent(stage="source", source="a", message="3 summaries attached"), 18.1),
        (IngestEvent(stage="summarize", source="b", done=1, total=2, seconds=3.456), 22.0),
    ]


def test_events_fold_into_progress_per_stage() -> None:
    tracker = ProgressTracker()
    for event, at in _events():
        tracker.observe(event, at=at)
    assert tracker.progress == JobProgress(
        stage="summarize",
        current_source="b",
        sources_loaded=2,
        sources_done=2,
        chunks=5,
        written=5,
        summarized=4,
        summaries_total=5,
        seconds_per_summary=4.0,  # (22 - 10) s over the 3 gaps between 4 summaries
        last_call_seconds=3.46,
        errors=1,
    )
    assert tracker.sources == ["a", "b", "c"]
    assert tracker.errors == ["d: HTTP 404"]


def test_a_repeated_summarize_event_is_not_counted_twice() -> None:
    tracker = ProgressTracker()
    for done in (1, 1, 2):
        tracker.observe(IngestEvent(stage="summarize", source="a", done=done, total=2), at=done)
    assert (tracker.progress.summarized, tracker.progress.summaries_total) == (2, 2)
