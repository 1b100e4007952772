"""Collections that several processes create at once (`service.index.schema`): with a fake
client for each way a create can race, and on the real Weaviate with concurrent stores."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from weaviate.exceptions import UnexpectedStatusCodeError, WeaviateQueryError

from service.connections import connect_weaviate
from service.errors import StoreError
from service.index.queries import HybridQuery, SearchFilters
from service.index.schema import ensure_collection, wait_usable
from service.index.store import Store
from service.jobs import JobStore
from service.settings import Settings


def _refused(status: int, message: str) -> UnexpectedStatusCodeError:
    response = httpx.Response(status, json={"error": [{"message": message}]})
    return UnexpectedStatusCodeError("Collection may not have been created properly.", response)


NOT_LOADED = WeaviateQueryError(
    "explorer: list class: search: tried to browse non-existing index for Docs", "GRPC search"
)


class _Query:
    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.calls = 0

    def fetch_objects(self, **_: Any) -> None:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)


class FakeClient:
    """`client.collections.exists/use(name).query.fetch_objects` as a race leaves them."""

    def __init__(self, *, exists: bool, query_failures: list[Exception] | None = None) -> None:
        self._exists = exists
        self.query = _Query(list(query_failures or []))
        self.collections = self

    def exists(self, name: str) -> bool:
        return self._exists

    def use(self, name: str) -> Any:
        return type("Collection", (), {"query": self.query})()


def _create(error: Exception | None, calls: list[str]) -> Callable[[], None]:
    def create() -> None:
        calls.append("create")
        if error is not None:
            raise error

    return create


@pytest.mark.parametrize(
    ("exists", "error", "created", "creates"),
    [
        (False, None, True, 1),
        (True, None, False, 0),
        (False, _refused(422, "class name Docs already exists"), False, 1),
        (False, _refused(422, "updating schema: TYPE_ADD_CLASS: class already exists"), False, 1),
    ],
)
def test_a_create_that_lost_the_race_counts_as_done(
    exists: bool, error: Exception | None, created: bool, creates: int
) -> None:
    client = FakeClient(exists=exists)
    calls: list[str] = []
    assert ensure_collection(client, "Docs", _create(error, calls)) is created  # type: ignore[arg-type]
    assert len(calls) == creates
    assert client.query.calls == 1  # and it answers a query


@pytest.mark.parametrize(
    "error",
    [_refused(422, "property 'x': invalid data type"), _refused(500, "class already exists")],
)
def test_any_other_refusal_is_raised(error: UnexpectedStatusCodeError) -> None:
    with pytest.raises(UnexpectedStatusCodeError):
        ensure_collection(FakeClient(exists=False), "Docs", _create(error, []))  # type: ignore[arg-type]


def test_a_collection_whose_index_is_not_loaded_yet_is_waited_for() -> None:
    client = FakeClient(exists=True, query_failures=[NOT_LOADED, NOT_LOADED])
    assert ensure_collection(client, "Docs", _create(None, [])) is False  # type: ignore[arg-type]
    assert client.query.calls == 3


def test_waiting_is_bounded_and_other_query_errors_pass_through() -> None:
    never = FakeClient(exists=True, query_failures=[NOT_LOADED] * 1000)
    with pytest.raises(StoreError, match="collection Docs was created but answers no query"):
        wait_usable(never, "Docs", timeout=0.0)  # type: ignore[arg-type]
    broken = FakeClient(exists=True, query_failures=[WeaviateQueryError("disk full", "GRPC")])
    with pytest.raises(WeaviateQueryError, match="disk full"):
        wait_usable(broken, "Docs")  # type: ignore[arg-type]


@pytest.mark.integration
def test_stores_created_at_once_by_several_clients_all_work(settings: Settings) -> None:
    prefix = "TestSchemaRace"
    clients = [connect_weaviate(settings) for _ in range(4)]
    errors: list[BaseException] = []
    try:
        for _ in range(3):  # each round from nothing
            Store(clients[0], prefix=prefix).drop()
            JobStore(clients[0], prefix=prefix).drop()
            barrier = threading.Barrier(len(clients))

            def race(client: Any, barrier: threading.Barrier) -> None:
                try:
                    barrier.wait(timeout=30)
                    store = Store(client, prefix=prefix)
                    store.ensure_schema(embedding_model="all-minilm-l6-v2", dimension=384)
                    assert store.source_record("nothing.md") is None
                    jobs = JobStore(client, prefix=prefix)
                    jobs.ensure_schema()
                    assert jobs.get("00000000-0000-0000-0000-000000000001") is None
                except BaseException as exc:
                    errors.append(exc)

            threads = [threading.Thread(target=race, args=(client, barrier)) for client in clients]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=120)
            assert errors == []
    finally:
        Store(clients[0], prefix=prefix).drop()
        JobStore(clients[0], prefix=prefix).drop()
        for client in clients:
            client.close()


@pytest.mark.integration
def test_an_older_collection_gains_the_newer_properties_before_any_read(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import service.index.layout as store_module  # noqa: PLC0415

    client = connect_weaviate(settings)
    try:
        old = Store(client, prefix="TestUpgrade")
        old.drop()
        # As a collection of an older Synopsis: without the properties added since.
        with monkeypatch.context() as patched:
            patched.setattr(store_module, "_ADDED_ORIGINAL_PROPERTIES", ())
            patched.setattr(store_module, "_ADDED_SUMMARY_PROPERTIES", ())
            patched.setattr(store_module, "_ADDED_SOURCE_PROPERTIES", ())
            old.ensure_schema(embedding_model="m", dimension=3)
        names = {p.name for p in client.collections.use(old.originals_name).config.get().properties}
        assert "anchor" not in names
        assert "version" not in names
        # A chunk that older Synopsis wrote: no version, no group, no time.
        axis = [1.0, 0.0, 0.0]
        old_id = client.collections.use(old.originals_name).data.insert(
            properties={"source": "old.md", "content": "The walrus operator.", "chunk_index": 0},
            vector={"content": axis, "summary": axis, "context": axis},
        )

        fresh = Store(client, prefix="TestUpgrade")  # a new process
        assert fresh.embedding_info() is not None
        for name in (old.originals_name, old.summaries_name):
            names = {p.name for p in client.collections.use(name).config.get().properties}
            assert {"version", "version_group", "indexed_at"} <= names, name
        names = {p.name for p in client.collections.use(old.sources_name).config.get().properties}
        assert {"version", "version_group"} <= names
        names = {p.name for p in client.collections.use(old.originals_name).config.get().properties}
        assert "anchor" in names
        assert fresh.source_chunks("nothing.md", limit=5) == ([], 0)  # asks for the anchor

        # The old chunk reads as no version: searched by default whatever group is
        # latest, not by a version filter, and its hit says neither version nor time.
        def found(**filters: Any) -> list[str]:
            query = HybridQuery(
                keywords="walrus",
                vector=axis,
                alpha=0.5,
                limit=5,
                filters=SearchFilters(source="old.md", **filters),
            )
            return [match.id for match in fresh.search_originals(query, use=None)]

        assert found() == [str(old_id)]
        assert found(latest=(("py", "3.11"),)) == [str(old_id)]
        assert found(version="3.11") == []
        assert found(version="*") == [str(old_id)]
        [chunk], _ = fresh.source_chunks("old.md", limit=5)
        assert (chunk.version, chunk.indexed_at) == ("", None)
    finally:
        Store(client, prefix="TestUpgrade").drop()
        client.close()
