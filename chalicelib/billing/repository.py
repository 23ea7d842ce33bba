"""Persistence of billing records (storage/keys.py, "billing"): all of an account's billing lives in its
billing partition. Reads by locator go through an alias item naming the account (an invoice's also its
billing container); lists per policy, transaction and quote page a reference partition and fetch the
records in one BatchGetItem per hundred.

The billing roots. Every billing container (the account, or a policy whose `billingLevel` is `policy`:
the `billingContainer` of lattices, installments, invoices and delinquencies) has a root item whose
`version` billing writes bump in their own transaction (`bump_roots`, at the versions `root_versions`
read), so two writers of one container never interleave: the one that loses answers 409 (a job or a due
entry tries again). Which roots a write bumps:

- a write that changes the records of one container only (its lattice and installments, installment
  times, its invoices from an invoice run, an invoice's update, number or settlement without credit, a
  write-off of its invoices, its delinquencies and their events) bumps that container's root, read
  before what the write decides on; an invoice run bumps each container's root with its invoices (it
  reads the installments first, to know their containers: each is invoiced on condition that it is
  still uninvoiced);
- a write of the account's own records or money (payments and their states, the credit balance, credit
  distributions, disbursements, holds, invoicing jobs) bumps the account's root, read first; when it also
  changes records of containers (a posting or its reversal settles or re-opens invoices, a distribution
  applies credit to them, a negative or settled invoice puts credit on the balance, a delinquency hold
  cancels events) it bumps the root of every container it changes too, read in one BatchGetItem
  (`bump_container_roots`) as soon as it knows them: after their invoices, whose own writes are
  conditional on their versions, and before anything else of theirs (their delinquencies);
- with account-level billing, the common case, the container is the account: one root, one GetItem.

So the invoice runs, installment jobs, write-offs and delinquencies of two policies billed at policy level
never fail each other, and none of them interleaves with a payment or credit move that touches its
invoices. A container's root lives in its account's partition beside the account's (`#ROOT#{container}`).
The account's invoice generation entry is shared by its containers: writers bring it forward on
condition that nobody moved it since they read it (`runtime.due.bring_forward`).

A change of more invoices than one TransactWriteItems holds is staged (billing/staging.py): its rewrites of
invoices and applications first stand beside the records as they were (`staged`: the token and the new
record), the records it adds carry its token (`stagedToken`), then its final write (the roots bumped, the
payment or write-off, the commit marker of its token) makes all of it visible at once, and it is rolled
forward into the records. Every read here shows a record as a committed token has it, and none of an
uncommitted one (one more BatchGetItem only when a record read carries a token); every rewrite of an
invoice drops what was staged on it (it was written from the record as read, staged change included).

An installment is its own alias (it names its account): the record lives at the alias key, so writing one
is one action and fetching it one GetItem; the installments of a policy, transaction or quote are listed
by their lattices' references, each naming the lattice's installments (a lattice's installments never
change).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from chalicelib.billing.models import (
    Application,
    ChargeInvoicing,
    CreditBalance,
    HoldState,
    HoldTarget,
    Installment,
    InstallmentJob,
    InstallmentLattice,
    Invoice,
    InvoiceGenerationJob,
    InvoiceState,
    InvoicingJob,
    LedgerLine,
    Payment,
)
from chalicelib.core import codes
from chalicelib.core.clock import isoformat
from chalicelib.core.errors import DomainError
from chalicelib.core.paging import Page, PageRequest
from chalicelib.storage import codec, keys, query, table
from chalicelib.storage.keys import Key
from chalicelib.storage.table import WriteOp
from chalicelib.storage.unit_of_work import UnitOfWork

M = TypeVar("M", bound=BaseModel)

KIND_PREFIX = {
    "lattice": keys.BILLING_LATTICE_PREFIX,
    "installment": keys.BILLING_INSTALLMENT_PREFIX,
    "invoice": keys.BILLING_INVOICE_PREFIX,
    "payment": keys.BILLING_PAYMENT_PREFIX,
    "invoicingJob": keys.BILLING_INVOICING_JOB_PREFIX,
    "generationJob": keys.BILLING_GENERATION_JOB_PREFIX,
    "writeOff": keys.BILLING_WRITEOFF_PREFIX,
    "creditDistribution": keys.BILLING_CREDIT_DISTRIBUTION_PREFIX,
    "disbursement": keys.BILLING_DISBURSEMENT_PREFIX,
}
REF_KIND = {"lattice": "LAT", "invoice": "INV"}
SELF_ALIASED = frozenset({"installment"})
"""Kinds whose record is stored at its alias key instead of the account's billing partition, packed: the
record is one JSON attribute (`PACKED`) besides the attributes that find it (locator, kind, account). It is
only ever written and read whole, never updated in place nor filtered on, and one string costs botocore
and DynamoDB far less to pass than the ~60 typed attributes of an installment and its items."""
PACKED = "record"
RIDERS = "NEXT"
"""The account's reference of its uninvoiced installments invoiced `next`."""
INSTALLMENT_JOBS = "IJOB"
CREDITS = "CREDIT"
NONZERO_INVOICES = "NZINV"


