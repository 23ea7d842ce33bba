"""Persistence of payments and of the credits their postings are (billing/repository.py has what billing's
packages share: keys, aliases, references, the roots)."""

from __future__ import annotations

from chalicelib.billing import repository
from chalicelib.billing.payments.models import Payment
from chalicelib.core.paging import Page, PageRequest
from chalicelib.storage import keys, query, table
from chalicelib.storage.table import WriteOp
from chalicelib.storage.unit_of_work import UnitOfWork

TENANT_INDEX = "GSI2"
"""The tenant's payments and credits, listed without an account (`keys.tenant_payments_index`, ...)."""


CREDITS = "CREDIT"


def add_payment(uow: UnitOfWork, tenant: str, payment: Payment) -> None:
    """The payment (on the tenant's list of payments: the index sorts it by locator), and its alias."""
    listed = {f"{TENANT_INDEX}PK": keys.tenant_payments_index(tenant), f"{TENANT_INDEX}SK": payment.locator}
    uow.add(
        table.put_new(repository.record_item(tenant, payment.accountLocator, "payment", payment, **listed)),
        repository.alias_write(tenant, "payment", payment.locator, payment.accountLocator),
    )


def save_payment(uow: UnitOfWork, tenant: str, payment: Payment) -> None:
    fields = payment.model_dump(exclude={"locator", "version"})
    uow.add(
        table.update(
            repository.record_key(tenant, payment.accountLocator, "payment", payment.locator),
            {k: v for k, v in fields.items() if v is not None},
            remove=[k for k, v in fields.items() if v is None],
            expected_version=payment.version,
        )
    )


def account_payments(tenant: str, account: str, page: PageRequest) -> Page[Payment]:
    return repository.records_page(Payment, tenant, account, page, keys.BILLING_PAYMENT_PREFIX)


def tenant_payments(tenant: str, page: PageRequest) -> Page[Payment]:
    """The tenant's payments, oldest first (one Query of the index)."""
    found = query.page(
        table.gateway(), repository.scope(tenant), keys.tenant_payments_index(tenant), page, index=TENANT_INDEX
    )
    return Page([repository.model_of(Payment, item) for item in found.items], found.list_completed)


def credit_ref_writes(tenant: str, payment: Payment) -> list[WriteOp]:
    """A posted payment is one of its account's credits (listed by payment locator) and of the tenant's (the
    same reference, on the index)."""
    account = payment.accountLocator
    return repository.ref_writes(
        tenant,
        "payment",
        CREDITS,
        payment.locator,
        account,
        [("account", account)],
        **{f"{TENANT_INDEX}PK": keys.tenant_credits_index(tenant), f"{TENANT_INDEX}SK": payment.locator},
    )


def account_credits(tenant: str, account: str, page: PageRequest) -> Page[Payment]:
    return repository.page_of(tenant, "account", account, CREDITS, "payment", Payment, page)


def tenant_credits(tenant: str, page: PageRequest) -> Page[Payment]:
    """The tenant's credits, oldest payment first: one Query of the index and one BatchGetItem of the payments
    of the page, whatever their accounts."""
    refs = query.page(
        table.gateway(), repository.scope(tenant), keys.tenant_credits_index(tenant), page, index=TENANT_INDEX
    )
    found = {
        item["locator"]: repository.model_of(Payment, item)
        for item in table.gateway().batch_get(
            repository.scope(tenant),
            [repository.record_key(tenant, ref["accountLocator"], "payment", ref["locator"]) for ref in refs.items],
        )
    }
    return Page([found[ref["locator"]] for ref in refs.items if ref["locator"] in found], refs.list_completed)
