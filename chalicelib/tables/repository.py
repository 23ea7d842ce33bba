"""Persistence of tables.

Table (storage/keys.py), partition `T#{t}#TABLES`:
- `I#{kind}#{name}` an instance: name, staticName, jurisdictions, and its versions with their schemas;
- `S#{kind}#{staticName}` the selection record of a static name: every version of every instance;
- `B#{instance}` how loading a bootstrap resource went.
Instances and selection records carry `version`, the optimistic lock of their revision; a new version
of a table moves both in one transaction.

Rows of a lookup or range table version, written before that transaction (a failed upload leaves them
unreachable): `T#{t}#TBLV#{version}#{shard}` / `K#{joined key}` with the row's `values` (lookup) or the
key's `ranges` and `chunkStarts` (range; later chunks at `C#{n}#{joined key}`).

Blobs (`tenants/{t}/...`): `tables/{name}/{version}.csv` the file as uploaded (downloads), and
`tables/{name}/{version}.rows.json` the parsed rows of a constraint table version.
"""
from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import simplejson

from chalicelib.core.errors import AlreadyExists, ConcurrentModification
from chalicelib.storage import blobs, codec, keys, query, table
from chalicelib.storage.keys import Key
from chalicelib.storage.unit_of_work import UnitOfWork
from chalicelib.tables.layout import RangeKey, shard_of
from chalicelib.tables.models import BootstrapStatus, Selection, TableInstance, TableKind

WRITE_THREADS = 8
ITEMS_PER_WRITER_TASK = 500


def _concurrent_upload() -> ConcurrentModification:
    return ConcurrentModification("Another upload of this table finished first; upload again")


# --- reads ---------------------------------------------------------------------------------------


def selection_key(tenant: str, kind: TableKind, name: str, *, by_static_name: bool) -> Key:
    """The record to choose a version from: the static name's selection record, or one instance."""
    return keys.table_selection(tenant, kind, name) if by_static_name else keys.table_instance(tenant, kind, name)


def read_selection(tenant: str, key: Key) -> Selection | None:
    item = table.gateway().get(keys.tenant_scope(tenant), key)
    return _selection(item) if item else None


def read_selection_and_row(tenant: str, key: Key, row: Key) -> tuple[Selection | None, dict[str, Any] | None]:
    """Both in one BatchGetItem: a selection record and a row chosen by a guess of its version."""
    found = {(item["PK"], item["SK"]): item for item in table.gateway().batch_get(keys.tenant_scope(tenant), [key, row])}
    selection_item, row_item = found.get((key.pk, key.sk)), found.get((row.pk, row.sk))
    return (_selection(selection_item) if selection_item else None), (_row(row_item) if row_item else None)


def read_row(tenant: str, key: Key) -> dict[str, Any] | None:
    item = table.gateway().get(keys.tenant_scope(tenant), key)
    return _row(item) if item else None


def get_instance(tenant: str, kind: TableKind, name: str) -> TableInstance | None:
    item = table.gateway().get(keys.tenant_scope(tenant), keys.table_instance(tenant, kind, name))
    return _instance(item) if item else None


def instance_and_selection(tenant: str, kind: TableKind, name: str,
                           static_name: str) -> tuple[TableInstance | None, Selection]:
    """An instance (None when there is none) and its static name's selection record (empty when none)."""
    instance_key, selection_record = keys.table_instance(tenant, kind, name), keys.table_selection(
        tenant, kind, static_name)
    found = {item["SK"]: item for item in table.gateway().batch_get(keys.tenant_scope(tenant),
                                                                     [instance_key, selection_record])}
    instance, selection = found.get(instance_key.sk), found.get(selection_record.sk)
    return (_instance(instance) if instance else None), (_selection(selection) if selection else Selection())


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
    items = query.all_items(table.gateway(), keys.tenant_scope(tenant), keys.tables_partition(tenant),
                            sk_prefix=keys.TABLE_BOOTSTRAP_PREFIX)
    return [BootstrapStatus.model_validate(codec.without_keys(item)) for item in items]


def row_key(tenant: str, version: str, shards: int, joined_key: str) -> Key:
    return keys.table_row(tenant, version, shard_of(joined_key, shards), joined_key)


def chunk_key(tenant: str, version: str, shards: int, joined_key: str, chunk: int) -> Key:
    return keys.table_range_chunk(tenant, version, shard_of(joined_key, shards), joined_key, chunk)


# --- bulk writes, before the transaction that makes them reachable -------------------------------


