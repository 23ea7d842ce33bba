"""Persistence of tables.

Table (storage/keys.py), partition `T#{t}#TABLES`:
- `I#{kind}#{name}` an instance: name, staticName, jurisdictions, and its versions with their schemas;
- `S#{kind}#{staticName}` the selection record of a static name: every version of every instance;
- `B#{instance}` how loading a bootstrap resource went.
Instances and selection records carry `version`, the optimistic lock of their revision; a new version
of a table moves both in one transaction. Each version is also an item of its own (`SV#{kind}#{staticName}#{n}`
and `IV#{kind}#{name}#{n}`, n the record's revision that added it); a record lists its versions inline
while they are at most INLINE_ENTRIES, and beyond says `spilled` and its versions are read with one
Query, so a static name may have any number of versions.
- `P#{version}` an upload writing its rows: its final transaction deletes it (must exist), so the
  cleanup job can tell a lost upload (an old `P#`) from one in progress, and claim it;
- `G#{version}` a version no record lists any more (retired, or a claimed lost upload): the cleanup job
  deletes its rows, then this record.

Rows of a lookup or range table version, written before that transaction (a failed upload leaves them
unreachable): `T#{t}#TBLV#{version}#{shard}` / `K#{joined key}` with the row's `values` (lookup) or the
key's `ranges` and `chunkStarts` (range; later chunks at `C#{n}#{joined key}`).

Blobs (`tenants/{t}/...`): `tables/{name}/{version}.csv` the file as uploaded (downloads), and
`tables/{name}/{version}.rows.json` the parsed rows of a constraint table version.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

import simplejson

from chalicelib.core import codes
from chalicelib.core.clock import parse_datetime
from chalicelib.core.errors import ConcurrentModification, DomainError
from chalicelib.storage import blobs, codec, keys, query, table
from chalicelib.storage.keys import Key as Key  # the row key tables.service keeps (it may not import storage)
from chalicelib.storage.unit_of_work import UnitOfWork
from chalicelib.tables.layout import RangeKey, shard_of
from chalicelib.tables.models import BootstrapStatus, Selection, TableInstance, TableKind, VersionEntry

WRITE_THREADS = 8
ITEMS_PER_WRITER_TASK = 500
INLINE_ENTRIES = 100
"""Versions a selection or instance record lists inline: well below the 400 KB of one item."""


def _concurrent_upload() -> DomainError:
    return codes.CONCURRENT_MODIFICATION("Another upload of this table finished first; upload again")


# --- reads ---------------------------------------------------------------------------------------


def selection_key(tenant: str, kind: TableKind, name: str, *, by_static_name: bool) -> Key:
    """The record to choose a version from: the static name's selection record, or one instance."""
    return keys.table_selection(tenant, kind, name) if by_static_name else keys.table_instance(tenant, kind, name)


def read_selection(tenant: str, key: Key) -> Selection | None:
    item = table.gateway().get(keys.tenant_scope(tenant), key)
    return _selection(tenant, item) if item else None


def read_selection_and_row(tenant: str, key: Key, row: Key) -> tuple[Selection | None, dict[str, Any] | None]:
    """Both in one BatchGetItem: a selection record and a row chosen by a guess of its version."""
    items = table.gateway().batch_get(keys.tenant_scope(tenant), [key, row])
    found = {(item["PK"], item["SK"]): item for item in items}
    selection_item, row_item = found.get((key.pk, key.sk)), found.get((row.pk, row.sk))
    return (_selection(tenant, selection_item) if selection_item else None), (_row(row_item) if row_item else None)


def read_row(tenant: str, key: Key) -> dict[str, Any] | None:
    item = table.gateway().get(keys.tenant_scope(tenant), key)
    return _row(item) if item else None


def get_instance(tenant: str, kind: TableKind, name: str) -> TableInstance | None:
    item = table.gateway().get(keys.tenant_scope(tenant), keys.table_instance(tenant, kind, name))
    return _instance(tenant, item) if item else None


def instance_and_selection(
    tenant: str, kind: TableKind, name: str, static_name: str
) -> tuple[TableInstance | None, Selection]:
    """An instance (None when there is none) and its static name's selection record (empty when none)."""
    instance_key, selection_record = (
        keys.table_instance(tenant, kind, name),
        keys.table_selection(tenant, kind, static_name),
    )
    found = {
        item["SK"]: item
        for item in table.gateway().batch_get(keys.tenant_scope(tenant), [instance_key, selection_record])
    }
    instance, selection = found.get(instance_key.sk), found.get(selection_record.sk)
    return (
        (_instance(tenant, instance) if instance else None),
        (_selection(tenant, selection) if selection else Selection()),
    )


