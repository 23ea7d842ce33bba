"""A quote's numbers: its own (claimed, or the next of the product's numbering plan) and the policy
number it reserves for issuing. Numbers are unique per tenant and kind (configuration/numbers.py)."""

from __future__ import annotations

from typing import Any

from chalicelib.configuration import numbers
from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.policies.models import ENTITY as POLICY_ENTITY
from chalicelib.priceable import checks
from chalicelib.quotes.lifecycle import ERRORS, LIFECYCLE
from chalicelib.quotes.models import ENTITY, RESERVED_POLICY_NUMBER_KIND, Quote
from chalicelib.quotes.records import get_quote, model_of, save
from chalicelib.runtime import wiring
from chalicelib.runtime.wiring import UnitOfWork

NUMBER_ASSIGNED_EVENT = "policy.quote.policyNumberAssigned"


def set_number(ctx: CallContext, locator: str, quote_number: str) -> Quote:
    """A number chosen by the caller; 409 `quote.number_taken` when another quote has it."""
    numbers.check_chosen(quote_number, field="quoteNumber", what="number")
    quote = get_quote(ctx, locator)
    LIFECYCLE.check(quote.quoteState, "be renumbered")
    if quote.quoteNumber == quote_number:
        return quote
    return _renumbered(ctx, quote, quote_number)


def generate_number(ctx: CallContext, locator: str) -> Quote:
    """The next number of the product's plan, replacing the quote's (409 `quote.no_numbering_plan`)."""
    quote = get_quote(ctx, locator)
    LIFECYCLE.check(quote.quoteState, "be renumbered")
    model = model_of(ctx, quote)
    plan = checks.configured_product(model, quote.productName, ERRORS).numbering_plan
    if plan is None:
        raise codes.NO_NUMBERING_PLAN["quote"](f"Product {quote.productName} has no numbering plan")
    return _renumbered(ctx, quote, numbers.NextOfPlan(model, plan, product=quote.productName, region=quote.region))


def set_reserved_policy_number(ctx: CallContext, locator: str, policy_number: str) -> Quote:
    """The number the policy will take on issue. It must not be a policy's number already, nor reserved
    by another quote (409 `quote.policy_number_taken`)."""
    numbers.check_chosen(policy_number, field="reservedPolicyNumber", what="number")
    quote = get_quote(ctx, locator)
    LIFECYCLE.check(quote.quoteState, "reserve a policy number")
    if quote.reservedPolicyNumber == policy_number:
        return quote
    if (
        numbers.number_owner(ctx, POLICY_ENTITY, policy_number) is not None
        or numbers.number_owner(ctx, RESERVED_POLICY_NUMBER_KIND, policy_number) is not None
    ):
        raise codes.QUOTE_POLICY_NUMBER_TAKEN(f"Policy number {policy_number} is in use or reserved")
    uow = wiring.unit_of_work(ctx)
    numbers.renumber(ctx, uow, RESERVED_POLICY_NUMBER_KIND, quote.locator, quote.reservedPolicyNumber, policy_number)
    return save(
        ctx,
        uow,
        quote.model_copy(update={"reservedPolicyNumber": policy_number}),
        ["update"],
        extra_events=[(NUMBER_ASSIGNED_EVENT, {"entityLocator": quote.locator})],
    )


def _renumbered(ctx: CallContext, quote: Quote, new: str | numbers.NextOfPlan) -> Quote:
    uow = wiring.unit_of_work(ctx)
    number = numbers.renumber(ctx, uow, ENTITY, quote.locator, quote.quoteNumber, new)
    return save(ctx, uow, quote.model_copy(update={"quoteNumber": number}), ["update"])


def assign_number(ctx: CallContext, uow: UnitOfWork, model: dict[str, Any], quote: Quote) -> None:
    """A number from the product's plan for a quote that has none yet (at creation or validation)."""
    plan = checks.configured_product(model, quote.productName, ERRORS).numbering_plan
    if plan is not None and quote.quoteNumber is None:
        quote.quoteNumber = numbers.renumber(
            ctx,
            uow,
            ENTITY,
            quote.locator,
            None,
            numbers.NextOfPlan(model, plan, product=quote.productName, region=quote.region),
        )
