"""Moving uninvoiced installments' times (OpenAPI `PATCH /installments`, `PatchInstallmentsRequest`): the
generate, due and autopay times of up to 100 installments at once, as the platform's installments plugin
would set them.

Only uninvoiced installments move (an invoiced one's times are its invoice's: 409 `installment.invoiced`);
a new generate time refiles the installment's uninvoiced marker and moves its account's invoice
generation entry earlier when it now comes first. Each account's installments are rewritten in chunks that
fit one TransactWriteItems, one container's each, with its billing root bumped and a
`billing.installment.update` event: everything is checked before the first chunk is written.
"""

from __future__ import annotations

from datetime import datetime

from chalicelib.billing import account_root, repository
from chalicelib.billing.installments import repository as installment_repository
from chalicelib.billing.installments.models import Installment
from chalicelib.core import codes
from chalicelib.core.clock import isoformat
from chalicelib.core.context import CallContext
from chalicelib.core.errors import FieldError
from chalicelib.runtime import due
from chalicelib.runtime.due_kinds import DueKind

PER_WRITE = 30
"""Installments rewritten in one TransactWriteItems (three writes each at most, the root, the entry, the
event)."""


def retime(
    ctx: CallContext,
    locators: list[str],
    generate_time: datetime | None,
    due_time: datetime | None,
    autopay_time: datetime | None,
) -> list[Installment]:
    """The installments with their new times, in the order named."""
    if generate_time is None and due_time is None and autopay_time is None:
        raise codes.REQUEST_INVALID(
            "Name a generateTime, dueTime or autopayTime to set",
            field_errors=[FieldError("generateTime", "one of the times is required")],
        )
    owners = repository.accounts_of(ctx.tenant, "installment", locators)
    for locator in locators:
        if locator not in owners:
            raise codes.not_found("installment", locator)
    found: dict[str, Installment] = {}
    for account in sorted(set(owners.values())):
        mine = [locator for locator in locators if owners[locator] == account]
        found.update({i.locator: i for i in repository.get_many(ctx.tenant, account, "installment", mine, Installment)})
    for index, locator in enumerate(locators):
        if found[locator].invoiceLocator:
            raise codes.INSTALLMENT_INVOICED(
                f"Installment {locator} is invoiced on {found[locator].invoiceLocator}",
                field_errors=[FieldError(f"installmentLocators[{index}]", "invoiced")],
            )
    changes = {"generateTime": generate_time, "dueTime": due_time, "autopayTime": autopay_time}
    changed = {
        locator: found[locator].model_copy(
            update={
                **{name: value for name, value in changes.items() if value is not None},
                "updatedAt": ctx.now,
                "updatedBy": ctx.user_locator,
            }
        )
        for locator in dict.fromkeys(locators)
    }
    for account in sorted(set(owners.values())):
        _write(ctx, account, [changed[locator] for locator in changed if owners[locator] == account], found)
    return [changed[locator] for locator in locators]


def _write(ctx: CallContext, account: str, installments: list[Installment], before: dict[str, Installment]) -> None:
    """Each container's installments in chunks, each with its container's root bumped."""
    by_container: dict[str, list[Installment]] = {}
    for installment in installments:
        by_container.setdefault(installment.billingContainer, []).append(installment)
    for container, mine in by_container.items():
        for start in range(0, len(mine), PER_WRITE):
            chunk = mine[start : start + PER_WRITE]
            uow = account_root.open_write(ctx, account, [container])
            for installment in chunk:
                uow.add(
                    *installment_repository.retimed_installment_writes(
                        ctx.tenant, installment, isoformat(before[installment.locator].generateTime)
                    )
                )
            due.bring_forward(uow, DueKind.INVOICE_GENERATE, account, min(i.generateTime for i in chunk))
            uow.record_event("billing.installment.update", {"installmentLocators": [i.locator for i in chunk]})
            uow.commit()
