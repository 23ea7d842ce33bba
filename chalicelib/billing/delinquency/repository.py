"""Persistence of delinquencies, their events and jobs, in the account's billing partition
(billing/repository.py): a delinquency `DLQ#{locator}`, an event `DLQEV#{delinquency}#{event}`, both
found by locator through the billing alias; lists per policy and invoice page a reference partition.
Jobs are stored whole as reference items of their owner (invoice or delinquency), so a list is one Query.
Every unit of work that writes here carries the bump of the account's billing root (the service adds it),
so the writes are plain puts: two writers of one account never interleave.

A delinquency of more than INLINE_REFERENCES references (a fleet's: one a policy, 1,000 policies were 147 KB on its
record, over DynamoDB's 400 KB at some 2,000-2,700) keeps none on its record, which names the set of pages holding
them (`referencePages`, keys.billing_delinquency_page: JSON lists `[locator, type, referenced, transaction]`, in
order), written in the record's own write; a write that changes them (a lapse naming its transactions, an invoice
joining) writes a new set and deletes the old one, a write that does not (a settlement, a re-opening) rewrites the
record alone. Pages more than a write holds beside the rest of it are written ahead (unseen until the record names
them) and the old ones deleted after it. Every read of a record joins its pages (one Query per MB of them): the
service's work and the API's answers (lists too) show the references. Up to INLINE_REFERENCES a record is stored
as before, byte for byte."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from functools import partial
from typing import Any, TypeVar

from pydantic import BaseModel

from chalicelib.billing import repository as billing
from chalicelib.billing.delinquency.models import (
    OPEN_STATES,
    Delinquency,
    DelinquencyCreateJob,
    DelinquencyEvent,
    DelinquencyEventJob,
    DelinquencyReference,
    GraceJob,
    ReferencePages,
)
from chalicelib.core import codes, records
from chalicelib.core.paging import Page, PageRequest
from chalicelib.storage import codec, keys, query, table
from chalicelib.storage.keys import Key
from chalicelib.storage.table import WriteOp
from chalicelib.storage.unit_of_work import UnitOfWork

M = TypeVar("M", bound=BaseModel)

DELINQUENCY_PREFIX = "DLQ#"
EVENT_PREFIX = "DLQEV#"
OPEN_PREFIX = "DLQOPEN#"
"""The account's open delinquencies (in grace), each a marker naming it: what payments and holds read."""
DELINQUENCIES = "DLQ"
"""Reference kind: the delinquencies of a policy or an invoice."""
CREATE_JOBS, GRACE_JOBS, EVENT_JOBS = "DCJOB", "GJOB", "DEJOB"
INLINE_REFERENCES = 100
"""The most references a delinquency's record holds (~150-200 bytes each): one of more keeps them in pages."""
PAGE_BYTES = 96_000
"""What one page of a delinquency's references holds at most, as JSON (~1,000 references)."""
PAGES_IN_WRITE = 10
"""The most page actions (the new set's puts and the old one's deletes) the record's own write takes; more (a fleet
of some 10,000 policies) are written ahead of it and deleted after it."""


def _scope(tenant: str) -> str:
    return keys.tenant_scope(tenant)


def _model(model: type[M], item: dict[str, Any]) -> M:
    return model.model_validate(codec.without_keys(item))


def _delinquency_key(tenant: str, account: str, locator: str) -> Key:
    return keys.billing_record(tenant, account, DELINQUENCY_PREFIX, locator)


def _event_key(tenant: str, account: str, delinquency: str, locator: str) -> Key:
    return keys.billing_record(tenant, account, f"{EVENT_PREFIX}{delinquency}#", locator)


def _alias(tenant: str, kind: str, locator: str, account: str, **extra: str) -> WriteOp:
    return table.put(
        {
            **keys.billing_alias(tenant, locator).as_dict(),
            "entity": "billingAlias",
            "kind": kind,
            "accountLocator": account,
            **extra,
        }
    )


def _alias_of(tenant: str, kind: str, locator: str) -> dict[str, Any] | None:
    item = table.gateway().get(_scope(tenant), keys.billing_alias(tenant, locator))
    return item if item and item["kind"] == kind else None


# --- delinquencies ----------------------------------------------------------------------------------


def _entries(record: Delinquency) -> list[str]:
    """Its references as its pages hold them: `[locator, type, referenced, transaction]` (and the delinquency's
    locator fifth, should one name another)."""
    return [
        json.dumps(
            [ref.locator, ref.referenceType, ref.referenceLocator, ref.transactionLocator]
            + ([] if ref.delinquencyLocator == record.locator else [ref.delinquencyLocator]),
            separators=(",", ":"),
        )
        for ref in record.references
    ]


