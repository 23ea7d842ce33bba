"""Persistence of migrations: one item collection per migration (storage/keys.py, "migration"), and its
request in S3 as JSON Lines (one account a line, `migrations/{m}/request.jsonl`; a patched account's line
in an object of its own), which each account's job reads by byte range."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from chalicelib.core.paging import Page, PageRequest
from chalicelib.migration.models import AccountFailures, AccountMappings, AccountMigration, Migration, MigrationState
from chalicelib.storage import blobs, codec, keys, query, table
from chalicelib.storage.table import WriteOp
from chalicelib.storage.unit_of_work import UnitOfWork

COUNTERS = ("processedAccounts", "completedAccounts", "failedAccounts", "errorAccounts")


def _scope(tenant: str) -> str:
    return keys.tenant_scope(tenant)


# --- the request ---------------------------------------------------------------------------------


def request_path(migration: str, name: str = "request") -> str:
    return f"migrations/{migration}/{name}.jsonl"


def put_request(tenant: str, path: str, content: bytes) -> None:
    blobs.put(tenant, path, content, "application/x-ndjson")


def whole_request(tenant: str, path: str) -> bytes:
    return blobs.get(tenant, path) or b""


def account_request(tenant: str, account: AccountMigration) -> bytes:
    return blobs.get_range(tenant, account.requestPath, account.requestStart, account.requestLength)


# --- the migration -------------------------------------------------------------------------------


def add(uow: UnitOfWork, tenant: str, migration: Migration) -> None:
    uow.add(table.put_new({**keys.migration(tenant, migration.locator).as_dict(), "entity": "migration",
                           **migration.model_dump()}))


def get(tenant: str, locator: str) -> Migration | None:
    item = table.gateway().get(_scope(tenant), keys.migration(tenant, locator))
    return Migration.model_validate(codec.without_keys(item)) if item else None


def move(tenant: str, migration: Migration, state: MigrationState, *, add: dict[str, int] | None = None,
         **changes: Any) -> WriteOp:
    """The migration in `state`, on condition that it is still at its version (else 409); `add` to its counters."""
    op = table.update(keys.migration(tenant, migration.locator),
                      {"migrationState": state.value, "updatedAt": migration.updatedAt, **changes},
                      expected_version=migration.version)
    if add:
        op.params["UpdateExpression"] += " ADD " + ", ".join(f"#a{i} :a{i}" for i in range(len(add)))
        op.params["ExpressionAttributeNames"].update({f"#a{i}": name for i, name in enumerate(add)})
        op.params["ExpressionAttributeValues"].update(
            {f":a{i}": codec.serialize_value(delta) for i, delta in enumerate(add.values())})
    return op


def count(tenant: str, migration: str, deltas: dict[str, int]) -> WriteOp:
    """ADD to the migration's counters (no version: every account's final write adds to them at once)."""
    names = {f"#c{i}": name for i, name in enumerate(deltas)}
    values = {f":c{i}": codec.serialize_value(delta) for i, delta in enumerate(deltas.values())}
    key = keys.migration(tenant, migration)
    return WriteOp("Update", {"Key": codec.serialize(key.as_dict()),
                              "UpdateExpression": "ADD " + ", ".join(f"#c{i} :c{i}" for i in range(len(deltas))),
                              "ConditionExpression": "attribute_exists(PK)",
                              "ExpressionAttributeNames": names, "ExpressionAttributeValues": values}, key)


# --- its accounts ----------------------------------------------------------------------------------


def account_write(tenant: str, migration: str, account: AccountMigration, *, new: bool = False) -> WriteOp:
    item = {**keys.migration_account(tenant, migration, account.accountLocator).as_dict(),
            "entity": "migrationAccount", **account.model_dump()}
    return table.put_new(item) if new else table.put(item)


def get_account(tenant: str, migration: str, account_locator: str) -> AccountMigration | None:
    item = table.gateway().get(_scope(tenant), keys.migration_account(tenant, migration, account_locator))
    return AccountMigration.model_validate(codec.without_keys(item)) if item else None


def accounts(tenant: str, migration: str, page: PageRequest) -> Page[AccountMigration]:
    found = query.page(table.gateway(), _scope(tenant), keys.migration_partition(tenant, migration), page,
                       sk_prefix=keys.MIGRATION_ACCOUNT_PREFIX)
    return Page([AccountMigration.model_validate(codec.without_keys(item)) for item in found.items],
                found.list_completed)


def every_account(tenant: str, migration: str) -> Iterator[AccountMigration]:
    """Every account of the migration, a Query page (1 MB) at a time (jobs only)."""
    gateway, start_key = table.gateway(), None
    while True:
        batch, start_key = gateway.query(_scope(tenant), keys.migration_partition(tenant, migration),
                                         sk_prefix=keys.MIGRATION_ACCOUNT_PREFIX, start_key=start_key,
                                         consistent=True)
        yield from (AccountMigration.model_validate(codec.without_keys(item)) for item in batch)
        if start_key is None:
            return


# --- mappings and failures -------------------------------------------------------------------------


def mapping_write(tenant: str, mappings: AccountMappings) -> WriteOp:
    return table.put({**keys.migration_mapping(tenant, mappings.migrationLocator, mappings.accountLocator).as_dict(),
                      "entity": "migrationMapping", **mappings.model_dump()})


def get_mappings(tenant: str, migration: str, account_locator: str) -> AccountMappings | None:
    item = table.gateway().get(_scope(tenant), keys.migration_mapping(tenant, migration, account_locator))
    return AccountMappings.model_validate(codec.without_keys(item)) if item else None


def mappings(tenant: str, migration: str, page: PageRequest) -> Page[AccountMappings]:
    found = query.page(table.gateway(), _scope(tenant), keys.migration_partition(tenant, migration), page,
                       sk_prefix=keys.MIGRATION_MAPPING_PREFIX)
    return Page([AccountMappings.model_validate(codec.without_keys(item)) for item in found.items],
                found.list_completed)


def failure_write(tenant: str, migration: str, failures: AccountFailures) -> WriteOp:
    return table.put({**keys.migration_failure(tenant, migration, failures.accountLocator).as_dict(),
                      "entity": "migrationFailure", **failures.model_dump()})


def failure_delete(tenant: str, migration: str, account_locator: str) -> WriteOp:
    return table.delete(keys.migration_failure(tenant, migration, account_locator))


def get_failures(tenant: str, migration: str, account_locator: str) -> AccountFailures | None:
    item = table.gateway().get(_scope(tenant), keys.migration_failure(tenant, migration, account_locator))
    return AccountFailures.model_validate(codec.without_keys(item)) if item else None


def failures(tenant: str, migration: str, page: PageRequest) -> Page[AccountFailures]:
    found = query.page(table.gateway(), _scope(tenant), keys.migration_partition(tenant, migration), page,
                       sk_prefix=keys.MIGRATION_FAILURE_PREFIX)
    return Page([AccountFailures.model_validate(codec.without_keys(item)) for item in found.items],
                found.list_completed)
