"""Persistence of migrations: one item collection per migration (storage/keys.py, "migration"), and its
request in S3 as JSON Lines (one account a line, `migrations/{m}/request.jsonl`; a patched account's line
in an object of its own), which each account's job reads by byte range."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from chalicelib.core.paging import Page, PageRequest
from chalicelib.migration.models import (
    AccountFailures,
    AccountMappings,
    AccountMigration,
    AccountMigrationState,
    Migration,
    MigrationState,
)
from chalicelib.storage import blobs, codec, keys, query, table
from chalicelib.storage.keys import Key
from chalicelib.storage.table import WriteOp
from chalicelib.storage.unit_of_work import UnitOfWork

Record = TypeVar("Record", bound=BaseModel)

COUNTERS = ("processedAccounts", "completedAccounts", "failedAccounts", "errorAccounts")


def _scope(tenant: str) -> str:
    return keys.tenant_scope(tenant)


def _one(model: type[Record], tenant: str, key: Key) -> Record | None:
    item = table.gateway().get(_scope(tenant), key)
    return model.model_validate(codec.without_keys(item)) if item else None


def _page(model: type[Record], tenant: str, migration: str, page: PageRequest, sk_prefix: str) -> Page[Record]:
    """One page of the migration's records whose sort keys start with `sk_prefix`."""
    found = query.page(
        table.gateway(), _scope(tenant), keys.migration_partition(tenant, migration), page, sk_prefix=sk_prefix
    )
    return Page([model.model_validate(codec.without_keys(item)) for item in found.items], found.list_completed)


# --- the request ---------------------------------------------------------------------------------


def request_path(migration: str, name: str = "request") -> str:
    return f"migrations/{migration}/{name}.jsonl"


def put_request(tenant: str, path: str, content: bytes) -> None:
    blobs.put(tenant, path, content, "application/x-ndjson")


def patch_answer_path(migration: str, request: str) -> str:
    """Where a keyed patch keeps its answer for a replay (`request`: IdempotencyClaim.name_for)."""
    return f"migrations/{migration}/patch-answers/{request}.json"


def put_patch_answer(tenant: str, path: str, content: bytes) -> None:
    blobs.put(tenant, path, content, "application/json")


def patch_answer(tenant: str, path: str) -> bytes | None:
    return blobs.get(tenant, path)


def whole_request(tenant: str, path: str) -> bytes:
    return blobs.get(tenant, path) or b""


REQUEST_WINDOW = 1024 * 1024
"""Bytes of the request a run job reads at a time (a ranged GET)."""


def request_lines(tenant: str, path: str, at: int) -> Iterator[tuple[int, bytes]]:
    """The request's non-empty lines from byte `at` on, each with its offset, read REQUEST_WINDOW at a time."""
    carried, offset = b"", at
    while True:
        window = blobs.get_range(tenant, path, at, REQUEST_WINDOW)
        at += len(window)
        if not window:
            if carried:
                yield offset, carried
            return
        lines = (carried + window).split(b"\n")
        carried = lines.pop()
        for line in lines:
            if line:
                yield offset, line
            offset += len(line) + 1


def account_request(tenant: str, account: AccountMigration) -> bytes:
    return blobs.get_range(tenant, account.requestPath, account.requestStart, account.requestLength)


# --- the migration -------------------------------------------------------------------------------


def add(uow: UnitOfWork, tenant: str, migration: Migration) -> None:
    uow.add(
        table.put_new(
            {**keys.migration(tenant, migration.locator).as_dict(), "entity": "migration", **migration.model_dump()}
        )
    )


def get(tenant: str, locator: str) -> Migration | None:
    return _one(Migration, tenant, keys.migration(tenant, locator))