def _reference_of(record: Delinquency, entry: list[Any]) -> DelinquencyReference:
    locator, kind, referenced, transaction, *of = entry
    return DelinquencyReference(
        locator=locator,
        delinquencyLocator=of[0] if of else record.locator,
        referenceLocator=referenced,
        referenceType=kind,
        transactionLocator=transaction,
    )


def stored_pages(record: Delinquency) -> ReferencePages | None:
    """Where the delinquency's references are once it is written: None on its record (INLINE_REFERENCES or fewer,
    never paged), else the pages it names when they hold them, or a new set (named by what it holds)."""
    if record.referencePages is None and len(record.references) <= INLINE_REFERENCES:
        return None
    entries = _entries(record)
    digest = hashlib.sha256("\n".join(entries).encode()).hexdigest()
    if record.referencePages is not None and record.referencePages.digest == digest:
        return record.referencePages
    return ReferencePages(pageSet=digest[:20], count=len(records.packed(entries, len, PAGE_BYTES)), digest=digest)


def _page_items(tenant: str, record: Delinquency, pages: ReferencePages) -> list[dict[str, Any]]:
    return [
        {
            **keys.billing_delinquency_page(
                tenant, record.accountLocator, record.locator, pages.pageSet, number
            ).as_dict(),
            "entity": "delinquencyReferencePage",
            "delinquencyLocator": record.locator,
            "references": "[" + ",".join(page) + "]",
        }
        for number, page in enumerate(records.packed(_entries(record), len, PAGE_BYTES))
    ]


def _page_keys(tenant: str, record: Delinquency, pages: ReferencePages) -> list[Key]:
    return [
        keys.billing_delinquency_page(tenant, record.accountLocator, record.locator, pages.pageSet, number)
        for number in range(pages.count)
    ]


def write_delinquency(
    uow: UnitOfWork, tenant: str, record: Delinquency, *, new: bool = False, listed: Iterable[str] | None = None
) -> Delinquency:
    """`delinquency_writes` added to `uow`, with the pages of its references when they change (`stored_pages`):
    the new set's puts and the old one's deletes in the write when they fit (PAGES_IN_WRITE, half of a write's
    bytes), else the new set written now, ahead (BatchWriteItem: unseen until the record names it; removed should
    the write fail) and the old one deleted after it. Answers the record as written (naming its pages)."""
    pages = stored_pages(record)
    old = record.referencePages
    written = record.model_copy(update={"referencePages": pages})
    uow.add(*delinquency_writes(tenant, written, new=new, listed=listed))
    if pages is None or pages == old:
        return written
    items = _page_items(tenant, record, pages)
    retired = _page_keys(tenant, record, old) if old is not None else []
    puts = [table.put(item) for item in items]
    if len(puts) + len(retired) <= PAGES_IN_WRITE and billing.fits_beside(puts):
        uow.add(*puts, *(table.delete(key) for key in retired))
        return written
    gateway, scope = table.gateway(), _scope(tenant)
    gateway.batch_write(scope, items)
    uow.after_failure(partial(gateway.batch_delete, scope, [keys.Key(i["PK"], i["SK"]) for i in items]))
    if retired:
        uow.after_commit(partial(gateway.batch_delete, scope, retired))
    return written


def _whole(tenant: str, item: dict[str, Any]) -> Delinquency:
    return _wholes(tenant, [item])[0]


def _wholes(tenant: str, items: list[dict[str, Any]]) -> list[Delinquency]:
    """The delinquencies of their stored `items`, in order, the references of those whose records hold none read
    from their pages, all of them by key in one BatchGetItem per hundred pages; 409 when a set was rewritten
    since its record was read (a page of it gone)."""
    found = [billing.model_of(Delinquency, item) for item in items]
    wanted = {
        record.locator: _page_keys(tenant, record, record.referencePages)
        for record in found
        if record.referencePages is not None
    }
    if not wanted:
        return found
    pages = {
        (page["PK"], page["SK"]): page
        for page in table.gateway().batch_get(
            _scope(tenant), [key for page_keys in wanted.values() for key in page_keys]
        )
    }
    whole = []
    for record in found:
        if record.locator not in wanted:
            whole.append(record)
            continue
        read = [pages.get((key.pk, key.sk)) for key in wanted[record.locator]]
        if any(page is None for page in read):
            raise codes.CONCURRENT_MODIFICATION(f"Delinquency {record.locator} changed while it was read; retry")
        references = [_reference_of(record, entry) for page in read if page for entry in json.loads(page["references"])]
        whole.append(record.model_copy(update={"references": references}))
    return whole


