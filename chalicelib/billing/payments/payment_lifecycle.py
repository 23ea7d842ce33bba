"""Payment numbers and payment requests (OpenAPI: `/payments/{l}/number/set|generate`,
`/payments/numbers/{n}`, `/payments/{l}/request|fail|cancel`).

Numbers (DECISIONS.md "Numbering"): a payment type's `numberingPlan`, else the configuration's
`defaultPaymentNumberingPlanName`, numbers its payments at creation (`numberingTrigger: creation`) or,
by default, when they are validated; `number/set` and `number/generate` renumber one by hand.

Requests: a validated payment whose money a payment provider collects is `requested` (`request`); the
provider's answer posts it (`post`) or fails it (`fail`); a validated or requested payment can be
`cancel`led. Failed and cancelled payments moved no money.
"""

from __future__ import annotations

from typing import Any

from chalicelib.billing import account_root, repository
from chalicelib.billing.payments import repository as payment_repository
from chalicelib.billing.payments.models import Payment, PaymentState
from chalicelib.configuration import numbers
from chalicelib.configuration import service as configuration
from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.runtime import wiring
from chalicelib.runtime.wiring import UnitOfWork

PAYMENT_ENTITY = "payment"
CREATION = "creation"
VALIDATION = "validation"


def number_on(ctx: CallContext, uow: UnitOfWork, record: Payment, trigger: str) -> Payment:
    """The payment with its number reserved in `uow` when its plan numbers payments at `trigger` (and it
    has none yet)."""
    plan_name, model = _numbering_plan(ctx, record.type)
    found = configuration.billing_plans(ctx).payment_type(record.type)
    plan_trigger = CREATION if found is not None and found.numbers_on_creation else VALIDATION
    if plan_name is None or record.paymentNumber is not None or trigger != plan_trigger:
        return record
    number = numbers.reserve_number(ctx, uow, model, plan_name, PAYMENT_ENTITY, record.locator)
    return record.model_copy(update={"paymentNumber": number})


def set_number(ctx: CallContext, locator: str, number: str) -> Payment:
    numbers.check_chosen(number, field="paymentNumber", what="payment number")
    current = _payment(ctx, locator)
    if number == current.paymentNumber:
        return current
    uow = wiring.unit_of_work(ctx)
    assigned = numbers.renumber(ctx, uow, PAYMENT_ENTITY, locator, current.paymentNumber, number)
    return _save(ctx, uow, current.model_copy(update={"paymentNumber": assigned}), "billing.payment.update")


def generate_number(ctx: CallContext, locator: str) -> Payment:
    current = _payment(ctx, locator)
    plan_name, model = _numbering_plan(ctx, current.type)
    if plan_name is None:
        raise codes.NO_NUMBERING_PLAN[PAYMENT_ENTITY](
            f"Payment type {current.type} names no numbering plan, nor does the configuration"
        )
    uow = wiring.unit_of_work(ctx)
    assigned = numbers.renumber(
        ctx, uow, PAYMENT_ENTITY, locator, current.paymentNumber, numbers.NextOfPlan(model, plan_name)
    )
    return _save(ctx, uow, current.model_copy(update={"paymentNumber": assigned}), "billing.payment.update")


def with_number(ctx: CallContext, number: str) -> list[Payment]:
    owner = numbers.number_owner(ctx, PAYMENT_ENTITY, number)
    found = repository.get(ctx.tenant, "payment", owner, Payment) if owner else None
    if found is None:
        raise codes.not_found("payment", f"numbered {number}")
    return [found]


def request(ctx: CallContext, locator: str) -> Payment:
    return _move(
        ctx, locator, (PaymentState.VALIDATED,), PaymentState.REQUESTED, "be requested", "billing.payment.request"
    )


def fail(ctx: CallContext, locator: str) -> Payment:
    return _move(ctx, locator, (PaymentState.REQUESTED,), PaymentState.FAILED, "fail", "billing.payment.fail")


def cancel(ctx: CallContext, locator: str) -> Payment:
    return _move(
        ctx,
        locator,
        (PaymentState.VALIDATED, PaymentState.REQUESTED),
        PaymentState.CANCELLED,
        "be cancelled",
        "billing.payment.cancel",
    )


def _move(
    ctx: CallContext, locator: str, allowed: tuple[PaymentState, ...], state: PaymentState, what: str, event: str
) -> Payment:
    current = _payment(ctx, locator)
    if current.paymentState not in allowed:
        raise codes.PAYMENT_INVALID_STATE(
            f"Payment {current.locator} is {current.paymentState.value} and cannot {what}"
        )
    return _save(ctx, wiring.unit_of_work(ctx), current.model_copy(update={"paymentState": state}), event)


def _payment(ctx: CallContext, locator: str) -> Payment:
    found = repository.get(ctx.tenant, "payment", locator, Payment)
    if found is None:
        raise codes.not_found("payment", locator)
    return found


def _numbering_plan(ctx: CallContext, payment_type: str) -> tuple[str | None, dict[str, Any]]:
    model = configuration.current_model(ctx, resolved=True)[1]
    found = configuration.billing_plans(ctx).payment_type(payment_type)
    default = model.get("defaultPaymentNumberingPlanName")
    return (found.numbering_plan if found else None) or (default if isinstance(default, str) else None), model


def _save(ctx: CallContext, uow: UnitOfWork, record: Payment, event: str) -> Payment:
    """The changed payment, its account's billing root bumped and its event, committed."""
    account = record.accountLocator
    account_root.bump(ctx, uow, account, [account])
    changed = record.model_copy(update={"updatedAt": ctx.now, "updatedBy": ctx.user_locator})
    payment_repository.save_payment(uow, ctx.tenant, changed)
    uow.record_event(event, {"paymentLocator": changed.locator, "policyLocators": {"listCompleted": True, "items": []}})
    uow.commit()
    return changed.model_copy(update={"version": changed.version + 1})
