"""Leases in Weaviate: a name held by at most one holder at a time, until a set time.

Collection `Leases` (the name may carry `Settings.external.collection_prefix`): one object per
name, id = uuid5(name), with its holder and the time the lease ends. Ingests hold one per
source while they change it (`service.ingest.locks`), so that two ingests of one source
(several job workers, two replicas, the CLI beside the API) never decide what to delete
from each other's half-written state.

Taking a name inserts its object: Weaviate refuses to insert an id that exists (HTTP
422), so of several takers one wins. A lease whose end has passed (its holder was killed,
or hung past it without renewing) is taken over by replacing the object. Two takers at
the very same moment can both pass (Weaviate's existence check and the write are not one
step; the last write wins), so a taker reads the lease back `LEASE_SETTLE_SECONDS` after
its write (`holder`) before it acts on it, as job claims do (`service.jobs.store`); the
store's `settle` (`Settings.external.lease_settle_seconds`) says how long.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from weaviate.classes.config import DataType, Property
from weaviate.classes.query import Filter
from weaviate.exceptions import UnexpectedStatusCodeError

from service.index.identity import NAMESPACE
from service.index.records import now
from service.index.replication import SETTLE_SECONDS
from service.index.schema import RecordCollection, keyword_property

__all__ = ["LEASE_SETTLE_SECONDS", "LeaseStore", "lease_id"]

#: How long after its write a taker reads a lease back by default (see the module docstring).
LEASE_SETTLE_SECONDS = SETTLE_SECONDS
_LIST_LIMIT = 10_000


def lease_id(name: str) -> uuid.UUID:
    """The object id of the lease on `name`."""
    return uuid.uuid5(NAMESPACE, f"lease\n{name}")


class LeaseStore(RecordCollection):
    """Takes, renews, reads and releases leases through one Weaviate client."""

    collection = "Leases"
    description = "Synopsis: leases (an ingest's hold on a source)"

    def properties(self) -> list[Property]:
        return [
            keyword_property("name"),
            keyword_property("kind"),  # the name's first line: source, jobs, …
            keyword_property("group"),  # leases counted together (`Slots`)
            keyword_property("holder"),
            Property(name="taken_at", data_type=DataType.DATE),
            Property(name="expires_at", data_type=DataType.DATE),
        ]

    @property
    def settle(self) -> float:
        """How long after its write a taker reads a lease back (the replication's)."""
        return self.replication.settle_seconds

    def take(self, name: str, *, holder: str, seconds: float, group: str = "") -> bool:
        """Write a lease on `name` for `holder` unless another holder's is running: True
        when written (read it back with `holder` after the settle time to know it held)."""
        self.ensure_schema()
        object_id = lease_id(name)
        properties = {
            "name": name,
            "kind": name.partition("\n")[0],
            "group": group,
            "holder": holder,
            "taken_at": now(),
            "expires_at": _after(seconds),
        }
        try:
            self._writes.data.insert(uuid=object_id, properties=properties)
            return True
        except UnexpectedStatusCodeError as exc:
            if exc.status_code != 422:
                raise
        current = self._reads.query.fetch_object_by_id(object_id)
        if current is None:
            return False  # released meanwhile: the next attempt inserts
        if current.properties.get("holder") != holder and not _ended(current.properties):
            return False
        self._writes.data.replace(uuid=object_id, properties=properties)
        return True

    def holder(self, name: str) -> str | None:
        """Who holds `name` now (None: nobody, or a lease that has ended)."""
        self.ensure_schema()
        current = self._reads.query.fetch_object_by_id(lease_id(name))
        if current is None or _ended(current.properties):
            return None
        return str(current.properties.get("holder") or "")

    def renew(self, name: str, *, holder: str, seconds: float) -> bool:
        """Extend `holder`'s lease on `name`; False (nothing written) when it is not
        theirs any more."""
        self.ensure_schema()
        object_id = lease_id(name)
        current = self._reads.query.fetch_object_by_id(object_id)
        if current is None or current.properties.get("holder") != holder:
            return False
        self._writes.data.update(uuid=object_id, properties={"expires_at": _after(seconds)})
        return True

    def release(self, name: str, *, holder: str) -> None:
        """Remove `holder`'s lease on `name` (nothing when it is not theirs)."""
        self.ensure_schema()
        object_id = lease_id(name)
        current = self._reads.query.fetch_object_by_id(object_id)
        if current is not None and current.properties.get("holder") == holder:
            self._writes.data.delete_by_id(object_id)

    def count(self, group: str) -> int:
        """How many leases of `group` there are (ended or not)."""
        self.ensure_schema()
        result = self._reads.aggregate.over_all(
            filters=Filter.by_property("group").equal(group), total_count=True
        )
        return result.total_count or 0

    def release_held(self, holder: str, *, kind: str) -> int:
        """Remove every lease of `kind` that `holder` has; how many."""
        self.ensure_schema()
        result = self._writes.data.delete_many(
            where=Filter.by_property("holder").equal(holder)
            & Filter.by_property("kind").equal(kind)
        )
        return int(result.successful)

    def holders(self, kind: str, *, taken_before: dt.datetime | None = None) -> list[str]:
        """The holders of leases of `kind`, only of those taken before `taken_before` when
        given (at most 10,000 leases read)."""
        self.ensure_schema()
        where = Filter.by_property("kind").equal(kind)
        if taken_before is not None:
            where = where & Filter.by_property("taken_at").less_than(taken_before)
        result = self._reads.query.fetch_objects(
            filters=where, limit=_LIST_LIMIT, return_properties=["holder"]
        )
        return sorted({str(obj.properties.get("holder") or "") for obj in result.objects})

    def remove_ended(self, *, before: dt.datetime) -> int:
        """Delete the leases that ended before `before` (their holders are gone); how many."""
        self.ensure_schema()
        result = self._writes.data.delete_many(
            where=Filter.by_property("expires_at").less_than(before)
        )
        return int(result.successful)


def _after(seconds: float) -> dt.datetime:
    return now() + dt.timedelta(seconds=seconds)


def _ended(properties: dict[str, Any]) -> bool:
    ends = properties.get("expires_at")
    return not isinstance(ends, dt.datetime) or ends <= now()
