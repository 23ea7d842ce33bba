"""Persistence of lattices, installments and installment jobs (billing/repository.py has what billing's
packages share: keys, aliases, references, the roots).

An installment is its own alias (it names its account): the record lives at the alias key, so writing one
is one action and fetching it one GetItem; the installments of a policy, transaction or quote are listed
by their lattices' references, each naming the lattice's installments (a lattice's installments never
change).
"""

from __future__ import annotations

from typing import Any

from chalicelib.billing import repository
from chalicelib.billing.installments.models import ChargeInvoicing, Installment, InstallmentJob, InstallmentLattice
from chalicelib.core import codes
from chalicelib.core.clock import isoformat
from chalicelib.core.paging import Page, PageRequest
from chalicelib.storage import keys, query, table
from chalicelib.storage.table import WriteOp
from chalicelib.storage.unit_of_work import UnitOfWork

LATTICE_REFS = "LAT"
"""The reference kind of a lattice under its policy, transaction and quote (it names their installments)."""


RIDERS = "NEXT"
"""The account's reference of its uninvoiced installments invoiced `next`."""


INSTALLMENT_JOBS = "IJOB"


def lattice_exists(tenant: str, locator: str) -> bool:
    return repository.account_of(tenant, "lattice", locator) is not None


def add_lattice(uow: UnitOfWork, tenant: str, lattice: InstallmentLattice, installments: list[str]) -> None:
    """The lattice, its alias and its references of its policy, transaction and quote, each naming the
    lattice's `installments` (the lists of installments per owner read them)."""
    account = lattice.accountLocator
    uow.add(
        table.put_new(repository.record_item(tenant, account, "lattice", lattice)),
        repository.alias_write(tenant, "lattice", lattice.locator, account),
        *repository.ref_writes(
            tenant,
            "lattice",
            LATTICE_REFS,
            lattice.locator,
            account,
            [
                ("policy", lattice.policyLocator),
                ("transaction", lattice.transactionLocator),
                ("quote", lattice.quoteLocator),
            ],
            installments=installments,
        ),
    )


def installment_writes(tenant: str, installment: Installment) -> list[WriteOp]:
    """The writes of a new installment: itself (its own alias), its uninvoiced marker and, invoiced `next`,
    the account's reference of it."""
    account = installment.accountLocator
    return [
        table.put_new(repository.record_item(tenant, account, "installment", installment)),
        table.put(
            {
                **keys.billing_uninvoiced(
                    tenant, account, isoformat(installment.generateTime), installment.locator
                ).as_dict(),
                "entity": "uninvoicedInstallment",
                "locator": installment.locator,
            }
        ),
        *repository.ref_writes(
            tenant,
            "installment",
            RIDERS,
            installment.locator,
            account,
            [("account", account if installment.invoicing == ChargeInvoicing.NEXT else None)],
        ),
    ]


def migrated_installment_writes(tenant: str, installment: Installment) -> list[WriteOp]:
    """The write of an installment a migration brings invoiced already (chalicelib/migration): itself alone."""
    return [table.put_new(repository.record_item(tenant, installment.accountLocator, "installment", installment))]


def installments_of(tenant: str, owner_kind: str, owner: str, page: PageRequest) -> Page[Installment]:
    """One page of the installments of a policy, transaction or quote, oldest first (one Query of its
    lattices' references, one BatchGetItem of the page)."""
    locators = _installment_locators(tenant, owner_kind, owner)
    window = Page.window(locators, page)
    return Page(_installments(tenant, window.items), window.list_completed)


def all_installments_of(tenant: str, owner_kind: str, owner: str) -> list[Installment]:
    return _installments(tenant, _installment_locators(tenant, owner_kind, owner))


def _installment_locators(tenant: str, owner_kind: str, owner: str) -> list[str]:
    refs = query.all_items(
        table.gateway(), repository.scope(tenant), keys.billing_refs(tenant, owner_kind, owner, LATTICE_REFS)
    )
    return sorted(locator for ref in refs for locator in ref.get("installments", ()))


