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

What is one package's own lives in its package: installments/repository.py (lattices, installments, installment
jobs), invoices/repository.py (invoices, applications, invoicing and generation jobs), payments/repository.py
(payments and credits); this module holds what they share (keys, aliases, references, records by locator,
staged changes, the roots, the credit balance and the holds others ask about).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from chalicelib.billing.models import CreditBalance, HoldState, HoldTarget, LedgerLine
from chalicelib.core import codes
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


SELF_ALIASED = frozenset({"installment"})
"""Kinds whose record is stored at its alias key instead of the account's billing partition, packed: the
record is one JSON attribute (`PACKED`) besides the attributes that find it (locator, kind, account). It is
only ever written and read whole, never updated in place nor filtered on, and one string costs botocore
and DynamoDB far less to pass than the ~60 typed attributes of an installment and its items."""


PACKED = "record"


def scope(tenant: str) -> str:
    return keys.tenant_scope(tenant)


def _locator(record: BaseModel) -> str:
    return str(record.__dict__["locator"])


def model_of(model: type[M], item: dict[str, Any]) -> M:
    if PACKED in item:
        return model.model_validate_json(item[PACKED])
    return model.model_validate(codec.without_keys(item))


STAGED = "staged"
"""On a record a staged change rewrites: {"token": ..., "item": the record as the change has it}."""


STAGED_TOKEN = "stagedToken"
"""On a record a staged change adds: its token (the record exists once the token is committed)."""


STAGED_DELETE = "stagedDelete"
"""On a record a staged change deletes (an uninvoiced marker an invoice of a fleet takes): its token (the
record is gone once the token is committed; the roll forward deletes it)."""