def _scope(tenant: str) -> str:
    return keys.tenant_scope(tenant)


def _locator(record: BaseModel) -> str:
    return str(record.__dict__["locator"])


def _model(model: type[M], item: dict[str, Any]) -> M:
    if PACKED in item:
        return model.model_validate_json(item[PACKED])
    return model.model_validate(codec.without_keys(item))


# --- staged changes (billing/staging.py) ----------------------------------------------------------------

STAGED = "staged"
"""On a record a staged change rewrites: {"token": ..., "item": the record as the change has it}."""
STAGED_TOKEN = "stagedToken"
"""On a record a staged change adds: its token (the record exists once the token is committed)."""


def _visible(tenant: str, account: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `items` (of the account's billing partition) as a reader sees them: a staged rewrite of a
    committed change in place of the record, no record a change added that is not committed (yet)."""
    tokens = {item[STAGED]["token"] for item in items if STAGED in item}
    tokens |= {item[STAGED_TOKEN] for item in items if STAGED_TOKEN in item}
    if not tokens:
        return items
    committed = _committed(tenant, account, tokens)
    shown = []
    for item in items:
        if STAGED_TOKEN in item and item[STAGED_TOKEN] not in committed:
            continue
        if STAGED in item and item[STAGED]["token"] in committed:
            item = {"PK": item["PK"], "SK": item["SK"], **item[STAGED]["item"]}
        shown.append(item)
    return shown


def _committed(tenant: str, account: str, tokens: Iterable[str]) -> set[str]:
    return {
        item["token"]
        for item in table.gateway().batch_get(
            _scope(tenant), [keys.billing_staged_commit(tenant, account, token) for token in sorted(tokens)]
        )
    }


def shown_invoices(tenant: str, account: str, locators: list[str]) -> dict[str, tuple[dict[str, Any], list[str]]]:
    """For each of the invoices that carries the staged rewrite of a committed change not rolled forward
    yet: the record as that change has it (what readers see) and the attributes stored beside it that it
    lacks. A staged rewrite of such an invoice writes that record too: should the new change never commit,
    readers still see the committed one (nothing is read for invoices without a staged rewrite but the
    invoices themselves)."""
    items = [
        item
        for item in table.gateway().batch_get(
            _scope(tenant), [_key(tenant, account, "invoice", locator) for locator in locators]
        )
        if STAGED in item
    ]
    committed = _committed(tenant, account, {item[STAGED]["token"] for item in items}) if items else set()
    shown = {}
    for item in items:
        if item[STAGED]["token"] in committed:
            record = item[STAGED]["item"]
            shown[item["locator"]] = (
                record,
                [name for name in item if name not in record and name not in ("PK", "SK", STAGED)],
            )
    return shown


def staged_commit_write(tenant: str, account: str, token: str) -> WriteOp:
    return table.put_new(
        {**keys.billing_staged_commit(tenant, account, token).as_dict(), "entity": "stagedCommit", "token": token}
    )


def staged_rewrite(
    item: dict[str, Any],
    token: str,
    expected_version: int | None = None,
    shown: tuple[dict[str, Any], list[str]] | None = None,
) -> WriteOp:
    """A record's rewrite staged beside it (`item`: the whole record as the change has it, keys included;
    `expected_version`: the version it was read at, which the staged record has one more of; `shown`: the
    record readers see now and the attributes it lacks, written in place of the stored one)."""
    key = Key(item["PK"], item["SK"])
    rest = {name: value for name, value in item.items() if name not in ("PK", "SK")}
    if expected_version is not None:
        rest["version"] = expected_version + 1
    record, hidden = shown or ({}, [])
    return table.update(
        key,
        {
            **{name: value for name, value in record.items() if name != "version"},
            STAGED: {"token": token, "item": rest},
        },
        remove=[name for name in hidden if name != "version"],
        expected_version=expected_version,
    )


def record_write(item: dict[str, Any], *, new: bool = False) -> WriteOp:
    """The write of a whole record (`new`: on condition that it does not exist yet)."""
    return table.put_new(item) if new else table.put(item)


def invoice_item(tenant: str, invoice: Invoice) -> dict[str, Any]:
    """The whole item of an invoice, as stored."""
    return _item(tenant, invoice.accountLocator, "invoice", invoice)


def staged_add(item: dict[str, Any], token: str) -> WriteOp:
    return table.put_new({**item, STAGED_TOKEN: token})


def rolled_forward_add(item: dict[str, Any]) -> WriteOp:
    """The record a committed change added, its token dropped."""
    return table.update(Key(item["PK"], item["SK"]), {}, remove=[STAGED_TOKEN])


def write_staged(tenant: str, groups: list[list[WriteOp]]) -> None:
    """The staged writes, each group whole in one TransactWriteItems, as many to one as it holds."""
    chunk: list[WriteOp] = []
    for group in groups:
        if chunk and len(chunk) + len(group) > table.MAX_TRANSACTION_ITEMS:
            table.gateway().transact(_scope(tenant), chunk)
            chunk = []
        chunk.extend(group)
    table.gateway().transact(_scope(tenant), chunk)


# --- the billing roots ------------------------------------------------------------------------------


def _root_key(tenant: str, account: str, container: str) -> Key:
    if container == account:
        return keys.billing_root(tenant, account)
    return keys.billing_container_root(tenant, account, container)


def root_record_key(tenant: str, account: str, container: str) -> tuple[str, str]:
    """The (PK, SK) of a container's billing root, for a read of it together with other records."""
    key = _root_key(tenant, account, container)
    return key.pk, key.sk


def root_versions_in(
    tenant: str, account: str, containers: Iterable[str], found: Mapping[tuple[str, str], dict[str, Any]]
) -> dict[str, int]:
    """`root_versions` of roots the caller read with other records (`found`, by (PK, SK): `root_record_key`)."""
    return {
        container: root_version_of(found.get(root_record_key(tenant, account, container)))
        for container in dict.fromkeys(containers)
    }


def root_version_of(item: dict[str, Any] | None) -> int:
    """The version of a billing root as its stored item (None: never bumped) has it."""
    return int(item["version"]) if item else 0


def root_versions(tenant: str, account: str, containers: Iterable[str]) -> dict[str, int]:
    """The version of the billing root of each of the account's `containers` (the account itself names its
    own root), 0 for one never bumped: one GetItem for one root, one BatchGetItem for more, none for none."""
    wanted = list(dict.fromkeys(containers))
    if not wanted:
        return {}
    if len(wanted) == 1:
        return {wanted[0]: root_version_of(table.gateway().get(_scope(tenant), _root_key(tenant, account, wanted[0])))}
    found = {
        item["SK"]: int(item["version"])
        for item in table.gateway().batch_get(
            _scope(tenant), [_root_key(tenant, account, container) for container in wanted]
        )
    }
    return {container: found.get(_root_key(tenant, account, container).sk, 0) for container in wanted}


def bump_roots(uow: UnitOfWork, tenant: str, account: str, versions: Mapping[str, int]) -> None:
    """The writes every billing unit of work carries: each root of `versions` moves from its version to the
    next, or the whole unit of work fails with 409 because another billing write of that container came
    first."""
    for container, version in versions.items():
        key = _root_key(tenant, account, container)
        what = f"account {account}" if container == account else f"billing container {container}"

        def conflict(what: str = what) -> DomainError:
            return codes.CONCURRENT_MODIFICATION(f"Another billing change of {what} came first; retry")

        if version == 0:
            uow.add(
                table.put_new(
                    {
                        **key.as_dict(),
                        "entity": "billingRoot",
                        "accountLocator": account,
                        "containerLocator": container,
                        "version": 1,
                    },
                    conflict,
                )
            )
        else:
            uow.add(table.update(key, {}, expected_version=version, on_failure=conflict))


def bump_container_roots(uow: UnitOfWork, tenant: str, account: str, containers: Iterable[str]) -> None:
    """For a write that bumps the account's root already (it moves the account's money): the bumps of the
    roots of the other containers whose records it changes, read now in one call (none when they are all
    the account's)."""
    bump_roots(uow, tenant, account, root_versions(tenant, account, sorted(set(containers) - {account})))


# --- records by locator -----------------------------------------------------------------------------


def _alias(tenant: str, kind: str, locator: str, account: str, container: str | None = None) -> WriteOp:
    named = {"billingContainer": container} if container else {}
    return table.put_new(
        {
            **keys.billing_alias(tenant, locator).as_dict(),
            "entity": "billingAlias",
            "kind": kind,
            "accountLocator": account,
            **named,
        }
    )


def account_of(tenant: str, kind: str, locator: str) -> str | None:
    item = table.gateway().get(_scope(tenant), keys.billing_alias(tenant, locator))
    return item["accountLocator"] if item and item["kind"] == kind else None


def container_of(tenant: str, kind: str, locator: str) -> tuple[str, str] | None:
    """The account and billing container of a record of `kind` (an alias naming no container: the
    account's), read from its alias."""
    item = table.gateway().get(_scope(tenant), keys.billing_alias(tenant, locator))
    if not item or item["kind"] != kind:
        return None
    return item["accountLocator"], item.get("billingContainer") or item["accountLocator"]


def _key(tenant: str, account: str, kind: str, locator: str) -> Key:
    if kind in SELF_ALIASED:
        return keys.billing_alias(tenant, locator)
    return keys.billing_record(tenant, account, KIND_PREFIX[kind], locator)


def get(tenant: str, kind: str, locator: str, model: type[M]) -> M | None:
    if kind in SELF_ALIASED:
        item = table.gateway().get(_scope(tenant), keys.billing_alias(tenant, locator))
        return _model(model, item) if item and item.get("kind") == kind else None
    account = account_of(tenant, kind, locator)
    if account is None:
        return None
    item = table.gateway().get(_scope(tenant), _key(tenant, account, kind, locator))
    shown = _visible(tenant, account, [item]) if item else []
    return _model(model, shown[0]) if shown else None


def get_many(tenant: str, account: str, kind: str, locators: Iterable[str], model: type[M]) -> list[M]:
    """The records among `locators` of one account, in the order given."""
    wanted = list(dict.fromkeys(locators))
    items = table.gateway().batch_get(_scope(tenant), [_key(tenant, account, kind, locator) for locator in wanted])
    found = {
        item["locator"]: _model(model, item)
        for item in (items if kind in SELF_ALIASED else _visible(tenant, account, items))
        if kind not in SELF_ALIASED or (item.get("kind") == kind and item["accountLocator"] == account)
    }
    return [found[locator] for locator in wanted if locator in found]


def _item(tenant: str, account: str, kind: str, record: BaseModel, **extra: Any) -> dict[str, Any]:
    locator = _locator(record)
    if kind in SELF_ALIASED:
        return {
            **_key(tenant, account, kind, locator).as_dict(),
            "entity": kind,
            "kind": kind,
            "locator": locator,
            "accountLocator": account,
            PACKED: record.model_dump_json(exclude_none=True),
            **extra,
        }
    return {
        **_key(tenant, account, kind, locator).as_dict(),
        "entity": kind,
        **record.model_dump(exclude_none=True),
        **extra,
    }


def _refs(
    tenant: str,
    kind: str,
    record_kind: str,
    locator: str,
    account: str,
    owners: Iterable[tuple[str, str | None]],
    **extra: Any,
) -> list[WriteOp]:
    return [
        table.put(
            {
                **keys.billing_ref(tenant, owner_kind, owner, record_kind, locator).as_dict(),
                "entity": "billingRef",
                "kind": kind,
                "locator": locator,
                "accountLocator": account,
                **extra,
            }
        )
        for owner_kind, owner in owners
        if owner
    ]


def page_of(
    tenant: str, owner_kind: str, owner: str, record_kind: str, kind: str, model: type[M], page: PageRequest
) -> Page[M]:
    """One page of the records of `kind` a policy, transaction, quote or account has, oldest first."""
    refs = query.page(table.gateway(), _scope(tenant), keys.billing_refs(tenant, owner_kind, owner, record_kind), page)
    by_account: dict[str, list[str]] = {}
    for ref in refs.items:
        by_account.setdefault(ref["accountLocator"], []).append(ref["locator"])
    found: dict[str, M] = {}
    for account, locators in by_account.items():
        found.update({_locator(r): r for r in get_many(tenant, account, kind, locators, model)})
    return Page([found[ref["locator"]] for ref in refs.items if ref["locator"] in found], refs.list_completed)


def all_of(tenant: str, owner_kind: str, owner: str, record_kind: str, kind: str, model: type[M]) -> list[M]:
    refs = query.all_items(table.gateway(), _scope(tenant), keys.billing_refs(tenant, owner_kind, owner, record_kind))
    records: list[M] = []
    by_account: dict[str, list[str]] = {}
    for ref in refs:
        by_account.setdefault(ref["accountLocator"], []).append(ref["locator"])
    for account, locators in by_account.items():
        records.extend(get_many(tenant, account, kind, locators, model))
    return sorted(records, key=_locator)


# --- lattices and installments ---------------------------------------------------------------------


def lattice_exists(tenant: str, locator: str) -> bool:
    return account_of(tenant, "lattice", locator) is not None


def add_lattice(uow: UnitOfWork, tenant: str, lattice: InstallmentLattice, installments: list[str]) -> None:
    """The lattice, its alias and its references of its policy, transaction and quote, each naming the
    lattice's `installments` (the lists of installments per owner read them)."""
    account = lattice.accountLocator
    uow.add(
        table.put_new(_item(tenant, account, "lattice", lattice)),
        _alias(tenant, "lattice", lattice.locator, account),
        *_refs(
            tenant,
            "lattice",
            REF_KIND["lattice"],
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
        table.put_new(_item(tenant, account, "installment", installment)),
        table.put(
            {
                **keys.billing_uninvoiced(
                    tenant, account, isoformat(installment.generateTime), installment.locator
                ).as_dict(),
                "entity": "uninvoicedInstallment",
                "locator": installment.locator,
            }
        ),
        *_refs(
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
    return [table.put_new(_item(tenant, installment.accountLocator, "installment", installment))]


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
        table.gateway(), _scope(tenant), keys.billing_refs(tenant, owner_kind, owner, REF_KIND["lattice"])
    )
    return sorted(locator for ref in refs for locator in ref.get("installments", ()))


def _installments(tenant: str, locators: list[str]) -> list[Installment]:
    """The installments of `locators`, in that order (of any account: they are stored at their aliases)."""
    found = {
        item["locator"]: _model(Installment, item)
        for item in table.gateway().batch_get(
            _scope(tenant), [keys.billing_alias(tenant, locator) for locator in locators]
        )
        if item.get("kind") == "installment"
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
                _scope(tenant),
                keys.billing_partition(tenant, account),
                sk_prefix=keys.BILLING_UNINVOICED_PREFIX,
                start_key=start_key,
                consistent=True,
            )
        else:
            batch, start_key = gateway.query(
                _scope(tenant),
                keys.billing_partition(tenant, account),
                sk_from=keys.BILLING_UNINVOICED_PREFIX,
                sk_to=f"{keys.BILLING_UNINVOICED_PREFIX}{up_to}#~",
                start_key=start_key,
                consistent=True,
            )
        items.extend(batch)
        if start_key is None:
            break
    return get_many(tenant, account, "installment", [item["locator"] for item in items], Installment)


def next_uninvoiced_time(tenant: str, account: str, after: str) -> str | None:
    """The earliest generate time (ISO) of the account's uninvoiced installments later than `after`."""
    items, _ = table.gateway().query(
        _scope(tenant),
        keys.billing_partition(tenant, account),
        sk_after=f"{keys.BILLING_UNINVOICED_PREFIX}{after}#~",
        sk_to=f"{keys.BILLING_UNINVOICED_PREFIX}~",
        limit=1,
        consistent=True,
    )
    return items[0]["SK"][len(keys.BILLING_UNINVOICED_PREFIX) :].split("#", 1)[0] if items else None


def accounts_of(tenant: str, kind: str, locators: Iterable[str]) -> dict[str, str]:
    """The account of each record of `kind` among `locators` that exists (one BatchGetItem of the aliases
    per hundred)."""
    by_partition = {keys.billing_alias(tenant, locator).as_dict()["PK"]: locator for locator in locators}
    items = table.gateway().batch_get(
        _scope(tenant), [keys.billing_alias(tenant, locator) for locator in by_partition.values()]
    )
    return {by_partition[item["PK"]]: item["accountLocator"] for item in items if item["kind"] == kind}


def retimed_installment_writes(tenant: str, installment: Installment, generated_before: str) -> list[WriteOp]:
    """The rewrite of an uninvoiced installment whose times changed, its uninvoiced marker moved with its
    generate time (`generated_before`: the time, ISO, it was filed under)."""
    account = installment.accountLocator
    writes = [table.put(_item(tenant, account, "installment", installment))]
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
        table.put(_item(tenant, account, "installment", installment)),
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


def pending_riders(tenant: str, account: str) -> list[Installment]:
    """The account's uninvoiced installments of charges invoiced `next`: they ride on the next invoice of
    their container (one Query, and a BatchGetItem when there are any)."""
    refs = query.all_items(
        table.gateway(), _scope(tenant), keys.billing_refs(tenant, "account", account, RIDERS), consistent=True
    )
    return get_many(tenant, account, "installment", [ref["locator"] for ref in refs], Installment)


# --- invoices ---------------------------------------------------------------------------------------

INVOICE_WRITE_RECORDS = 17
"""What the write of an invoice holds besides its installments and references: its container's billing
root, the invoice, its alias, its number's guard, the account's reference of nonzero invoices, the open
marker, two events, the credit balance and its ledger line, its due entry (delinquency), its autopay
entry, its document's job, documents job and instance, and two to spare (an invoice that puts credit on
the balance also bumps the account's root, and has neither open marker nor due entries)."""


def fits_one_invoice_write(installments: list[Installment], besides: int = 0) -> bool:
    """Whether one TransactWriteItems holds the invoice of `installments` (and `besides` other actions): two
    records for each (it is rewritten, its uninvoiced marker deleted) and two for each policy and quote (their
    references, and their references of nonzero invoices)."""
    owners = {i.policyLocator for i in installments} | {i.quoteLocator for i in installments if i.quoteLocator}
    riders = sum(1 for i in installments if i.invoicing == ChargeInvoicing.NEXT)  # and their reference deleted
    return (
        besides + INVOICE_WRITE_RECORDS + 2 * len(installments) + riders + 2 * len(owners)
        <= table.MAX_TRANSACTION_ITEMS
    )


def invoice_writes(tenant: str, invoice: Invoice) -> list[WriteOp]:
    """A new invoice: itself, its alias, its open marker (when open) and its references."""
    account = invoice.accountLocator
    owners: list[tuple[str, str | None]] = [("policy", p) for p in invoice.policyLocators]
    owners += [("quote", q) for q in invoice.quoteLocators]
    writes = [
        table.put_new(_item(tenant, account, "invoice", invoice)),
        _alias(tenant, "invoice", invoice.locator, account, invoice.billingContainer),
        *_refs(tenant, "invoice", REF_KIND["invoice"], invoice.locator, account, owners),
    ]
    if invoice.totalAmount != 0:
        writes += _refs(tenant, "invoice", NONZERO_INVOICES, invoice.locator, account, [*owners, ("account", account)])
    if invoice.invoiceState == InvoiceState.OPEN:
        writes.append(table.put(_open_marker(tenant, invoice)))
    return writes


def _open_marker(tenant: str, invoice: Invoice) -> dict[str, Any]:
    return {
        **keys.billing_open_invoice(
            tenant, invoice.accountLocator, isoformat(invoice.dueTime), invoice.locator
        ).as_dict(),
        "entity": "openInvoice",
        "locator": invoice.locator,
    }


def invoice_update_writes(tenant: str, invoice: Invoice, was_open: bool) -> list[WriteOp]:
    """The rewrite of a changed invoice (conditional on its version) and of its open marker."""
    writes = [
        table.update(
            _key(tenant, invoice.accountLocator, "invoice", invoice.locator),
            {
                name: value
                for name, value in invoice.model_dump(exclude={"locator", "version"}).items()
                if value is not None
            },
            remove=[
                *(name for name, value in invoice.model_dump(exclude={"locator", "version"}).items() if value is None),
                STAGED,
            ],
            expected_version=invoice.version,
        )
    ]
    is_open = invoice.invoiceState == InvoiceState.OPEN
    marker = keys.billing_open_invoice(tenant, invoice.accountLocator, isoformat(invoice.dueTime), invoice.locator)
    if is_open and not was_open:
        writes.append(table.put(_open_marker(tenant, invoice)))
    elif was_open and not is_open:
        writes.append(table.delete(marker))
    return writes


def open_invoices(tenant: str, account: str) -> list[Invoice]:
    """The account's open invoices, oldest due first (a marker a staged change has not rolled forward yet
    may name one it settled)."""
    markers = query.all_items(
        table.gateway(),
        _scope(tenant),
        keys.billing_partition(tenant, account),
        sk_prefix=keys.BILLING_OPEN_PREFIX,
        consistent=True,
    )
    return [
        i
        for i in get_many(tenant, account, "invoice", [m["locator"] for m in markers], Invoice)
        if i.invoiceState == InvoiceState.OPEN
    ]


def account_invoices(tenant: str, account: str, page: PageRequest, *, include_zero: bool) -> Page[Invoice]:
    if not include_zero:
        return page_of(tenant, "account", account, NONZERO_INVOICES, "invoice", Invoice, page)
    found = query.page(
        table.gateway(),
        _scope(tenant),
        keys.billing_partition(tenant, account),
        page,
        sk_prefix=keys.BILLING_INVOICE_PREFIX,
    )
    return Page([_model(Invoice, item) for item in _visible(tenant, account, found.items)], found.list_completed)


# --- payments, applications, the credit balance ------------------------------------------------------

TENANT_INDEX = "GSI2"
"""The tenant's payments and credits, listed without an account (`keys.tenant_payments_index`, ...)."""


def add_payment(uow: UnitOfWork, tenant: str, payment: Payment) -> None:
    """The payment (on the tenant's list of payments: the index sorts it by locator), and its alias."""
    listed = {f"{TENANT_INDEX}PK": keys.tenant_payments_index(tenant), f"{TENANT_INDEX}SK": payment.locator}
    uow.add(
        table.put_new(_item(tenant, payment.accountLocator, "payment", payment, **listed)),
        _alias(tenant, "payment", payment.locator, payment.accountLocator),
    )


def save_payment(uow: UnitOfWork, tenant: str, payment: Payment) -> None:
    fields = payment.model_dump(exclude={"locator", "version"})
    uow.add(
        table.update(
            _key(tenant, payment.accountLocator, "payment", payment.locator),
            {k: v for k, v in fields.items() if v is not None},
            remove=[k for k, v in fields.items() if v is None],
            expected_version=payment.version,
        )
    )


def account_payments(tenant: str, account: str, page: PageRequest) -> Page[Payment]:
    found = query.page(
        table.gateway(),
        _scope(tenant),
        keys.billing_partition(tenant, account),
        page,
        sk_prefix=keys.BILLING_PAYMENT_PREFIX,
    )
    return Page([_model(Payment, item) for item in found.items], found.list_completed)


def tenant_payments(tenant: str, page: PageRequest) -> Page[Payment]:
    """The tenant's payments, oldest first (one Query of the index)."""
    found = query.page(table.gateway(), _scope(tenant), keys.tenant_payments_index(tenant), page, index=TENANT_INDEX)
    return Page([_model(Payment, item) for item in found.items], found.list_completed)


def credit_ref_writes(tenant: str, payment: Payment) -> list[WriteOp]:
    """A posted payment is one of its account's credits (listed by payment locator) and of the tenant's (the
    same reference, on the index)."""
    account = payment.accountLocator
    return _refs(
        tenant,
        "payment",
        CREDITS,
        payment.locator,
        account,
        [("account", account)],
        **{f"{TENANT_INDEX}PK": keys.tenant_credits_index(tenant), f"{TENANT_INDEX}SK": payment.locator},
    )


def account_credits(tenant: str, account: str, page: PageRequest) -> Page[Payment]:
    return page_of(tenant, "account", account, CREDITS, "payment", Payment, page)


def tenant_credits(tenant: str, page: PageRequest) -> Page[Payment]:
    """The tenant's credits, oldest payment first: one Query of the index and one BatchGetItem of the payments
    of the page, whatever their accounts."""
    refs = query.page(table.gateway(), _scope(tenant), keys.tenant_credits_index(tenant), page, index=TENANT_INDEX)
    found = {
        item["locator"]: _model(Payment, item)
        for item in table.gateway().batch_get(
            _scope(tenant), [_key(tenant, ref["accountLocator"], "payment", ref["locator"]) for ref in refs.items]
        )
    }
    return Page([found[ref["locator"]] for ref in refs.items if ref["locator"] in found], refs.list_completed)


def application_item(tenant: str, account: str, application: Application) -> dict[str, Any]:
    """The whole item of an application (billing/staging.py writes it, or stages it)."""
    return {
        **keys.billing_application(tenant, account, application.invoiceLocator, application.locator).as_dict(),
        "entity": "application",
        **application.model_dump(exclude_none=True),
    }


def applications_of(tenant: str, account: str, invoice: str) -> list[Application]:
    items = query.all_items(
        table.gateway(),
        _scope(tenant),
        keys.billing_partition(tenant, account),
        sk_prefix=f"APP#{invoice}#",
        consistent=True,
    )
    return [_model(Application, item) for item in _visible(tenant, account, items)]


def applications(tenant: str, account: str, pairs: Iterable[tuple[str, str]]) -> list[Application]:
    """The applications named by (invoice locator, application locator)."""
    return [
        _model(Application, item)
        for item in _visible(
            tenant,
            account,
            table.gateway().batch_get(
                _scope(tenant),
                [keys.billing_application(tenant, account, invoice, application) for invoice, application in pairs],
            ),
        )
    ]


def credit_balance(tenant: str, account: str, currency: str) -> CreditBalance:
    item = table.gateway().get(_scope(tenant), keys.billing_credit_balance(tenant, account, currency))
    return _model(CreditBalance, item) if item else CreditBalance(accountLocator=account, currency=currency)


def credit_balances(tenant: str, account: str) -> list[CreditBalance]:
    """The account's credit balance in each currency it has held one in."""
    items = query.all_items(
        table.gateway(),
        _scope(tenant),
        keys.billing_partition(tenant, account),
        sk_prefix=keys.billing_credit_balance(tenant, account, "").sk,
        consistent=True,
    )
    return [_model(CreditBalance, item) for item in items]


def credit_writes(tenant: str, balance: CreditBalance, *lines: LedgerLine) -> list[WriteOp]:
    """The new balance and the ledger lines that moved it (the account's billing root serialises the writers)."""
    return [
        table.put(
            {
                **keys.billing_credit_balance(tenant, balance.accountLocator, balance.currency).as_dict(),
                "entity": "creditBalance",
                **balance.model_dump(),
            }
        ),
        *[
            table.put_new(
                {
                    **keys.billing_ledger_line(
                        tenant, balance.accountLocator, balance.currency, line.locator
                    ).as_dict(),
                    "entity": "ledgerLine",
                    **line.model_dump(exclude_none=True),
                }
            )
            for line in lines
        ],
    ]


def ledger_lines(tenant: str, account: str, currency: str, page: PageRequest) -> Page[LedgerLine]:
    found = query.page(
        table.gateway(),
        _scope(tenant),
        keys.billing_partition(tenant, account),
        page,
        sk_prefix=f"{keys.BILLING_LEDGER_PREFIX}{currency}#",
    )
    return Page([_model(LedgerLine, item) for item in found.items], found.list_completed)


# --- installment jobs ---------------------------------------------------------------------------------


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
        table.gateway(), _scope(tenant), keys.billing_refs(tenant, owner_kind, owner, INSTALLMENT_JOBS), page
    )
    return Page([_model(InstallmentJob, item) for item in found.items], found.list_completed)


def all_installment_jobs(tenant: str, owner_kind: str, owner: str) -> list[InstallmentJob]:
    items = query.all_items(
        table.gateway(), _scope(tenant), keys.billing_refs(tenant, owner_kind, owner, INSTALLMENT_JOBS), consistent=True
    )
    return [_model(InstallmentJob, item) for item in items]


# --- invoicing jobs -----------------------------------------------------------------------------------


def add_invoicing_job(uow: UnitOfWork, tenant: str, job: InvoicingJob) -> None:
    uow.add(
        table.put_new(_item(tenant, job.accountLocator, "invoicingJob", job)),
        _alias(tenant, "invoicingJob", job.locator, job.accountLocator),
    )


def save_invoicing_job(uow: UnitOfWork, tenant: str, job: InvoicingJob) -> None:
    uow.add(table.put(_item(tenant, job.accountLocator, "invoicingJob", job)))


def invoicing_job(tenant: str, account: str, locator: str) -> InvoicingJob | None:
    item = table.gateway().get(_scope(tenant), _key(tenant, account, "invoicingJob", locator))
    return _model(InvoicingJob, item) if item else None


def invoicing_jobs(tenant: str, account: str, page: PageRequest) -> Page[InvoicingJob]:
    found = query.page(
        table.gateway(),
        _scope(tenant),
        keys.billing_partition(tenant, account),
        page,
        sk_prefix=keys.BILLING_INVOICING_JOB_PREFIX,
    )
    return Page([_model(InvoicingJob, item) for item in found.items], found.list_completed)


def add_generation_job(uow: UnitOfWork, tenant: str, job: InvoiceGenerationJob) -> None:
    uow.add(table.put_new(_item(tenant, job.accountLocator, "generationJob", job)))


def generation_jobs(tenant: str, account: str, page: PageRequest) -> Page[InvoiceGenerationJob]:
    found = query.page(
        table.gateway(),
        _scope(tenant),
        keys.billing_partition(tenant, account),
        page,
        sk_prefix=keys.BILLING_GENERATION_JOB_PREFIX,
    )
    return Page([_model(InvoiceGenerationJob, item) for item in found.items], found.list_completed)


# --- billing holds, as those they hold ask about them --------------------------------------------------

HOLD_PREFIX = "HOLD#"
MAX_HOLDS_READ = 1000
"""An account's holds are read whole (a filtered page must count only the matching): at most this many."""


def hold_items(tenant: str, account: str) -> list[dict[str, Any]]:
    """The account's billing holds (`HOLD#{locator}` in its billing partition), one consistent Query."""
    items = query.all_items(
        table.gateway(), _scope(tenant), keys.billing_partition(tenant, account), sk_prefix=HOLD_PREFIX, consistent=True
    )
    return items[:MAX_HOLDS_READ]


def is_held(tenant: str, account: str, target: HoldTarget) -> bool:
    """Whether an active hold of `target` stands on the account (one Query of its holds): what invoicing
    and delinquency ask, below the holds package (holds/repository.py writes them)."""
    return any(
        item.get("holdState") == HoldState.ACTIVE and item.get("targetType") == target
        for item in hold_items(tenant, account)
    )
