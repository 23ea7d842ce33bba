"""Persistence of accounts: one item per account (`T#{t}#ACC#{locator}`), listed in creation order on
GSI2 (`T#{t}#ACCOUNTS`, sort key the locator, a ULID). An account's quotes and policies are listed by
their own domains, on GSI1 partitions `keys.account_quotes_index` / `keys.account_policies_index`
that their items carry."""

from __future__ import annotations

from typing import Any

from chalicelib.accounts.models import Account
from chalicelib.core.paging import Page, PageRequest
from chalicelib.storage import codec, contact_index, keys, query, table
from chalicelib.storage.unit_of_work import UnitOfWork

LIST_INDEX = "GSI2"


def _account(item: dict[str, Any]) -> Account:
    return Account.model_validate(codec.without_keys(item))


def record_key(tenant: str, locator: str) -> tuple[str, str]:
    """The stored account's (PK, SK): what a request's read cache forgets when a write changes it."""
    key = keys.account(tenant, locator)
    return key.pk, key.sk


def get(tenant: str, locator: str) -> Account | None:
    item = table.gateway().get(keys.tenant_scope(tenant), keys.account(tenant, locator))
    return _account(item) if item else None


def get_with(
    tenant: str, locator: str | None, also: list[tuple[str, str]]
) -> tuple[Account | None, dict[tuple[str, str], dict[str, Any]]]:
    """The account (unless `locator` is None) and the stored items among `also` (another domain's records of
    the tenant, by (PK, SK)), in one BatchGetItem: (the account or None, the items found by their key)."""
    wanted = ([keys.account(tenant, locator)] if locator is not None else []) + [keys.Key(*key) for key in also]
    found = {(item["PK"], item["SK"]): item for item in table.gateway().batch_get(keys.tenant_scope(tenant), wanted)}
    account = found.pop(record_key(tenant, locator), None) if locator is not None else None
    return (_account(account) if account else None), found


def get_many(tenant: str, locators: list[str]) -> list[Account]:
    """The existing accounts among `locators`, in as few BatchGetItem calls as DynamoDB allows."""
    return [
        _account(item)
        for item in table.gateway().batch_get(
            keys.tenant_scope(tenant), [keys.account(tenant, locator) for locator in locators]
        )
    ]


def list_accounts(tenant: str, page: PageRequest) -> Page[Account]:
    found = query.page(table.gateway(), keys.tenant_scope(tenant), keys.accounts_index(tenant), page, index=LIST_INDEX)
    return Page([_account(item) for item in found.items], found.list_completed)


def add(uow: UnitOfWork, tenant: str, account: Account) -> None:
    key = keys.account(tenant, account.locator)
    index = {f"{LIST_INDEX}PK": keys.accounts_index(tenant), f"{LIST_INDEX}SK": account.locator}
    exists = "The account already exists"
    uow.add(*contact_index.put_new_holder(tenant, key, "account", account, indexes=index, exists=exists))


def save(uow: UnitOfWork, tenant: str, account: Account) -> None:
    """Rewrites the account, on condition that it is still at `account.version` (else 409)."""
    uow.add(*contact_index.rewrite_holder(tenant, keys.account(tenant, account.locator), "account", account))
