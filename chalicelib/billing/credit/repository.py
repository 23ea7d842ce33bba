"""Persistence of credit distributions and disbursements: each record in its account's billing
partition (storage/keys.py), its alias (read by locator through billing/repository.py) and its
references in the account's and the tenant's lists, in creation order."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

from chalicelib.billing import repository as billing
from chalicelib.core.paging import Page, PageRequest
from chalicelib.storage import keys, table
from chalicelib.storage.unit_of_work import UnitOfWork

M = TypeVar("M", bound=BaseModel)
PREFIX = {
    "creditDistribution": keys.BILLING_CREDIT_DISTRIBUTION_PREFIX,
    "disbursement": keys.BILLING_DISBURSEMENT_PREFIX,
}
DISTRIBUTION = "creditDistribution"
LIST = {"creditDistribution": "CDIST", "disbursement": "DISB"}


def get(tenant: str, kind: str, locator: str, model: type[M]) -> M | None:
    return billing.get(tenant, kind, locator, model)


def _key(tenant: str, kind: str, account: str, locator: str) -> keys.Key:
    return keys.billing_record(tenant, account, PREFIX[kind], locator)


def add(uow: UnitOfWork, tenant: str, kind: str, account: str, record: BaseModel) -> None:
    dumped = record.model_dump(exclude_none=True)
    locator = dumped["locator"]
    uow.add(
        table.put_new({**_key(tenant, kind, account, locator).as_dict(), "entity": kind, **dumped}),
        table.put_new(
            {
                **keys.billing_alias(tenant, locator).as_dict(),
                "entity": "billingAlias",
                "kind": kind,
                "accountLocator": account,
            }
        ),
        *[
            table.put(
                {
                    **keys.billing_ref(tenant, owner_kind, owner, LIST[kind], locator).as_dict(),
                    "entity": "billingRef",
                    "kind": kind,
                    "locator": locator,
                    "accountLocator": account,
                }
            )
            for owner_kind, owner in (("account", account), ("tenant", tenant))
        ],
    )


def save(uow: UnitOfWork, tenant: str, kind: str, account: str, record: BaseModel, version: int) -> None:
    """Rewrite a changed record, conditional on the version it was read at."""
    fields = record.model_dump(exclude={"locator", "version"})
    uow.add(
        table.update(
            _key(tenant, kind, account, str(record.__dict__["locator"])),
            {k: v for k, v in fields.items() if v is not None},
            remove=[k for k, v in fields.items() if v is None],
            expected_version=version,
        )
    )


def page(tenant: str, kind: str, model: type[M], account: str | None, request: PageRequest) -> Page[M]:
    """The records of the account (or of the tenant), oldest first."""
    owner_kind, owner = ("account", account) if account else ("tenant", tenant)
    return billing.page_of(tenant, owner_kind, owner, LIST[kind], kind, model, request)
