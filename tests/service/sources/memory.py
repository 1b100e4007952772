"""In-memory stand-ins for unit tests of registered sources: a `SyncIndex` (the real
`Ingestor` and delete over the in-memory store, with a fake chat model and embedder whose
calls are counted) and `MemoryRegistry`, which keeps `SourceRegistry`'s contract
(tests/service/sources/test_registry_contract.py runs the same checks on both)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from service.errors import SourceExistsError, SourceNotFoundError, StoreError
from service.ingest.delete import delete_source
from service.ingest.pipeline import Ingestor
from service.ingest.relabel import relabel_source
from service.ingest.report import IngestReport
from service.ingest.summarize import Summarizer
from service.models.embed import Embedder
from service.sources import RegisteredSource, SourceKind
from tests.service.fakes import MemoryStore

if TYPE_CHECKING:
    from service.ingest.report import IngestEvent


class MemoryIndex:
    """Ingests into and deletes from a `MemoryStore`."""

    def __init__(self, *, max_tokens: int = 500) -> None:
        self.store = MemoryStore()
        self.max_tokens = max_tokens
        self.deleted: list[str] = []
        self.fail_ingest = False
        self.fail_relabel = False
        self.relabelled: list[str] = []

    def ingest_documents(
        self,
        documents: Iterable[Document],
        *,
        on_event: Callable[[IngestEvent], None] | None = None,
        report: IngestReport | None = None,
    ) -> IngestReport:
        summarizer = Summarizer(
            FakeListChatModel(responses=["Says what the page says."] * 1000),
            model_name="fake",
            concurrency=1,
        )
        embedder = Embedder(DeterministicFakeEmbedding(size=8), model="fake-embedding")
        ingestor = Ingestor(
            store=self.store,
            summarizer=summarizer,
            embedder=embedder,
            max_tokens=self.max_tokens,
            min_similarity=-1.0,
        )
        report = ingestor.ingest_documents(documents, report=report)
        if self.fail_ingest:
            report.failed.append("injected: the model went away")
        return report

    def delete_source(self, source: str, *, wait: float = 0.0) -> tuple[int, int]:
        self.deleted.append(source)
        return delete_source(self.store, source)

    def relabel_source(self, source: str, *, version: str, group: str) -> int:
        self.relabelled.append(source)
        if self.fail_relabel:
            raise StoreError("injected: Weaviate went away")
        return relabel_source(self.store, source, version=version, group=group)

    def chunks(self) -> set[tuple[str, object]]:
        """(source, chunk id) of every stored original."""
        return {(r.source, r.id) for r in self.store.originals.values()}


def registered(kind: SourceKind, location: str, **fields: int) -> RegisteredSource:
    return RegisteredSource(
        name="docs",
        kind=kind,
        location=location,
        created_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        **fields,  # type: ignore[arg-type]
    )


class MemoryRegistry:
    """`SourceRegistry`'s contract over a dict: a name registers once, `require` of an
    unknown name is `SourceNotFoundError`, `list` is sorted by name."""

    def __init__(self) -> None:
        self.sources: dict[str, RegisteredSource] = {}

    def ensure_schema(self) -> None:
        pass

    def add(self, source: RegisteredSource) -> None:
        if source.name in self.sources:
            raise SourceExistsError(f"a source named {source.name!r} is registered already")
        self.sources[source.name] = source

    def save(self, source: RegisteredSource) -> None:
        self.sources[source.name] = source

    def get(self, name: str) -> RegisteredSource | None:
        return self.sources.get(name)

    def require(self, name: str) -> RegisteredSource:
        source = self.get(name)
        if source is None:
            raise SourceNotFoundError(f"no source is registered as {name!r}")
        return source

    def exists(self) -> bool:
        return True

    def list(self, *, pages: bool = True) -> list[RegisteredSource]:
        found = [self.sources[name] for name in sorted(self.sources)]
        return found if pages else [dataclasses.replace(s, pages={}) for s in found]

    def remove(self, name: str) -> None:
        self.sources.pop(name, None)