def delinquency_writes(
    tenant: str, record: Delinquency, *, new: bool = False, listed: Iterable[str] | None = None
) -> list[WriteOp]:
    """The record (without its references when it names their pages: `write_delinquency` writes them) and its
    open marker (put while it is open, deleted after); a new one also its alias and its references under each of
    its policies and invoices (`listed`: under those of them alone)."""
    account = record.accountLocator
    marker = keys.billing_record(tenant, account, OPEN_PREFIX, record.locator)
    stored = record if record.referencePages is None else record.model_copy(update={"references": []})
    writes = [
        table.put(
            {
                **_delinquency_key(tenant, account, record.locator).as_dict(),
                "entity": "delinquency",
                **stored.model_dump(exclude_none=True),
            }
        ),
        table.put({**marker.as_dict(), "entity": "openDelinquency", "locator": record.locator})
        if record.delinquencyState in OPEN_STATES
        else table.delete(marker),
    ]
    if new:
        writes.append(_alias(tenant, "delinquency", record.locator, account, billingContainer=record.container))
    references = record.references if new else []
    if listed is not None:
        names = set(listed)
        references = [ref for ref in references if ref.referenceLocator in names]
    return writes + reference_writes(tenant, record, references)


def reference_writes(tenant: str, record: Delinquency, references: Iterable[Any]) -> list[WriteOp]:
    """The delinquency listed under the policies and invoices `references` name."""
    return [
        table.put(
            {
                **keys.billing_ref(
                    tenant, ref.referenceType, ref.referenceLocator, DELINQUENCIES, record.locator
                ).as_dict(),
                "entity": "billingRef",
                "kind": "delinquency",
                "locator": record.locator,
                "accountLocator": record.accountLocator,
            }
        )
        for ref in references
    ]


def delinquency_home(tenant: str, locator: str) -> tuple[str, str | None] | None:
    """The account of the delinquency and the billing container whose root its writes bump (None where its
    alias predates naming it), from its alias: what a write reads before the record (the root first)."""
    alias = _alias_of(tenant, "delinquency", locator)
    if alias is None:
        return None
    container = alias.get("billingContainer")
    return str(alias["accountLocator"]), str(container) if container else None


def delinquency_key(tenant: str, account: str, locator: str) -> tuple[str, str]:
    """The (PK, SK) of the delinquency's record, for a read of it together with other records."""
    key = _delinquency_key(tenant, account, locator)
    return key.pk, key.sk


def delinquency_of(tenant: str, item: dict[str, Any] | None) -> Delinquency | None:
    """The delinquency of its stored item (read with other records), with its references."""
    return _whole(tenant, item) if item else None


def delinquency(tenant: str, locator: str, account: str | None = None) -> Delinquency | None:
    """The delinquency (its alias read first unless its `account` is known)."""
    if account is None:
        alias = _alias_of(tenant, "delinquency", locator)
        if alias is None:
            return None
        account = str(alias["accountLocator"])
    item = table.gateway().get(_scope(tenant), _delinquency_key(tenant, account, locator))
    return _whole(tenant, item) if item else None


def delinquencies(tenant: str, account: str, locators: Iterable[str]) -> list[Delinquency]:
    """The account's delinquencies among `locators`, in the order given (one BatchGetItem per hundred)."""
    wanted = list(dict.fromkeys(locators))
    items = table.gateway().batch_get(
        _scope(tenant), [_delinquency_key(tenant, account, locator) for locator in wanted]
    )
    found = {record.locator: record for record in _wholes(tenant, items)}
    return [found[locator] for locator in wanted if locator in found]


def delinquencies_of_account(tenant: str, account: str, page: PageRequest) -> Page[Delinquency]:
    found = query.page(
        table.gateway(), _scope(tenant), keys.billing_partition(tenant, account), page, sk_prefix=DELINQUENCY_PREFIX
    )
    return Page(_wholes(tenant, found.items), found.list_completed)


def delinquencies_of(tenant: str, owner_kind: str, owner: str, page: PageRequest) -> Page[Delinquency]:
    """One page of the delinquencies of a policy or an invoice, oldest first."""
    refs = query.page(
        table.gateway(), _scope(tenant), keys.billing_refs(tenant, owner_kind, owner, DELINQUENCIES), page
    )
    by_account: dict[str, list[str]] = {}
    for ref in refs.items:
        by_account.setdefault(ref["accountLocator"], []).append(ref["locator"])
    found = {
        record.locator: record
        for account, locators in by_account.items()
        for record in delinquencies(tenant, account, locators)
    }
    return Page([found[ref["locator"]] for ref in refs.items if ref["locator"] in found], refs.list_completed)