def get_selection(tenant: str, kind: TableKind, static_name: str) -> Selection:
    return read_selection(tenant, keys.table_selection(tenant, kind, static_name)) or Selection()


def read_csv(tenant: str, name: str, version: str) -> bytes | None:
    return blobs.get(tenant, _csv_path(name, version))


def read_constraint_rows(tenant: str, name: str, version: str) -> list[dict[str, Any]] | None:
    body = blobs.get(tenant, _rows_path(name, version))
    return simplejson.loads(body, use_decimal=True) if body is not None else None


def read_bootstrap_file(tenant: str, path: str) -> bytes | None:
    return blobs.get(tenant, path)


def bootstrap_statuses(tenant: str) -> list[BootstrapStatus]:
    items = query.all_items(
        table.gateway(), keys.tenant_scope(tenant), keys.tables_partition(tenant), sk_prefix=keys.TABLE_BOOTSTRAP_PREFIX
    )
    return [BootstrapStatus.model_validate(codec.without_keys(item)) for item in items]


def bootstrap_status(tenant: str, instance: str) -> BootstrapStatus | None:
    item = table.gateway().get(keys.tenant_scope(tenant), keys.table_bootstrap_resource(tenant, instance))
    return BootstrapStatus.model_validate(codec.without_keys(item)) if item else None


def row_key(tenant: str, version: str, shards: int, joined_key: str) -> Key:
    return keys.table_row(tenant, version, shard_of(joined_key, shards), joined_key)


def chunk_key(tenant: str, version: str, shards: int, joined_key: str, chunk: int) -> Key:
    return keys.table_range_chunk(tenant, version, shard_of(joined_key, shards), joined_key, chunk)


# --- bulk writes, before the transaction that makes them reachable -------------------------------


def write_lookup_rows(tenant: str, version: str, shards: int, rows: dict[str, dict[str, Any]]) -> None:
    _write(
        tenant,
        ({**row_key(tenant, version, shards, joined).as_dict(), "values": values} for joined, values in rows.items()),
    )


def write_range_rows(tenant: str, version: str, shards: int, rows: dict[str, RangeKey]) -> None:
    def items() -> Iterator[dict[str, Any]]:
        for joined, laid_out in rows.items():
            first, *later = laid_out.chunks
            yield {
                **row_key(tenant, version, shards, joined).as_dict(),
                "ranges": list(first),
                "chunkStarts": list(laid_out.chunk_starts),
            }
            for number, chunk in enumerate(later, start=1):
                yield {**chunk_key(tenant, version, shards, joined, number).as_dict(), "ranges": list(chunk)}

    _write(tenant, items())


def _write(tenant: str, items: Iterator[dict[str, Any]]) -> None:
    """Several BatchWriteItem streams at a time (each call is a network round trip on AWS)."""
    scope, gateway = keys.tenant_scope(tenant), table.gateway()
    pending = list(items)
    slices = [pending[start : start + ITEMS_PER_WRITER_TASK] for start in range(0, len(pending), ITEMS_PER_WRITER_TASK)]
    if len(slices) <= 1:
        gateway.batch_write(scope, pending)
        return
    with ThreadPoolExecutor(max_workers=min(WRITE_THREADS, len(slices))) as pool:
        list(pool.map(lambda part: gateway.batch_write(scope, part), slices))


def store_csv(tenant: str, name: str, version: str, content: bytes) -> None:
    blobs.put(tenant, _csv_path(name, version), content, "text/csv")


def store_constraint_rows(tenant: str, name: str, version: str, rows: list[dict[str, Any]]) -> None:
    blobs.put(tenant, _rows_path(name, version), simplejson.dumps(rows, use_decimal=True).encode(), "application/json")


def _csv_path(name: str, version: str) -> str:
    return f"tables/{name}/{version}.csv"


def _rows_path(name: str, version: str) -> str:
    return f"tables/{name}/{version}.rows.json"


# --- the transaction that makes a version reachable ---------------------------------------------


def mark_pending_upload(tenant: str, kind: TableKind, entry: VersionEntry, now: datetime) -> None:
    """Before the rows of `entry` are written: so a lost upload's rows can be found and deleted."""
    table.gateway().write(
        keys.tenant_scope(tenant),
        table.put(
            {
                **keys.table_pending_upload(tenant, entry.version).as_dict(),
                "entity": "tablePendingUpload",
                **_garbage_body(kind, entry.name, entry.version, entry.shards, now),
            }
        ),
    )