def move(
    tenant: str, migration: Migration, state: MigrationState, *, add: dict[str, int] | None = None, **changes: Any
) -> WriteOp:
    """The migration in `state`, on condition that it is still at its version (else 409); `add` to its counters."""
    op = table.update(
        keys.migration(tenant, migration.locator),
        {"migrationState": state.value, "updatedAt": migration.updatedAt, **changes},
        expected_version=migration.version,
    )
    if add:
        op.params["UpdateExpression"] += " ADD " + ", ".join(f"#a{i} :a{i}" for i in range(len(add)))
        op.params["ExpressionAttributeNames"].update({f"#a{i}": name for i, name in enumerate(add)})
        op.params["ExpressionAttributeValues"].update(
            {f":a{i}": codec.serialize_value(delta) for i, delta in enumerate(add.values())}
        )
    return op


def count(tenant: str, migration: str, deltas: dict[str, int]) -> WriteOp:
    """ADD to the migration's counters (no version: every account's final write adds to them at once)."""
    names = {f"#c{i}": name for i, name in enumerate(deltas)}
    values = {f":c{i}": codec.serialize_value(delta) for i, delta in enumerate(deltas.values())}
    key = keys.migration(tenant, migration)
    return WriteOp(
        "Update",
        {
            "Key": codec.serialize(key.as_dict()),
            "UpdateExpression": "ADD " + ", ".join(f"#c{i} :c{i}" for i in range(len(deltas))),
            "ConditionExpression": "attribute_exists(PK)",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        },
        key,
    )


# --- its accounts ----------------------------------------------------------------------------------


def account_write(
    tenant: str,
    migration: str,
    account: AccountMigration,
    *,
    new: bool = False,
    while_in: AccountMigrationState | None = None,
) -> WriteOp:
    """The account's state item; `while_in`: on condition that the account is in that state (else 409)."""
    item = {
        **keys.migration_account(tenant, migration, account.accountLocator).as_dict(),
        "entity": "migrationAccount",
        **account.model_dump(),
    }
    if new:
        return table.put_new(item)
    op = table.put(item)
    if while_in is not None:
        op.params.update(
            {
                "ConditionExpression": "accountMigrationState = :while",
                "ExpressionAttributeValues": {":while": codec.serialize_value(while_in.value)},
            }
        )
    return op


def follow_up_done(tenant: str, migration: str, account_locator: str, done: int, *, last: bool) -> WriteOp:
    """The account's follow-up writes counted one more, on condition that `done` were (the last removes its
    path): a retried follow-up write fails rather than writing twice."""
    key = keys.migration_account(tenant, migration, account_locator)
    return WriteOp(
        "Update",
        {
            "Key": codec.serialize(key.as_dict()),
            "UpdateExpression": "SET followUpsDone = :next" + (" REMOVE followUpPath" if last else ""),
            "ConditionExpression": "followUpsDone = :done",
            "ExpressionAttributeValues": {
                ":next": codec.serialize_value(done + 1),
                ":done": codec.serialize_value(done),
            },
        },
        key,
    )


# --- a staged account (service._commit_account) ------------------------------------------------------

GATE, STAGED, DEFERRED = "gate", "staged", "deferred"
INDEXED = tuple(f"{index}PK" for index in table.INDEXES)


def split(ops: list[WriteOp], account: str) -> dict[str, list[WriteOp]]:
    """An account's writes by when they are written: `STAGED` before its commit (what nothing a client or a job
    can reach before it: puts of new records without an index attribute, in no partition that names the
    account, whose locator a client may know, but its lattices, read by locator or by policy; rewritten as plain
    puts, so that a rerun rewrites them), `GATE` in the commit (every update and delete, whatever an index
    lists or the account's partitions hold, numbers), `DEFERRED` after it (jobs and due entries, which act on
    records)."""
    found: dict[str, list[WriteOp]] = {GATE: [], STAGED: [], DEFERRED: []}
    for op in ops:
        item = op.params.get("Item") or {}
        entity = item.get("entity", {}).get("S")
        if op.action == "Put" and entity in ("job", "dueEntry"):
            found[DEFERRED].append(op)
        elif (
            op.action != "Put"
            or entity == "numberGuard"
            or any(name in item for name in INDEXED)
            or (account in op.key.pk and not op.key.sk.startswith(keys.BILLING_LATTICE_PREFIX))
            or op.params.get("ConditionExpression", NEW) != NEW
        ):
            found[GATE].append(op)
        else:
            found[STAGED].append(WriteOp("Put", {"Item": item}, op.key))
    return found