def write_lookup_rows(tenant: str, version: str, shards: int, rows: dict[str, dict[str, Any]]) -> None:
    _write(tenant, ({**row_key(tenant, version, shards, joined).as_dict(), "values": values}
                    for joined, values in rows.items()))


def write_range_rows(tenant: str, version: str, shards: int, rows: dict[str, RangeKey]) -> None:
    def items() -> Iterator[dict[str, Any]]:
        for joined, laid_out in rows.items():
            first, *later = laid_out.chunks
            yield {**row_key(tenant, version, shards, joined).as_dict(), "ranges": list(first),
                   "chunkStarts": list(laid_out.chunk_starts)}
            for number, chunk in enumerate(later, start=1):
                yield {**chunk_key(tenant, version, shards, joined, number).as_dict(), "ranges": list(chunk)}

    _write(tenant, items())


def _write(tenant: str, items: Iterator[dict[str, Any]]) -> None:
    """Several BatchWriteItem streams at a time (each call is a network round trip on AWS)."""
    scope, gateway = keys.tenant_scope(tenant), table.gateway()
    pending = list(items)
    slices = [pending[start:start + ITEMS_PER_WRITER_TASK] for start in range(0, len(pending), ITEMS_PER_WRITER_TASK)]
    if len(slices) <= 1:
        gateway.batch_write(scope, pending)
        return
    with ThreadPoolExecutor(max_workers=min(WRITE_THREADS, len(slices))) as pool:
        list(pool.map(lambda part: gateway.batch_write(scope, part), slices))


def store_csv(tenant: str, name: str, version: str, content: bytes) -> None:
    blobs.put(tenant, _csv_path(name, version), content, "text/csv")


def store_constraint_rows(tenant: str, name: str, version: str, rows: list[dict[str, Any]]) -> None:
    blobs.put(tenant, _rows_path(name, version), simplejson.dumps(rows, use_decimal=True).encode(),
              "application/json")


def _csv_path(name: str, version: str) -> str:
    return f"tables/{name}/{version}.csv"


def _rows_path(name: str, version: str) -> str:
    return f"tables/{name}/{version}.rows.json"


# --- the transaction that makes a version reachable ---------------------------------------------


def add_version(uow: UnitOfWork, tenant: str, instance: TableInstance, selection: Selection) -> None:
    """Store `instance` and its static name's `selection` as they are with the new version; each is
    created when its revision is 0, else updated if still at that revision (409 otherwise)."""
    kind = instance.kind
    instance_key = keys.table_instance(tenant, kind, instance.name)
    if instance.selection.revision == 0:
        uow.add(table.put_new({**instance_key.as_dict(), "entity": "tableInstance", **_instance_body(instance),
                               "version": 1},
                              lambda: AlreadyExists(f"{kind.value} {instance.name} already exists",
                                                    code=f"{kind.value}.already_exists")))
    else:
        uow.add(table.update(instance_key, _selection_body(instance.selection),
                             expected_version=instance.selection.revision, on_failure=_concurrent_upload))
    selection_record = keys.table_selection(tenant, kind, instance.staticName)
    if selection.revision == 0:
        uow.add(table.put_new({**selection_record.as_dict(), "entity": "tableSelection", "kind": kind.value,
                               "staticName": instance.staticName, **_selection_body(selection), "version": 1},
                              _concurrent_upload))
    else:
        uow.add(table.update(selection_record, _selection_body(selection), expected_version=selection.revision,
                             on_failure=_concurrent_upload))


def put_bootstrap_status(uow: UnitOfWork, tenant: str, status: BootstrapStatus) -> None:
    uow.add(table.put({**keys.table_bootstrap_resource(tenant, status.name).as_dict(),
                       "entity": "tableBootstrapResource", **status.model_dump()}))


# --- item <-> model ------------------------------------------------------------------------------


def _selection_body(selection: Selection) -> dict[str, Any]:
    body = selection.model_dump(mode="json", exclude={"revision"})
    return {"entries": body["entries"], "schemas": body["schemas"]}


def _instance_body(instance: TableInstance) -> dict[str, Any]:
    body = instance.model_dump(mode="json", exclude={"selection"})
    return {**body, **_selection_body(instance.selection)}


def _selection(item: dict[str, Any]) -> Selection:
    return Selection.model_validate({"entries": item.get("entries") or [], "schemas": item.get("schemas") or {},
                                     "revision": int(item["version"])})


def _instance(item: dict[str, Any]) -> TableInstance:
    return TableInstance.model_validate({**codec.without_keys(item), "selection": _selection(item)})


def _row(item: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in item.items() if name not in codec.KEY_ATTRIBUTES}
