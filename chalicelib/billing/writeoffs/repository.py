"""Persistence of write-offs: the record in its account's billing partition (storage/keys.py
BILLING_WRITEOFF_PREFIX), its alias (billing/repository.py reads by locator through it) and its
references in the account's and the tenant's lists of write-offs, in creation order."""

from __future__ import annotations

from chalicelib.billing import repository as billing
from chalicelib.billing.writeoffs.models import WriteOff
from chalicelib.core.paging import Page, PageRequest
from chalicelib.storage import keys, table
from chalicelib.storage.unit_of_work import UnitOfWork

KIND = "writeOff"
LIST = "WOFF"


def get(tenant: str, locator: str) -> WriteOff | None:
    return billing.get(tenant, KIND, locator, WriteOff)


def _key(tenant: str, record: WriteOff) -> keys.Key:
    return keys.billing_record(tenant, record.accountLocator, keys.BILLING_WRITEOFF_PREFIX, record.locator)


def add(uow: UnitOfWork, tenant: str, record: WriteOff) -> None:
    account = record.accountLocator
    uow.add(
        table.put_new({**_key(tenant, record).as_dict(), "entity": KIND, **record.model_dump(exclude_none=True)}),
        table.put_new(
            {
                **keys.billing_alias(tenant, record.locator).as_dict(),
                "entity": "billingAlias",
                "kind": KIND,
                "accountLocator": account,
            }
        ),
        *[
            table.put(
                {
                    **keys.billing_ref(tenant, owner_kind, owner, LIST, record.locator).as_dict(),
                    "entity": "billingRef",
                    "kind": KIND,
                    "locator": record.locator,
                    "accountLocator": account,
                }
            )
            for owner_kind, owner in (("account", account), ("tenant", tenant))
        ],
    )


def save(uow: UnitOfWork, tenant: str, record: WriteOff) -> None:
    """Rewrite a changed write-off, conditional on the version it was read at."""
    fields = record.model_dump(exclude={"locator", "version"})
    uow.add(
        table.update(
            _key(tenant, record),
            {k: v for k, v in fields.items() if v is not None},
            remove=[k for k, v in fields.items() if v is None],
            expected_version=record.version,
        )
    )


def get_many(tenant: str, account: str, locators: list[str]) -> list[WriteOff]:
    return billing.get_many(tenant, account, KIND, locators, WriteOff)


def page(tenant: str, account: str | None, request: PageRequest) -> Page[WriteOff]:
    """The write-offs of the account (or of the tenant), oldest first."""
    owner_kind, owner = ("account", account) if account else ("tenant", tenant)
    return billing.page_of(tenant, owner_kind, owner, LIST, KIND, WriteOff, request)
