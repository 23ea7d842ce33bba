"""Persistence of billing holds: `HOLD#{locator}` in the account's billing partition (found by locator
through the billing alias), so an account's holds are one Query of its partition and every change bumps
the account's billing root with the invoicing and delinquency work the hold governs."""

from __future__ import annotations

from typing import Any

from chalicelib.billing import repository as billing
from chalicelib.billing.holds.models import Hold, HoldState, HoldTarget
from chalicelib.core.paging import Page, PageRequest
from chalicelib.storage import codec, keys, table
from chalicelib.storage.table import WriteOp

HOLD_PREFIX = billing.HOLD_PREFIX


def _scope(tenant: str) -> str:
    return keys.tenant_scope(tenant)


def _model(item: dict[str, Any]) -> Hold:
    return Hold.model_validate(codec.without_keys(item))


def hold_writes(tenant: str, hold: Hold, *, new: bool = False) -> list[WriteOp]:
    writes = [
        table.put(
            {
                **keys.billing_record(tenant, hold.accountLocator, HOLD_PREFIX, hold.locator).as_dict(),
                "entity": "hold",
                **hold.model_dump(exclude_none=True),
            }
        )
    ]
    if new:
        writes.append(
            table.put_new(
                {
                    **keys.billing_alias(tenant, hold.locator).as_dict(),
                    "entity": "billingAlias",
                    "kind": "hold",
                    "accountLocator": hold.accountLocator,
                }
            )
        )
    return writes


def hold(tenant: str, locator: str) -> Hold | None:
    alias = table.gateway().get(_scope(tenant), keys.billing_alias(tenant, locator))
    if not alias or alias["kind"] != "hold":
        return None
    item = table.gateway().get(
        _scope(tenant), keys.billing_record(tenant, alias["accountLocator"], HOLD_PREFIX, locator)
    )
    return _model(item) if item else None


def holds_of_account(tenant: str, account: str, page: PageRequest, state: HoldState | None) -> Page[Hold]:
    if state is None:
        return billing.records_page(Hold, tenant, account, page, HOLD_PREFIX)
    matching = [h for h in _all(tenant, account) if h.holdState == state]
    return Page.window(matching, page)


def is_held(tenant: str, account: str, target: HoldTarget) -> bool:
    """Whether an active hold of `target` stands on the account (one Query of its holds)."""
    return billing.is_held(tenant, account, target)


def _all(tenant: str, account: str) -> list[Hold]:
    return [_model(item) for item in billing.hold_items(tenant, account)]