NEW = "attribute_not_exists(PK)"


def write_staged(tenant: str, ops: list[WriteOp]) -> None:
    """The staged writes, as many to a TransactWriteItems as it holds (`table.chunked`: deterministic)."""
    for chunk in table.chunked(
        [[op] for op in ops], table.MAX_TRANSACTION_ITEMS, table.MAX_WRITE_BYTES, table.request_size
    ):
        write_chunk(tenant, chunk)


def size(ops: list[WriteOp]) -> int:
    """What the writes add to a TransactWriteItems request, in bytes of JSON (`table.request_size`)."""
    return sum(table.request_size(op) for op in ops)


def write_chunk(tenant: str, chunk: list[WriteOp]) -> None:
    table.gateway().transact(_scope(tenant), chunk)


def follow_up_content(ops: list[WriteOp], events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return json.dumps(
        {
            "ops": [{"action": op.action, "params": op.params, "pk": op.key.pk, "sk": op.key.sk} for op in ops],
            "events": [{"type": event_type, "data": codec.serialize(data)} for event_type, data in events],
        }
    ).encode()


def follow_up_actions(content: bytes) -> list[tuple[WriteOp, dict[str, Any]] | tuple[str, dict[str, Any]]]:
    """The follow-up's actions in order: (its write, the item it puts) for each write, then (type, data) for each
    event."""
    given = json.loads(content)
    return [
        (WriteOp(op["action"], op["params"], Key(op["pk"], op["sk"])), codec.deserialize(op["params"]["Item"]))
        for op in given["ops"]
    ] + [(event["type"], codec.deserialize(event["data"])) for event in given["events"]]


def follow_up_path(migration: str, account_locator: str) -> str:
    return f"migrations/{migration}/follow-ups/{account_locator}.json"


def put_follow_up(tenant: str, path: str, content: bytes) -> None:
    blobs.put(tenant, path, content, "application/json")


def follow_up(tenant: str, path: str) -> bytes | None:
    return blobs.get(tenant, path)


def get_with_account(
    tenant: str,
    migration: str,
    account_locator: str,
    also: Sequence[tuple[str, str]] = (),
) -> tuple[Migration | None, AccountMigration | None, dict[tuple[str, str], dict[str, Any]]]:
    """The migration and one of its accounts' state, and the items at the (PK, SK) of `also` as stored (by (PK, SK):
    the account's job item, the tenant's deployment pointer), in one (strongly consistent) BatchGetItem."""
    root, state = keys.migration(tenant, migration), keys.migration_account(tenant, migration, account_locator)
    wanted = [root, state, *(Key(pk, sk) for pk, sk in also)]
    found = {(item["PK"], item["SK"]): item for item in table.gateway().batch_get(_scope(tenant), wanted)}
    kept = found.get((root.pk, root.sk)), found.get((state.pk, state.sk))
    return (
        Migration.model_validate(codec.without_keys(kept[0])) if kept[0] is not None else None,
        AccountMigration.model_validate(codec.without_keys(kept[1])) if kept[1] is not None else None,
        found,
    )


def get_account(tenant: str, migration: str, account_locator: str) -> AccountMigration | None:
    return _one(AccountMigration, tenant, keys.migration_account(tenant, migration, account_locator))


def accounts(tenant: str, migration: str, page: PageRequest) -> Page[AccountMigration]:
    return _page(AccountMigration, tenant, migration, page, keys.MIGRATION_ACCOUNT_PREFIX)


def every_account(tenant: str, migration: str) -> Iterator[AccountMigration]:
    """Every account of the migration, a Query page (1 MB) at a time (jobs only)."""
    gateway, start_key = table.gateway(), None
    while True:
        batch, start_key = gateway.query(
            _scope(tenant),
            keys.migration_partition(tenant, migration),
            sk_prefix=keys.MIGRATION_ACCOUNT_PREFIX,
            start_key=start_key,
            consistent=True,
        )
        yield from (AccountMigration.model_validate(codec.without_keys(item)) for item in batch)
        if start_key is None:
            return


def accounts_page(
    tenant: str, migration: str, limit: int, *, start_key: dict[str, Any] | None = None
) -> tuple[list[AccountMigration], dict[str, Any] | None]:
    """Up to `limit` account state items of the migration after `start_key`, and where the next page starts."""
    batch, following = table.gateway().query(
        _scope(tenant),
        keys.migration_partition(tenant, migration),
        sk_prefix=keys.MIGRATION_ACCOUNT_PREFIX,
        start_key=start_key,
        limit=limit,
        consistent=True,
    )
    return [AccountMigration.model_validate(codec.without_keys(item)) for item in batch], following


# --- mappings and failures -------------------------------------------------------------------------


def mapping_write(tenant: str, mappings: AccountMappings) -> WriteOp:
    return table.put(
        {
            **keys.migration_mapping(tenant, mappings.migrationLocator, mappings.accountLocator).as_dict(),
            "entity": "migrationMapping",
            **mappings.model_dump(),
        }
    )


def invoices_write(tenant: str, account_locator: str, migration: str, invoices: dict[str, str]) -> WriteOp:
    """The invoices the migration brings to the account, original id -> locator (in the account's commit)."""
    return table.put(
        {
            **keys.migrated_invoices(tenant, account_locator, migration).as_dict(),
            "entity": "migratedInvoices",
            "invoices": invoices,
        }
    )


def migrated_invoices(tenant: str, account_locator: str) -> dict[str, tuple[str, str]]:
    """The invoices earlier migrations brought to the account: original id -> (locator, migration); one
    strongly consistent Query a MB (an item per migration)."""
    gateway, start_key = table.gateway(), None
    found: dict[str, tuple[str, str]] = {}
    while True:
        batch, start_key = gateway.query(
            _scope(tenant),
            keys.migrated_invoices_partition(tenant, account_locator),
            start_key=start_key,
            consistent=True,
        )
        for item in batch:
            found.update({original: (locator, item["SK"]) for original, locator in item["invoices"].items()})
        if start_key is None:
            return found


def get_mappings(tenant: str, migration: str, account_locator: str) -> AccountMappings | None:
    return _one(AccountMappings, tenant, keys.migration_mapping(tenant, migration, account_locator))


def mappings(tenant: str, migration: str, page: PageRequest) -> Page[AccountMappings]:
    return _page(AccountMappings, tenant, migration, page, keys.MIGRATION_MAPPING_PREFIX)


def failure_write(tenant: str, migration: str, failures: AccountFailures) -> WriteOp:
    return table.put(
        {
            **keys.migration_failure(tenant, migration, failures.accountLocator).as_dict(),
            "entity": "migrationFailure",
            **failures.model_dump(),
        }
    )


def failure_delete(tenant: str, migration: str, account_locator: str) -> WriteOp:
    return table.delete(keys.migration_failure(tenant, migration, account_locator))


def get_failures(tenant: str, migration: str, account_locator: str) -> AccountFailures | None:
    return _one(AccountFailures, tenant, keys.migration_failure(tenant, migration, account_locator))


def failures(tenant: str, migration: str, page: PageRequest) -> Page[AccountFailures]:
    return _page(AccountFailures, tenant, migration, page, keys.MIGRATION_FAILURE_PREFIX)
