"""Billing holds (models.py): created on an account as drafts, moved through their states; activating a
delinquency hold cancels the waiting events of the account's delinquencies in grace, releasing the last
one puts their grace ends again (delinquency/service.py); releasing the last invoicing hold makes the
account's invoice generation due now, so what the hold kept back is invoiced. Every change bumps the
account's billing root with its event."""

from __future__ import annotations

from chalicelib.accounts import service as accounts
from chalicelib.billing import account_root
from chalicelib.billing.delinquency import service as delinquencies
from chalicelib.billing.holds import repository
from chalicelib.billing.holds.models import MOVES, Hold, HoldState, HoldTarget
from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.ids import new_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.runtime import due
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.runtime.wiring import UnitOfWork

EVENT = "billing.hold"


def invoicing_held(ctx: CallContext, account_locator: str) -> bool:
    """Whether an active invoicing hold stops the account's invoice generation."""
    return repository.is_held(ctx.tenant, account_locator, HoldTarget.INVOICING)


def hold(ctx: CallContext, locator: str) -> Hold:
    found = repository.hold(ctx.tenant, locator)
    if found is None:
        raise codes.not_found("hold", locator)
    return found


def holds_of_account(ctx: CallContext, account_locator: str, page: PageRequest, state: HoldState | None) -> Page[Hold]:
    return repository.holds_of_account(ctx.tenant, account_locator, page, state)


def create_hold(ctx: CallContext, account_locator: str, target: HoldTarget) -> Hold:
    """A draft hold on an account of the tenant (404 for any other)."""
    account = accounts.get_account(ctx, account_locator)
    record = Hold(
        locator=new_locator(),
        accountLocator=account.locator,
        targetType=target,
        holdState=HoldState.DRAFT,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        updatedBy=ctx.user_locator,
    )
    uow = _unit_of_work(ctx, account.locator)
    uow.add(*repository.hold_writes(ctx.tenant, record, new=True))
    uow.record_event(f"{EVENT}.create", {"holdLocator": record.locator})
    uow.commit()
    return record


def update_hold(ctx: CallContext, locator: str, account_locator: str | None, target: HoldTarget | None) -> Hold:
    """A draft's target; its account stays (a hold lives in its account's billing: another account is 409)."""
    current = hold(ctx, locator)
    uow = _unit_of_work(ctx, current.accountLocator)
    current = hold(ctx, locator)
    if current.holdState != HoldState.DRAFT:
        raise codes.HOLD_INVALID_STATE(f"Hold {locator} is {current.holdState.value}: only a draft changes")
    if account_locator is not None and account_locator != current.accountLocator:
        accounts.get_account(ctx, account_locator)  # another tenant's, or none: 404
        raise codes.HOLD_INVALID_STATE(
            f"Hold {locator} is on account {current.accountLocator}; create a hold on the other account instead"
        )
    changed = current.model_copy(
        update={"targetType": target or current.targetType, "updatedAt": ctx.now, "updatedBy": ctx.user_locator}
    )
    uow.add(*repository.hold_writes(ctx.tenant, changed))
    uow.record_event(f"{EVENT}.update", {"holdLocator": locator})
    uow.commit()
    return changed


def move_hold(ctx: CallContext, locator: str, move: str) -> Hold:
    """`validate`, `reset`, `activate`, `release` or `discard` the hold (models.MOVES); 409 from any other
    state, nothing changed."""
    current = hold(ctx, locator)
    account = current.accountLocator
    uow = _unit_of_work(ctx, account)
    current = hold(ctx, locator)  # read after the root: what the bump is conditional on
    allowed, target = MOVES[move]
    if current.holdState not in allowed:
        raise codes.HOLD_INVALID_STATE(f"Hold {locator} is {current.holdState.value}: {move} is not allowed")
    validated = {"success": True} if target in (HoldState.VALIDATED, HoldState.ACTIVE) else current.validationResult
    if target == HoldState.DRAFT:
        validated = None
    changed = current.model_copy(
        update={"holdState": target, "validationResult": validated, "updatedAt": ctx.now, "updatedBy": ctx.user_locator}
    )
    uow.add(*repository.hold_writes(ctx.tenant, changed))
    if target == HoldState.ACTIVE and current.targetType == HoldTarget.DELINQUENCY:
        delinquencies.hold_account(ctx, uow, account)
    if target == HoldState.RELEASED and not _others_active(ctx, current):
        if current.targetType == HoldTarget.DELINQUENCY:
            delinquencies.release_account(ctx, uow, account)
        else:
            due.schedule(uow, DueKind.INVOICE_GENERATE, account, ctx.now)
    uow.record_event(f"{EVENT}.{move}", {"holdLocator": locator})
    uow.commit()
    return changed


def _others_active(ctx: CallContext, released: Hold) -> bool:
    """Whether another active hold of the same target stands on the account."""
    page = repository.holds_of_account(ctx.tenant, released.accountLocator, PageRequest(0, 100), HoldState.ACTIVE)
    return any(h.locator != released.locator and h.targetType == released.targetType for h in page.items)


def _unit_of_work(ctx: CallContext, account: str) -> UnitOfWork:
    """A unit of work carrying the bump of the account's billing root (read first: what is read after it
    is what the commit is conditional on)."""
    return account_root.open_write(ctx, account, [account])
