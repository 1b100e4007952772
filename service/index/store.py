"""The store: Synopsis's collections in Weaviate, read and written through one client.

`Store` is the parts of the store in one object, one class per job:

| part                 | module                 | holds                                        |
|----------------------|------------------------|----------------------------------------------|
| `IndexAccess`        | `service.index.access` | client, names, replication, the error rule   |
| `Layout`             | `service.index.layout` | collections' layout, creation and upgrades   |
| `IngestReads`        | `service.index.reads`  | what an ingest reads before it writes        |
| `HybridSearch`       | `service.index.hybrid` | hybrid queries over chunks and summaries     |
| `Browsing`           | `service.index.browse` | sources, chunks, sections, hits' properties  |
| `Writes`             | `service.index.writes` | upserts, attachments, deletes                |

The records they read and write are in `service.index.records`, the query types in
`service.index.queries`, and the one mapper per record type in `service.index.rows`.
What the ingest pipeline and the searcher need of a store is stated as Protocols in
`service.index.interfaces`.
"""

from __future__ import annotations

import weaviate

from service.index.browse import Browsing
from service.index.hybrid import HybridSearch
from service.index.layout import Layout
from service.index.leases import LeaseStore
from service.index.reads import IngestReads
from service.index.replication import Replication
from service.index.writes import Writes

__all__ = ["Store"]


class Store(Layout, IngestReads, HybridSearch, Browsing, Writes):
    """Reads and writes Synopsis's collections through one Weaviate client.

    Building one opens the collections (`Layout.open`): an existing index's layout is
    read, and properties newer than it are added, before any read.
    """

    def __init__(
        self,
        client: weaviate.WeaviateClient,
        *,
        prefix: str = "",
        replication: Replication | None = None,
    ) -> None:
        super().__init__(client, prefix=prefix, replication=replication)
        # The leases ingests and deletes hold on sources (`service.ingest.locks`).
        self.leases = LeaseStore(client, prefix=prefix, replication=self.replication)
        self.open()

    def drop(self) -> None:
        """Delete all three collections and the leases (tests and explicit resets only)."""
        super().drop()
        self.leases.drop()

    def stats(self) -> dict[str, object]:
        """`Browsing.counts`, with the embedding model the collections were built with."""
        return {**self.counts(), "embedding": self.embedding_info()}