def _installments(tenant: str, locators: list[str]) -> list[Installment]:
    """The installments of `locators`, in that order (of any account: they are stored at their aliases), as a
    committed staged invoicing has them (billing/repository.py `visible`)."""
    by_account: dict[str, list[dict[str, Any]]] = {}
    for item in table.gateway().batch_get(
        repository.scope(tenant), [keys.billing_alias(tenant, locator) for locator in locators]
    ):
        if item.get("kind") == "installment":
            by_account.setdefault(item["accountLocator"], []).append(item)
    found = {
        item["locator"]: repository.model_of(Installment, item)
        for account, items in by_account.items()
        for item in repository.visible(tenant, account, items)
    }
    return [found[locator] for locator in locators if locator in found]


def uninvoiced(tenant: str, account: str, up_to: str | None = None) -> list[Installment]:
    """The account's uninvoiced installments to generate by `up_to` (an ISO moment; None: all)."""
    gateway = table.gateway()
    items: list[dict[str, Any]] = []
    start_key = None
    while True:
        if up_to is None:
            batch, start_key = gateway.query(
                repository.scope(tenant),
                keys.billing_partition(tenant, account),
                sk_prefix=keys.BILLING_UNINVOICED_PREFIX,
                start_key=start_key,
                consistent=True,
            )
        else:
            batch, start_key = gateway.query(
                repository.scope(tenant),
                keys.billing_partition(tenant, account),
                sk_from=keys.BILLING_UNINVOICED_PREFIX,
                sk_to=f"{keys.BILLING_UNINVOICED_PREFIX}{up_to}#~",
                start_key=start_key,
                consistent=True,
            )
        items.extend(batch)
        if start_key is None:
            break
    markers = repository.visible(tenant, account, items)
    return repository.get_many(tenant, account, "installment", [item["locator"] for item in markers], Installment)


def next_uninvoiced_time(tenant: str, account: str, after: str) -> str | None:
    """The earliest generate time (ISO) of the account's uninvoiced installments later than `after` (one
    Query of one marker; more while those found are the staged deletes of a committed invoicing)."""
    start_key, limit = None, 1
    while True:
        items, start_key = table.gateway().query(
            repository.scope(tenant),
            keys.billing_partition(tenant, account),
            sk_after=f"{keys.BILLING_UNINVOICED_PREFIX}{after}#~",
            sk_to=f"{keys.BILLING_UNINVOICED_PREFIX}~",
            limit=limit,
            start_key=start_key,
            consistent=True,
        )
        shown = repository.visible(tenant, account, items)
        if shown:
            return str(shown[0]["SK"][len(keys.BILLING_UNINVOICED_PREFIX) :].split("#", 1)[0])
        if start_key is None:
            return None
        limit = 100


def retimed_installment_writes(tenant: str, installment: Installment, generated_before: str) -> list[WriteOp]:
    """The rewrite of an uninvoiced installment whose times changed, its uninvoiced marker moved with its
    generate time (`generated_before`: the time, ISO, it was filed under)."""
    account = installment.accountLocator
    writes = [table.put(repository.record_item(tenant, account, "installment", installment))]
    generated = isoformat(installment.generateTime)
    if generated != generated_before:
        writes += [
            table.delete(keys.billing_uninvoiced(tenant, account, generated_before, installment.locator)),
            table.put(
                {
                    **keys.billing_uninvoiced(tenant, account, generated, installment.locator).as_dict(),
                    "entity": "uninvoicedInstallment",
                    "locator": installment.locator,
                }
            ),
        ]
    return writes


