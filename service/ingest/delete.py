"""Deleting a source so that a stop at any step is repaired: the record first says so.

A source is its record, its chunks (OriginalDocuments) and their summaries. Weaviate has
no transaction over the three, so the delete runs in an order that any later run can
finish: the record is marked `deleting` (a tombstone), then the summaries go, then the
chunks, then the record. A process killed anywhere in between leaves the mark:

- the next ingest finishes every marked delete before it reads a source
  (`finish_deletions`), so a source deleted and added again is indexed anew;
- the mark is not `complete`, so nothing treats the source as unchanged;
- and "unchanged" also counts the chunks (`Ingestor`), which catches what a delete
  stopped before this order existed left behind (a `complete` record with no chunks).
"""

from __future__ import annotations

import dataclasses

from service.errors import SourceBusyError
from service.index.interfaces import IngestStore
from service.ingest.locks import SourceLocks

__all__ = ["DELETING", "delete_source", "finish_deletions"]

#: The status of a source record whose delete has begun.
DELETING = "deleting"


def delete_source(store: IngestStore, source: str) -> tuple[int, int]:
    """Remove `source`'s summaries, chunks and record; (chunks, summaries) deleted."""
    record = store.source_record(source)
    if record is not None and record.status != DELETING:
        store.put_source_record(dataclasses.replace(record, status=DELETING))
    summaries = store.delete_summaries(store.existing_summaries(source))
    originals = store.delete_originals(store.existing_originals(source))
    if record is not None:
        store.delete_source_record(source)
    return originals, summaries


def finish_deletions(store: IngestStore, *, locks: SourceLocks | None = None) -> list[str]:
    """Finish every delete that was stopped part-way; the sources it removed. With
    `locks`, a source another ingest or delete holds is left to that one."""
    finished: list[str] = []
    for source in store.sources_in_state(DELETING):
        if locks is None:
            delete_source(store, source)
            finished.append(source)
            continue
        if not locks.acquire(source, wait=0):
            continue
        try:
            locks.confirm(source)
            delete_source(store, source)
            finished.append(source)
        except SourceBusyError:
            continue
        finally:
            locks.release(source)
    return finished
