"""Relabelling an indexed source: another version label or group for its chunks, its
summaries and its record, in place (nothing is embedded or summarized again, and
`indexed_at` is kept).

The ingest relabels a source it is given with other labels (`service.ingest.pipeline`);
this is for pages that are not ingested again: the pages of a registered source whose
version or group was edited (`Synopsis.edit_registered`). The record is written last,
so a relabel stopped part-way is done again whole by the next one.
"""

from __future__ import annotations

import dataclasses

from service.index.interfaces import IngestStore

__all__ = ["relabel_source"]


def relabel_source(store: IngestStore, source: str, *, version: str, group: str) -> int:
    """Give `source`'s chunks, summaries and record the label `version` and the group
    `group`; how many chunks were relabelled (0 when it is not indexed, or its record
    carries these labels already)."""
    record = store.source_record(source)
    if record is None or (record.version, record.version_group) == (version, group):
        return 0
    originals = store.existing_originals(source)
    store.relabel(
        originals=sorted(originals),
        summaries=sorted(store.existing_summaries(source)),
        version=version,
        version_group=group,
    )
    store.put_source_record(dataclasses.replace(record, version=version, version_group=group))
    return len(originals)
