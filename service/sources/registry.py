"""Registered sources in Weaviate, beside the jobs, so every process and replica sees them:
one object per source in `RegisteredSources` (the name may carry
`Settings.external.collection_prefix`), id = uuid5 of the source's name, its page states and last
report as JSON text. Registering a name twice is refused (Weaviate refuses to insert an
object whose id exists)."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

from weaviate.classes.config import DataType, Property
from weaviate.exceptions import UnexpectedStatusCodeError

from service.errors import SourceExistsError, SourceNotFoundError
from service.index.access import store_errors
from service.index.identity import NAMESPACE
from service.index.schema import RecordCollection, keyword_property, stored_text
from service.sources.records import RegisteredSource, SyncReport

__all__ = ["SourceRegistry"]

_LIST_LIMIT = 10_000


def _id(name: str) -> uuid.UUID:
    return uuid.uuid5(NAMESPACE, f"registered-source\n{name}")


class SourceRegistry(RecordCollection):
    """Reads and writes registered sources through one Weaviate client."""

    collection = "RegisteredSources"
    description = "Synopsis: registered sources that `synopsis sources sync` keeps in sync"

    def properties(self) -> list[Property]:
        return [
            keyword_property("name"),
            keyword_property("kind"),
            stored_text("location"),
            Property(name="crawl_depth", data_type=DataType.INT),
            Property(name="max_pages", data_type=DataType.INT),
            Property(name="created_at", data_type=DataType.DATE),
            Property(name="synced_at", data_type=DataType.DATE),
            stored_text("last_report"),
            stored_text("pages"),
            *_ADDED_PROPERTIES,
        ]

    def ensure_schema(self) -> None:
        """Create the collection unless it exists, and add the properties newer than an
        existing one (its objects read them as unset)."""
        if self._ensured:
            return
        super().ensure_schema()
        collection = self.client.collections.use(self.name)
        present = {p.name for p in collection.config.get().properties}
        for prop in _ADDED_PROPERTIES:
            if prop.name in present:
                continue
            try:
                collection.config.add_property(prop)
            except UnexpectedStatusCodeError:  # another process added it meanwhile
                present = {p.name for p in collection.config.get().properties}
                if prop.name not in present:
                    raise

    def exists(self) -> bool:
        """Whether the collection exists (no source was ever registered when it does not)."""
        return self._ensured or bool(self.client.collections.exists(self.name))

    def add(self, source: RegisteredSource) -> None:
        """Register `source`; `SourceExistsError` when its name is taken."""
        self.ensure_schema()
        if self.get(source.name) is not None:
            raise SourceExistsError(f"a source named {source.name!r} is registered already")
        try:
            self._writes.data.insert(uuid=_id(source.name), properties=_properties(source))
        except UnexpectedStatusCodeError as exc:
            if exc.status_code == 422 and "already exists" in exc.message:
                raise SourceExistsError(
                    f"a source named {source.name!r} is registered already"
                ) from exc
            raise

    def save(self, source: RegisteredSource) -> None:
        """Store `source` over its previous version."""
        self.ensure_schema()
        self._writes.data.replace(uuid=_id(source.name), properties=_properties(source))

    def get(self, name: str) -> RegisteredSource | None:
        """The source registered as `name`, or None."""
        self.ensure_schema()
        found = self._reads.query.fetch_object_by_id(_id(name))
        return None if found is None else _source(found.properties)

    def require(self, name: str) -> RegisteredSource:
        """The source registered as `name`; `SourceNotFoundError` when there is none."""
        source = self.get(name)
        if source is None:
            raise SourceNotFoundError(
                f"no source is registered as {name!r} (see `synopsis sources list`)"
            )
        return source

    def synced_versions(self) -> list[tuple[str, str]]:
        """(group, version) of every registered source that completed a sync (what
        `service.index.versions.latest_versions` reads); none before one is registered."""
        with store_errors(f"reading the versions of {self.name}"):
            sources = self.list(pages=False) if self.exists() else []
        return [
            (source.group, source.version) for source in sources if source.synced_at is not None
        ]

    def list(self, *, pages: bool = True) -> list[RegisteredSource]:
        """Every registered source, by name; without their page states (`pages` empty)
        unless `pages`, which saves reading them all (the scheduler's look-ups)."""
        self.ensure_schema()
        found = self._reads.query.fetch_objects(
            limit=_LIST_LIMIT, return_properties=None if pages else list(_WITHOUT_PAGES)
        )
        return sorted((_source(obj.properties) for obj in found.objects), key=lambda s: s.name)

    def remove(self, name: str) -> None:
        """Forget the source registered as `name` (its indexed pages are not touched)."""
        self.ensure_schema()
        self._writes.data.delete_by_id(_id(name))


#: Properties added after the collection was first released (`ensure_schema` adds them).
_ADDED_PROPERTIES = (
    Property(name="interval_seconds", data_type=DataType.INT),
    Property(name="attempted_at", data_type=DataType.DATE),
    keyword_property("version"),
    keyword_property("group"),
    Property(name="relabel_pending", data_type=DataType.BOOL),
    stored_text("ref"),
    stored_text("subpath"),
    stored_text("commit"),
)
_WITHOUT_PAGES = (
    "name",
    "kind",
    "location",
    "version",
    "group",
    "crawl_depth",
    "max_pages",
    "created_at",
    "synced_at",
    "last_report",
    "interval_seconds",
    "attempted_at",
    "relabel_pending",
    "ref",
    "subpath",
    "commit",
)


def _properties(source: RegisteredSource) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "name": source.name,
        "kind": source.kind,
        "location": source.location,
        "crawl_depth": source.crawl_depth,
        "max_pages": source.max_pages,
        "created_at": source.created_at,
        "interval_seconds": source.interval_seconds,
        "version": source.version,
        "group": source.group,
        "relabel_pending": source.relabel_pending,
        "ref": source.ref,
        "subpath": source.subpath,
        "commit": source.commit,
        "last_report": json.dumps(source.last_report.to_dict()) if source.last_report else "",
        "pages": source.pages_json(),
    }
    # Weaviate keeps no nulls: an unset date stays absent.
    for name in ("synced_at", "attempted_at"):
        if getattr(source, name) is not None:
            properties[name] = getattr(source, name)
    return properties


def _date(value: Any) -> dt.datetime | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value))


def _source(props: Any) -> RegisteredSource:
    report = str(props.get("last_report") or "")
    created = _date(props["created_at"])
    assert created is not None  # written by `add`
    return RegisteredSource(
        name=str(props["name"]),
        kind=props["kind"],
        location=str(props["location"]),
        crawl_depth=int(props.get("crawl_depth") or 0),
        max_pages=int(props.get("max_pages") or 0),
        created_at=created,
        interval_seconds=int(props.get("interval_seconds") or 0),
        version=str(props.get("version") or ""),
        group=str(props.get("group") or ""),
        relabel_pending=bool(props.get("relabel_pending")),
        ref=str(props.get("ref") or ""),
        subpath=str(props.get("subpath") or ""),
        commit=str(props.get("commit") or ""),
        synced_at=_date(props.get("synced_at")),
        attempted_at=_date(props.get("attempted_at")),
        last_report=SyncReport.from_dict(json.loads(report)) if report else None,
        pages=RegisteredSource.pages_from_json(str(props.get("pages") or "")),
    )