def add_version(uow: UnitOfWork, tenant: str, instance: TableInstance, selection: Selection) -> None:
    """Store `instance` and its static name's `selection` as they are with the new version (the last
    entry of both); each is created when its revision is 0, else updated if still at that revision
    (409 otherwise, and when the cleanup job took the upload for lost)."""
    kind, entry = instance.kind, instance.selection.entries[-1]
    instance_key = keys.table_instance(tenant, kind, instance.name)
    own = instance.selection
    if own.revision == 0:  # first, so a create that lost answers already_exists (the first failed condition)
        uow.add(
            table.put_new(
                {**instance_key.as_dict(), "entity": "tableInstance", **_instance_body(instance), "version": 1},
                lambda: codes.TABLE_ALREADY_EXISTS[kind.value](f"{kind.value} {instance.name} already exists"),
            )
        )
    else:
        uow.add(
            table.update(
                instance_key, _selection_body(own), expected_version=own.revision, on_failure=_concurrent_upload
            )
        )
    selection_record = keys.table_selection(tenant, kind, instance.staticName)
    if selection.revision == 0:
        uow.add(
            table.put_new(
                {
                    **selection_record.as_dict(),
                    "entity": "tableSelection",
                    "kind": kind.value,
                    "staticName": instance.staticName,
                    **_selection_body(selection),
                    "version": 1,
                },
                _concurrent_upload,
            )
        )
    else:
        uow.add(
            table.update(
                selection_record,
                _selection_body(selection),
                expected_version=selection.revision,
                on_failure=_concurrent_upload,
            )
        )
    uow.add(
        table.put_new(
            {
                **keys.table_instance_entry(tenant, kind, instance.name, own.revision + 1).as_dict(),
                **_entry_body(entry),
            },
            _concurrent_upload,
        ),
        table.put_new(
            {
                **keys.table_selection_entry(tenant, kind, instance.staticName, selection.revision + 1).as_dict(),
                **_entry_body(entry),
            },
            _concurrent_upload,
        ),
        table.delete(keys.table_pending_upload(tenant, entry.version), must_exist=True, on_missing=_concurrent_upload),
    )


# --- cleanup -------------------------------------------------------------------------------------


def static_names(tenant: str) -> list[tuple[TableKind, str]]:
    """Every static name with versions (the cleanup job's Query; never on a request path)."""
    items = query.all_items(
        table.gateway(), keys.tenant_scope(tenant), keys.tables_partition(tenant), sk_prefix=keys.TABLE_SELECTION_PREFIX
    )
    return [(TableKind(item["kind"]), item["staticName"]) for item in items]


def retire(tenant: str, kind: TableKind, static_name: str, retired: set[str], now: datetime) -> int:
    """Take the versions `retired` out of the static name's selection record and its instances, and
    record them as garbage, in one transaction per RETIRE_CHUNK versions. Answers how many were retired;
    409 when an upload moved a record meanwhile (the job runs again)."""
    done = 0
    while True:
        selection_key = keys.table_selection(tenant, kind, static_name)
        selection = read_selection(tenant, selection_key) or Selection()
        chunk = [entry for entry in selection.entries if entry.version in retired][:RETIRE_CHUNK]
        if not chunk:
            return done
        gone = {entry.version for entry in chunk}
        ops = [
            *_without(
                tenant, selection_key, selection, gone, keys.table_selection_entry_prefix(kind.value, static_name)
            )
        ]
        for name in sorted({entry.name for entry in chunk}):
            instance = get_instance(tenant, kind, name)
            if instance is not None:
                ops += _without(
                    tenant,
                    keys.table_instance(tenant, kind, name),
                    instance.selection,
                    gone,
                    keys.table_instance_entry_prefix(kind.value, name),
                )
        ops += [
            table.put(
                {
                    **keys.table_garbage(tenant, entry.version).as_dict(),
                    "entity": "tableGarbage",
                    **_garbage_body(kind, entry.name, entry.version, entry.shards, now),
                }
            )
            for entry in chunk
        ]
        table.gateway().transact(keys.tenant_scope(tenant), ops)
        done += len(chunk)


RETIRE_CHUNK = 20
"""Versions retired per transaction: with their entry items, instances and garbage records, within 100."""


def _without(tenant: str, record: Key, selection: Selection, gone: set[str], entry_prefix: str) -> list[table.WriteOp]:
    """The record rewritten without the versions `gone`, and their entry items deleted."""
    kept = Selection(
        entries=tuple(e for e in selection.entries if e.version not in gone),
        schemas=selection.schemas,
        revision=selection.revision,
    )
    entry_items = query.all_items(
        table.gateway(), keys.tenant_scope(tenant), keys.tables_partition(tenant), sk_prefix=entry_prefix
    )
    return [
        table.update(record, _selection_body(kept), expected_version=selection.revision, on_failure=_concurrent_upload),
        *(table.delete(Key(item["PK"], item["SK"])) for item in entry_items if item["version"] in gone),
    ]