def open_delinquencies(tenant: str, account: str) -> list[Delinquency]:
    """The account's delinquencies in grace: one Query of its open markers (none: nothing more read),
    then one BatchGetItem per hundred."""
    markers = query.all_items(
        table.gateway(), _scope(tenant), keys.billing_partition(tenant, account), sk_prefix=OPEN_PREFIX, consistent=True
    )
    return delinquencies(tenant, account, [m["locator"] for m in markers]) if markers else []


# --- delinquency events -------------------------------------------------------------------------------


def event_writes(tenant: str, event: DelinquencyEvent, *, new: bool = False) -> list[WriteOp]:
    writes = [
        table.put(
            {
                **_event_key(tenant, event.accountLocator, event.delinquencyLocator, event.locator).as_dict(),
                "entity": "delinquencyEvent",
                **event.model_dump(exclude_none=True),
            }
        )
    ]
    if new:
        writes.append(
            _alias(
                tenant,
                "delinquencyEvent",
                event.locator,
                event.accountLocator,
                delinquencyLocator=event.delinquencyLocator,
            )
        )
    return writes


def delinquency_event(tenant: str, locator: str) -> DelinquencyEvent | None:
    alias = _alias_of(tenant, "delinquencyEvent", locator)
    if alias is None:
        return None
    item = table.gateway().get(
        _scope(tenant), _event_key(tenant, alias["accountLocator"], alias["delinquencyLocator"], locator)
    )
    return _model(DelinquencyEvent, item) if item else None


def events_of(tenant: str, account: str, delinquency_locator: str) -> list[DelinquencyEvent]:
    items = query.all_items(
        table.gateway(),
        _scope(tenant),
        keys.billing_partition(tenant, account),
        sk_prefix=f"{EVENT_PREFIX}{delinquency_locator}#",
        consistent=True,
    )
    return [_model(DelinquencyEvent, item) for item in items]


# --- jobs ---------------------------------------------------------------------------------------------


def create_job_writes(tenant: str, job: DelinquencyCreateJob) -> list[WriteOp]:
    return [_job_put(tenant, "invoice", job.invoiceLocator, CREATE_JOBS, job.locator, "delinquencyCreateJob", job)]


def grace_job_writes(tenant: str, job: GraceJob) -> list[WriteOp]:
    return [_job_put(tenant, "delinquency", job.delinquencyLocator, GRACE_JOBS, job.locator, "graceJob", job)]


def event_job_writes(tenant: str, job: DelinquencyEventJob) -> list[WriteOp]:
    """Keyed by its event: one job an event, rewritten as it runs, is cancelled or rescheduled."""
    return [
        _job_put(
            tenant,
            "delinquency",
            job.delinquencyLocator,
            EVENT_JOBS,
            job.delinquencyEventLocator,
            "delinquencyEventJob",
            job,
        )
    ]


def _job_put(tenant: str, owner_kind: str, owner: str, kind: str, key: str, entity: str, job: BaseModel) -> WriteOp:
    return table.put(
        {
            **keys.billing_ref(tenant, owner_kind, owner, kind, key).as_dict(),
            "entity": entity,
            **job.model_dump(exclude_none=True),
        }
    )


def create_jobs(tenant: str, invoice: str, page: PageRequest) -> Page[DelinquencyCreateJob]:
    return _jobs(tenant, "invoice", invoice, CREATE_JOBS, DelinquencyCreateJob, page)


def grace_jobs(tenant: str, delinquency_locator: str, page: PageRequest) -> Page[GraceJob]:
    return _jobs(tenant, "delinquency", delinquency_locator, GRACE_JOBS, GraceJob, page)


def event_jobs(tenant: str, delinquency_locator: str, page: PageRequest) -> Page[DelinquencyEventJob]:
    return _jobs(tenant, "delinquency", delinquency_locator, EVENT_JOBS, DelinquencyEventJob, page)


def all_event_jobs(tenant: str, delinquency_locator: str) -> list[DelinquencyEventJob]:
    items = query.all_items(
        table.gateway(),
        _scope(tenant),
        keys.billing_refs(tenant, "delinquency", delinquency_locator, EVENT_JOBS),
        consistent=True,
    )
    return [_model(DelinquencyEventJob, item) for item in items]


def _jobs(tenant: str, owner_kind: str, owner: str, kind: str, model: type[M], page: PageRequest) -> Page[M]:
    found = query.page(table.gateway(), _scope(tenant), keys.billing_refs(tenant, owner_kind, owner, kind), page)
    return Page([_model(model, item) for item in found.items], found.list_completed)