def visible(tenant: str, account: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `items` (of the account's billing, in its partition or at their aliases) as a reader sees them: a
    staged rewrite of a committed change in place of the record, no record a change added that is not
    committed (yet), none a committed change deleted."""
    tokens = {item[STAGED]["token"] for item in items if STAGED in item}
    tokens |= {item[STAGED_TOKEN] for item in items if STAGED_TOKEN in item}
    tokens |= {item[STAGED_DELETE] for item in items if STAGED_DELETE in item}
    if not tokens:
        return items
    committed = committed_tokens(tenant, account, tokens)
    shown = []
    for item in items:
        if STAGED_TOKEN in item and item[STAGED_TOKEN] not in committed:
            continue
        if STAGED_DELETE in item and item[STAGED_DELETE] in committed:
            continue
        if STAGED in item and item[STAGED]["token"] in committed:
            item = {"PK": item["PK"], "SK": item["SK"], **item[STAGED]["item"]}
        shown.append(item)
    return shown


def committed_tokens(tenant: str, account: str, tokens: Iterable[str]) -> set[str]:
    return {
        item["token"]
        for item in table.gateway().batch_get(
            scope(tenant), [keys.billing_staged_commit(tenant, account, token) for token in sorted(tokens)]
        )
    }


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


def staged_add(item: dict[str, Any], token: str) -> WriteOp:
    return table.put_new({**item, STAGED_TOKEN: token})


def staged_delete(key: Key, token: str, on_missing: Any = None) -> WriteOp:
    """A record's delete staged on it (on condition that it exists): gone to readers once `token` commits."""
    return table.update(key, {STAGED_DELETE: token}, on_failure=on_missing)


def rolled_forward_add(item: dict[str, Any]) -> WriteOp:
    """The record a committed change added, its token dropped."""
    return table.update(Key(item["PK"], item["SK"]), {}, remove=[STAGED_TOKEN])


def write_staged(tenant: str, groups: list[list[WriteOp]]) -> None:
    """The staged writes, each group whole in one TransactWriteItems, as many to one as it holds (actions
    and bytes: an invoice's item pages are large)."""
    chunk: list[WriteOp] = []
    used = 0
    for group in groups:
        weight = sum(table.request_size(op) for op in group)
        if chunk and (len(chunk) + len(group) > table.MAX_TRANSACTION_ITEMS or used + weight > table.MAX_WRITE_BYTES):
            table.gateway().transact(scope(tenant), chunk)
            chunk, used = [], 0
        chunk.extend(group)
        used += weight
    table.gateway().transact(scope(tenant), chunk)


def fits_beside(ops: Iterable[WriteOp]) -> bool:
    """Whether `ops` weigh at most half of what one TransactWriteItems holds (the rest is their caller's)."""
    return sum(table.request_size(op) for op in ops) <= table.MAX_WRITE_BYTES // 2


ITEM_PAGES = "itemPages"
"""On an invoice whose items (or locators) are more than its record holds (a fleet's): {"pageSet", "count",
"digest"} of the pages beside it (keys.billing_item_page) holding the rest, in order: each page has JSON lists
under PAGE_ATTRIBUTES' names, the continuation of the record's lists."""


PAGE_ENTRIES = "entries"


PAGE_ATTRIBUTES = {
    PAGE_ENTRIES: "invoiceItems",
    "installmentLocators": "installmentLocators",
    "policyLocators": "policyLocators",
    "quoteLocators": "quoteLocators",
}
"""A page's attribute -> the list of the invoice it continues."""


def with_item_pages(tenant: str, account: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The invoice `items` (as visible) with their lists whole: each paged one's pages read (one Query per MB of
    them, none for an invoice that holds its items)."""
    whole = []
    for item in items:
        pages = item.get(ITEM_PAGES)
        if not pages or not pages.get("count"):
            whole.append(item)
            continue
        prefix = keys.billing_item_pages(tenant, account, item["locator"], pages["pageSet"])
        found = query.all_items(table.gateway(), scope(tenant), prefix.pk, sk_prefix=prefix.sk, consistent=True)
        if len(found) != int(pages["count"]):  # its items were rewritten since the record was read
            raise codes.CONCURRENT_MODIFICATION(f"Invoice {item['locator']} changed while it was read; retry")
        lists = {field: list(item.get(field, [])) for field in PAGE_ATTRIBUTES.values()}
        for page in found:
            for attribute, field in PAGE_ATTRIBUTES.items():
                if attribute in page:
                    lists[field].extend(json.loads(page[attribute]))
        whole.append({**item, **lists})
    return whole


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
        return {wanted[0]: root_version_of(table.gateway().get(scope(tenant), _root_key(tenant, account, wanted[0])))}
    found = {
        item["SK"]: int(item["version"])
        for item in table.gateway().batch_get(
            scope(tenant), [_root_key(tenant, account, container) for container in wanted]
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


def alias_write(tenant: str, kind: str, locator: str, account: str, container: str | None = None) -> WriteOp:
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
    item = table.gateway().get(scope(tenant), keys.billing_alias(tenant, locator))
    return item["accountLocator"] if item and item["kind"] == kind else None


def container_of(tenant: str, kind: str, locator: str) -> tuple[str, str] | None:
    """The account and billing container of a record of `kind` (an alias naming no container: the
    account's), read from its alias."""
    item = table.gateway().get(scope(tenant), keys.billing_alias(tenant, locator))
    if not item or item["kind"] != kind:
        return None
    return item["accountLocator"], item.get("billingContainer") or item["accountLocator"]


def record_key(tenant: str, account: str, kind: str, locator: str) -> Key:
    if kind in SELF_ALIASED:
        return keys.billing_alias(tenant, locator)
    return keys.billing_record(tenant, account, KIND_PREFIX[kind], locator)


def get(tenant: str, kind: str, locator: str, model: type[M]) -> M | None:
    if kind in SELF_ALIASED:
        item = table.gateway().get(scope(tenant), keys.billing_alias(tenant, locator))
        return model_of(model, item) if item and item.get("kind") == kind else None
    account = account_of(tenant, kind, locator)
    if account is None:
        return None
    item = table.gateway().get(scope(tenant), record_key(tenant, account, kind, locator))
    shown = visible(tenant, account, [item]) if item else []
    return model_of(model, with_item_pages(tenant, account, shown)[0]) if shown else None


def get_many(
    tenant: str, account: str, kind: str, locators: Iterable[str], model: type[M], *, whole: bool = True
) -> list[M]:
    """The records among `locators` of one account, in the order given (`whole`: an invoice with all of its
    items, read from its pages; else with those its record holds, for a list that shows none)."""
    wanted = list(dict.fromkeys(locators))
    items = table.gateway().batch_get(scope(tenant), [record_key(tenant, account, kind, locator) for locator in wanted])
    if kind in SELF_ALIASED:
        items = [item for item in items if item.get("kind") == kind and item["accountLocator"] == account]
    shown = visible(tenant, account, items)
    if whole and kind == "invoice":
        shown = with_item_pages(tenant, account, shown)
    found = {item["locator"]: model_of(model, item) for item in shown}
    return [found[locator] for locator in wanted if locator in found]


def record_item(tenant: str, account: str, kind: str, record: BaseModel, **extra: Any) -> dict[str, Any]:
    locator = _locator(record)
    if kind in SELF_ALIASED:
        return {
            **record_key(tenant, account, kind, locator).as_dict(),
            "entity": kind,
            "kind": kind,
            "locator": locator,
            "accountLocator": account,
            PACKED: record.model_dump_json(exclude_none=True),
            **extra,
        }
    return {
        **record_key(tenant, account, kind, locator).as_dict(),
        "entity": kind,
        **record.model_dump(exclude_none=True),
        **extra,
    }


def ref_writes(
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
    refs = query.page(table.gateway(), scope(tenant), keys.billing_refs(tenant, owner_kind, owner, record_kind), page)
    by_account: dict[str, list[str]] = {}
    for ref in refs.items:
        by_account.setdefault(ref["accountLocator"], []).append(ref["locator"])
    found: dict[str, M] = {}
    for account, locators in by_account.items():
        found.update({_locator(r): r for r in get_many(tenant, account, kind, locators, model, whole=False)})
    return Page([found[ref["locator"]] for ref in refs.items if ref["locator"] in found], refs.list_completed)


def records_page(model: type[M], tenant: str, account: str, page: PageRequest, prefix: str) -> Page[M]:
    """One page of the account's records whose sort key starts with `prefix`, in sort-key order (one Query
    of its billing partition)."""
    found = query.page(table.gateway(), scope(tenant), keys.billing_partition(tenant, account), page, sk_prefix=prefix)
    return Page([model_of(model, item) for item in found.items], found.list_completed)


def all_of(tenant: str, owner_kind: str, owner: str, record_kind: str, kind: str, model: type[M]) -> list[M]:
    refs = query.all_items(table.gateway(), scope(tenant), keys.billing_refs(tenant, owner_kind, owner, record_kind))
    records: list[M] = []
    by_account: dict[str, list[str]] = {}
    for ref in refs:
        by_account.setdefault(ref["accountLocator"], []).append(ref["locator"])
    for account, locators in by_account.items():
        records.extend(get_many(tenant, account, kind, locators, model))
    return sorted(records, key=_locator)


def accounts_of(tenant: str, kind: str, locators: Iterable[str]) -> dict[str, str]:
    """The account of each record of `kind` among `locators` that exists (one BatchGetItem of the aliases
    per hundred)."""
    by_partition = {keys.billing_alias(tenant, locator).as_dict()["PK"]: locator for locator in locators}
    items = table.gateway().batch_get(
        scope(tenant), [keys.billing_alias(tenant, locator) for locator in by_partition.values()]
    )
    return {by_partition[item["PK"]]: item["accountLocator"] for item in items if item["kind"] == kind}


def credit_balance(tenant: str, account: str, currency: str) -> CreditBalance:
    item = table.gateway().get(scope(tenant), keys.billing_credit_balance(tenant, account, currency))
    return model_of(CreditBalance, item) if item else CreditBalance(accountLocator=account, currency=currency)


def credit_balances(tenant: str, account: str) -> list[CreditBalance]:
    """The account's credit balance in each currency it has held one in."""
    items = query.all_items(
        table.gateway(),
        scope(tenant),
        keys.billing_partition(tenant, account),
        sk_prefix=keys.billing_credit_balance(tenant, account, "").sk,
        consistent=True,
    )
    return [model_of(CreditBalance, item) for item in items]


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
    return records_page(LedgerLine, tenant, account, page, f"{keys.BILLING_LEDGER_PREFIX}{currency}#")


HOLD_PREFIX = "HOLD#"


MAX_HOLDS_READ = 1000
"""An account's holds are read whole (a filtered page must count only the matching): at most this many."""


def hold_items(tenant: str, account: str) -> list[dict[str, Any]]:
    """The account's billing holds (`HOLD#{locator}` in its billing partition), one consistent Query."""
    items = query.all_items(
        table.gateway(), scope(tenant), keys.billing_partition(tenant, account), sk_prefix=HOLD_PREFIX, consistent=True
    )
    return items[:MAX_HOLDS_READ]


def held_targets(tenant: str, account: str) -> set[str]:
    """The targets of the active holds on the account (one Query of its holds): for a caller that asks of
    several (a lapse that bills: delinquency and invoicing)."""
    return {
        str(item.get("targetType")) for item in hold_items(tenant, account) if item.get("holdState") == HoldState.ACTIVE
    }


def is_held(tenant: str, account: str, target: HoldTarget) -> bool:
    """Whether an active hold of `target` stands on the account (one Query of its holds): what invoicing
    and delinquency ask, below the holds package (holds/repository.py writes them)."""
    return any(
        item.get("holdState") == HoldState.ACTIVE and item.get("targetType") == target
        for item in hold_items(tenant, account)
    )
