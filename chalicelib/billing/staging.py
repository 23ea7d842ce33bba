"""Billing changes of any number of invoices (a payment's posting or reversal, a credit distribution, a
write-off): one unit of work when they fit in one TransactWriteItems, else staged.

Every change of an invoice is an `InvoiceChange`: the invoice as changed, the records it adds beside it
(an application, a write-off's reference) or rewrites (an application reversed) and its events. The caller
`add`s them to its unit of work once it holds all else the change writes (the credit balance, the
delinquencies, a write-off) but its own record and event (`after`: what it adds after them), and
`commit`s through here:

- they fit: they join the unit of work, which commits as it always did;
- else the change is staged under a new token: the item pages of its invoices whose items changed are written as
  new sets (invoices/repository.py: unseen until a record names them), its rewrites of invoices and applications
  are written beside the records as they were (each invoice's on condition of the version it was read at, one
  more for the staged record; an invoice carrying the staged rewrite of a committed change not rolled forward
  gets that one's record in place), the records it adds carry the token; then the caller's unit of work commits
  with the commit marker of the token: the bumps of the billing roots it read before anything else (any billing
  write of those containers meanwhile makes it fail with 409, and what was staged is never seen), the payment or
  write-off, the balance, the delinquencies, the caller's events. From that write on, every read of
  billing/repository.py shows the staged records as the change has them, and before it none of them: a reader
  sees all of the change or none. Then it is rolled forward: each invoice rewritten with its open marker (its
  old item pages deleted), each record added without its token, each rewritten record in place, the invoices'
  events, as many to a TransactWriteItems as it holds. A rewrite of an invoice by anyone else rolls it forward
  as well (it writes the invoice as read, staged change included), so a roll forward that finds an invoice
  changed since skips it (with its events); one the process did not live to do leaves the records correct to
  every reader, and only open markers of settled invoices behind (readers skip them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chalicelib.billing import repository
from chalicelib.billing.invoices import repository as invoice_repository
from chalicelib.billing.invoices.models import Invoice
from chalicelib.core.context import CallContext
from chalicelib.core.errors import DomainError
from chalicelib.core.ids import new_locator
from chalicelib.runtime import wiring
from chalicelib.runtime.wiring import UnitOfWork


@dataclass
class InvoiceChange:
    invoice: Invoice
    """As changed; its `version` the one it was read at."""
    was_open: bool
    added: list[dict[str, Any]] = field(default_factory=list)
    """Whole items (keys included) of the records the change adds beside the invoice."""
    rewritten: list[dict[str, Any]] = field(default_factory=list)
    """Whole items of records beside the invoice the change rewrites."""
    pages: list[dict[str, Any]] = field(default_factory=list)
    """Whole items of the pages of a record it adds (an application's item amounts: invoices/repository.py
    `application_pages`), unread until that record is seen: in the write when the change fits in it, else written
    before the staged writes by BatchWriteItem (no token, no roll forward)."""
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@dataclass
class Staged:
    """What `add` made of the changes: joined to the unit of work (`changes` empty), or to be staged."""

    account: str
    changes: list[InvoiceChange]


def add(ctx: CallContext, uow: UnitOfWork, account: str, changes: list[InvoiceChange], *, after: int = 0) -> Staged:
    """Add the changes to `uow` when they fit in it with the `after` actions its caller adds before it
    commits, else keep them to be staged by `commit`."""
    direct = [_direct(ctx.tenant, change) for change in changes]
    needed = sum(len(ops) for ops in direct) + sum(len(change.events) for change in changes)
    # a fleet's invoice rewritten with its item pages may weigh more than its caller's write holds: staged
    if needed <= uow.remaining - after and repository.fits_beside(op for ops in direct for op in ops):
        for change, ops in zip(changes, direct):
            uow.add(*ops)
            for event_type, data in change.events:
                uow.record_event(event_type, data)
        return Staged(account, [])
    return Staged(account, changes)


def commit(ctx: CallContext, uow: UnitOfWork, staged: Staged) -> list[dict[str, Any]]:
    """Commit `uow` with the changes `add` kept: staged first, rolled forward after (see above)."""
    if not staged.changes:
        return uow.commit()
    token = new_locator()
    shown = invoice_repository.shown_invoices(ctx.tenant, staged.account, [c.invoice.locator for c in staged.changes])
    for change in staged.changes:
        invoice_repository.write_pages(ctx.tenant, change.invoice)  # a new set: unseen until the record names it
    # an application's pages: unseen until the record that names them is, so no token
    invoice_repository.write_added_pages(ctx.tenant, [page for change in staged.changes for page in change.pages])
    repository.write_staged(
        ctx.tenant,
        [_staged(ctx.tenant, change, token, shown.get(change.invoice.locator)) for change in staged.changes],
    )
    uow.add(repository.staged_commit_write(ctx.tenant, staged.account, token))
    committed = uow.commit()
    _roll_forward(ctx, staged.changes)
    return committed


def _direct(tenant: str, change: InvoiceChange) -> list[Any]:
    return [
        *invoice_repository.invoice_update_writes(tenant, change.invoice, change.was_open),
        *(repository.record_write(item, new=True) for item in change.added),
        *(repository.record_write(item) for item in change.rewritten),
        *invoice_repository.page_puts(change.pages),
    ]


def _staged(
    tenant: str, change: InvoiceChange, token: str, shown: tuple[dict[str, Any], list[str]] | None
) -> list[Any]:
    invoice = change.invoice
    return [
        repository.staged_rewrite(
            invoice_repository.invoice_item(tenant, invoice), token, expected_version=invoice.version, shown=shown
        ),
        *(repository.staged_add(item, token) for item in change.added),
        *(repository.staged_rewrite(item, token) for item in change.rewritten),
    ]


def _rolled(tenant: str, change: InvoiceChange) -> list[Any]:
    staged = invoice_repository.as_written(change.invoice).model_copy(update={"version": change.invoice.version + 1})
    return [
        *invoice_repository.invoice_update_writes(tenant, staged, change.was_open),
        *invoice_repository.retired_page_writes(tenant, change.invoice),
        *(repository.rolled_forward_add(item) for item in change.added),
        *(repository.record_write(item) for item in change.rewritten),
    ]


def _roll_forward(ctx: CallContext, changes: list[InvoiceChange]) -> None:
    """The committed changes written into their records, as many to a unit of work as it holds; a unit of
    work that fails (an invoice rewritten since) is retried change by change, skipping those that fail."""
    batch: list[InvoiceChange] = []
    uow = wiring.unit_of_work(ctx)
    for change in changes:
        ops = _rolled(ctx.tenant, change)
        if batch and len(ops) + len(change.events) > uow.remaining:
            _commit_batch(ctx, uow, batch)
            batch, uow = [], wiring.unit_of_work(ctx)
        batch.append(change)
        uow.add(*ops)
        for event_type, data in change.events:
            uow.record_event(event_type, data)
    if batch:
        _commit_batch(ctx, uow, batch)


def _commit_batch(ctx: CallContext, uow: UnitOfWork, batch: list[InvoiceChange]) -> None:
    try:
        uow.commit()
    except DomainError:
        if len(batch) == 1:
            return  # rolled forward by whoever rewrote it since
        for change in batch:
            alone = wiring.unit_of_work(ctx)
            alone.add(*_rolled(ctx.tenant, change))
            for event_type, data in change.events:
                alone.record_event(event_type, data)
            _commit_batch(ctx, alone, [change])