def invoiced_installment_writes(tenant: str, installment: Installment) -> list[WriteOp]:
    """The rewrite of an installment an invoice takes, on condition that it is still uninvoiced (its marker
    stands): an invoice run reads its installments before their containers' roots, so one that read them
    before another run invoiced them fails with 409 instead of invoicing them twice."""
    account = installment.accountLocator
    writes = [
        table.put(repository.record_item(tenant, account, "installment", installment)),
        table.delete(
            keys.billing_uninvoiced(tenant, account, isoformat(installment.generateTime), installment.locator),
            must_exist=True,
            on_missing=lambda: codes.CONCURRENT_MODIFICATION(
                f"Installment {installment.locator} was invoiced meanwhile; retry"
            ),
        ),
    ]
    if installment.invoicing == ChargeInvoicing.NEXT:
        writes.append(table.delete(keys.billing_ref(tenant, "account", account, RIDERS, installment.locator)))
    return writes


def rolled_invoiced_installment_writes(tenant: str, installment: Installment) -> list[WriteOp]:
    """The roll forward of `staged_invoiced_installment_writes` once committed: the record in place, the
    marker and rider reference deleted."""
    account = installment.accountLocator
    writes = [
        table.put(repository.record_item(tenant, account, "installment", installment)),
        table.delete(
            keys.billing_uninvoiced(tenant, account, isoformat(installment.generateTime), installment.locator)
        ),
    ]
    if installment.invoicing == ChargeInvoicing.NEXT:
        writes.append(table.delete(keys.billing_ref(tenant, "account", account, RIDERS, installment.locator)))
    return writes


def staged_invoiced_installment_writes(tenant: str, installment: Installment, token: str) -> list[WriteOp]:
    """`invoiced_installment_writes` staged under `token` (billing/staging.py): the rewrite beside the record,
    the marker's and rider reference's deletes on them (the marker on condition that it stands)."""
    account = installment.accountLocator
    writes = [
        repository.staged_rewrite(repository.record_item(tenant, account, "installment", installment), token),
        repository.staged_delete(
            keys.billing_uninvoiced(tenant, account, isoformat(installment.generateTime), installment.locator),
            token,
            on_missing=lambda: codes.CONCURRENT_MODIFICATION(
                f"Installment {installment.locator} was invoiced meanwhile; retry"
            ),
        ),
    ]
    if installment.invoicing == ChargeInvoicing.NEXT:
        writes.append(
            repository.staged_delete(keys.billing_ref(tenant, "account", account, RIDERS, installment.locator), token)
        )
    return writes


def pending_riders(tenant: str, account: str) -> list[Installment]:
    """The account's uninvoiced installments of charges invoiced `next`: they ride on the next invoice of
    their container (one Query, and a BatchGetItem when there are any)."""
    refs = query.all_items(
        table.gateway(),
        repository.scope(tenant),
        keys.billing_refs(tenant, "account", account, RIDERS),
        consistent=True,
    )
    shown = repository.visible(tenant, account, refs)
    return repository.get_many(tenant, account, "installment", [ref["locator"] for ref in shown], Installment)


def installment_job_writes(tenant: str, job: InstallmentJob) -> list[WriteOp]:
    """The job's record under each of its transaction, policy and quote (lists read one partition)."""
    owners = [("transaction", job.referenceLocator), ("policy", job.policyLocator), ("quote", job.quoteLocator)]
    return [
        table.put(
            {
                **keys.billing_ref(tenant, kind, owner, INSTALLMENT_JOBS, job.locator).as_dict(),
                "entity": "installmentJob",
                **job.model_dump(exclude_none=True),
            }
        )
        for kind, owner in owners
        if owner
    ]


def installment_jobs(tenant: str, owner_kind: str, owner: str, page: PageRequest) -> Page[InstallmentJob]:
    found = query.page(
        table.gateway(), repository.scope(tenant), keys.billing_refs(tenant, owner_kind, owner, INSTALLMENT_JOBS), page
    )
    return Page([repository.model_of(InstallmentJob, item) for item in found.items], found.list_completed)


def all_installment_jobs(tenant: str, owner_kind: str, owner: str) -> list[InstallmentJob]:
    items = query.all_items(
        table.gateway(),
        repository.scope(tenant),
        keys.billing_refs(tenant, owner_kind, owner, INSTALLMENT_JOBS),
        consistent=True,
    )
    return [repository.model_of(InstallmentJob, item) for item in items]