def claim_lost_uploads(tenant: str, started_before: datetime) -> int:
    """Uploads that began before `started_before` and never committed become garbage (answers how many)."""
    scope, claimed = keys.tenant_scope(tenant), 0
    for item in query.all_items(
        table.gateway(), scope, keys.tables_partition(tenant), sk_prefix=keys.TABLE_PENDING_UPLOAD_PREFIX
    ):
        if parse_datetime(item["since"]) > started_before:
            continue
        try:
            table.gateway().transact(
                scope,
                [
                    table.delete(Key(item["PK"], item["SK"]), must_exist=True),
                    table.put(
                        {
                            **keys.table_garbage(tenant, item["version"]).as_dict(),
                            "entity": "tableGarbage",
                            **{k: item[k] for k in ("kind", "name", "version", "shards", "since")},
                        }
                    ),
                ],
            )
        except ConcurrentModification:
            continue  # it committed at the last moment: not lost
        claimed += 1
    return claimed


def delete_garbage(tenant: str, recorded_before: datetime) -> tuple[int, int]:
    """Delete the rows of every garbage version recorded before `recorded_before` (Query + BatchWriteItem),
    then its garbage record, so a rerun after a crash repeats harmlessly. Answers (versions, rows)."""
    scope, gateway = keys.tenant_scope(tenant), table.gateway()
    versions = rows = 0
    for item in query.all_items(gateway, scope, keys.tables_partition(tenant), sk_prefix=keys.TABLE_GARBAGE_PREFIX):
        if parse_datetime(item["since"]) > recorded_before:
            continue
        for shard in range(int(item["shards"])):
            found = query.all_items(gateway, scope, keys.table_rows_partition(tenant, item["version"], shard))
            gateway.batch_delete(scope, (Key(row["PK"], row["SK"]) for row in found))
            rows += len(found)
        gateway.write(scope, table.delete(Key(item["PK"], item["SK"])))
        versions += 1
    return versions, rows


def rows_of_version(tenant: str, version: str, shards: int) -> int:
    """How many row items a version has (tests and the cleanup's report)."""
    scope = keys.tenant_scope(tenant)
    return sum(
        len(query.all_items(table.gateway(), scope, keys.table_rows_partition(tenant, version, shard)))
        for shard in range(shards)
    )


def _garbage_body(kind: TableKind, name: str, version: str, shards: int, since: datetime) -> dict[str, Any]:
    return {"kind": kind.value, "name": name, "version": version, "shards": shards, "since": since}


def put_bootstrap_status(uow: UnitOfWork, tenant: str, status: BootstrapStatus, *, first: bool = False) -> None:
    """With `first`, only when the resource has no outcome yet (else the commit raises AlreadyExists)."""
    item = {
        **keys.table_bootstrap_resource(tenant, status.name).as_dict(),
        "entity": "tableBootstrapResource",
        **status.model_dump(),
    }
    uow.add(table.put_new(item) if first else table.put(item))


# --- item <-> model ------------------------------------------------------------------------------


def _selection_body(selection: Selection) -> dict[str, Any]:
    body = selection.model_dump(mode="json", exclude={"revision"})
    spilled = len(selection.entries) > INLINE_ENTRIES
    return {"entries": [] if spilled else body["entries"], "spilled": spilled, "schemas": body["schemas"]}


def _entry_body(entry: VersionEntry) -> dict[str, Any]:
    return {"entity": "tableVersion", **entry.model_dump(mode="json")}


def _instance_body(instance: TableInstance) -> dict[str, Any]:
    body = instance.model_dump(mode="json", exclude={"selection"})
    return {**body, **_selection_body(instance.selection)}


def _selection(tenant: str, item: dict[str, Any]) -> Selection:
    entries = item.get("entries") or []
    if item.get("spilled"):
        prefix = (
            keys.table_instance_entry_prefix(item["kind"], item["name"])
            if item["entity"] == "tableInstance"
            else keys.table_selection_entry_prefix(item["kind"], item["staticName"])
        )
        entries = [
            codec.without_keys(entry)
            for entry in query.all_items(
                table.gateway(), keys.tenant_scope(tenant), keys.tables_partition(tenant), sk_prefix=prefix
            )
        ]
    return Selection.model_validate(
        {"entries": entries, "schemas": item.get("schemas") or {}, "revision": int(item["version"])}
    )


def _instance(tenant: str, item: dict[str, Any]) -> TableInstance:
    return TableInstance.model_validate({**codec.without_keys(item), "selection": _selection(tenant, item)})


def _row(item: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in item.items() if name not in codec.KEY_ATTRIBUTES}
