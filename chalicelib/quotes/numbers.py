"""A quote's numbers: its own (claimed, or the next of the product's numbering plan) and the policy
number it reserves for issuing. Numbers are unique per tenant and kind (configuration/numbers.py)."""
from __future__ import annotations

from typing import Any

from chalicelib.configuration import numbers
from chalicelib.core.context import CallContext
from chalicelib.core.errors import FieldError, InvalidRequest, InvalidState
from chalicelib.policies.models import ENTITY as POLICY_ENTITY
from chalicelib.priceable import checks
from chalicelib.quotes.lifecycle import ERRORS, LIFECYCLE
from chalicelib.quotes.models import ENTITY, RESERVED_POLICY_NUMBER_KIND, Quote
from chalicelib.quotes.records import get_quote, model_of, save
from chalicelib.runtime import wiring

NUMBER_ASSIGNED_EVENT = "policy.quote.policyNumberAssigned"
MAX_NUMBER_LENGTH = numbers.MAX_NUMBER_LENGTH


def set_number(ctx: CallContext, locator: str, quote_number: str) -> Quote:
    """A number chosen by the caller; 409 `quote.number_taken` when another quote has it."""
    _check_number(quote_number, "quoteNumber")
    quote = get_quote(ctx, locator)
    LIFECYCLE.check(quote.quoteState, "be renumbered")
    if quote.quoteNumber == quote_number:
        return quote
    uow = wiring.unit_of_work(ctx)
    numbers.claim_number(ctx, uow, ENTITY, quote_number, quote.locator)
    return _renumbered(ctx, uow, quote, quote_number)


def generate_number(ctx: CallContext, locator: str) -> Quote:
    """The next number of the product's plan, replacing the quote's (409 `quote.no_numbering_plan`)."""
    quote = get_quote(ctx, locator)
    LIFECYCLE.check(quote.quoteState, "be renumbered")
    model = model_of(ctx, quote)
    plan = checks.product(model, quote.productName, ERRORS).get("numberingPlan")
    if not plan:
        raise InvalidState(f"Product {quote.productName} has no numbering plan", code="quote.no_numbering_plan")
    uow = wiring.unit_of_work(ctx)
    number = numbers.reserve_number(ctx, uow, model, plan, ENTITY, quote.locator, product=quote.productName,
                                    region=quote.region)
    return _renumbered(ctx, uow, quote, number)


def set_reserved_policy_number(ctx: CallContext, locator: str, policy_number: str) -> Quote:
    """The number the policy will take on issue. It must not be a policy's number already, nor reserved
    by another quote (409 `quote.policy_number_taken`)."""
    _check_number(policy_number, "reservedPolicyNumber")
    quote = get_quote(ctx, locator)
    LIFECYCLE.check(quote.quoteState, "reserve a policy number")
    if quote.reservedPolicyNumber == policy_number:
        return quote
    if numbers.number_owner(ctx, POLICY_ENTITY, policy_number) is not None \
            or numbers.number_owner(ctx, RESERVED_POLICY_NUMBER_KIND, policy_number) is not None:
        raise InvalidState(f"Policy number {policy_number} is in use or reserved", code="quote.policy_number_taken")
    uow = wiring.unit_of_work(ctx)
    numbers.claim_number(ctx, uow, RESERVED_POLICY_NUMBER_KIND, policy_number, quote.locator)
    if quote.reservedPolicyNumber is not None:
        numbers.release_number(ctx, uow, RESERVED_POLICY_NUMBER_KIND, quote.reservedPolicyNumber)
    return save(ctx, uow, quote.model_copy(update={"reservedPolicyNumber": policy_number}), ["update"],
                 extra_events=[(NUMBER_ASSIGNED_EVENT, {"entityLocator": quote.locator})])


def _renumbered(ctx: CallContext, uow: Any, quote: Quote, number: str) -> Quote:
    if quote.quoteNumber is not None:
        numbers.release_number(ctx, uow, ENTITY, quote.quoteNumber)
    return save(ctx, uow, quote.model_copy(update={"quoteNumber": number}), ["update"])


def assign_number(ctx: CallContext, uow: Any, model: dict[str, Any], quote: Quote) -> None:
    """A number from the product's plan for a quote that has none yet (at creation or validation)."""
    plan = checks.product(model, quote.productName, ERRORS).get("numberingPlan")
    if plan and quote.quoteNumber is None:
        quote.quoteNumber = numbers.reserve_number(ctx, uow, model, plan, ENTITY, quote.locator,
                                                   product=quote.productName, region=quote.region)


def _check_number(number: str, field: str) -> None:
    if not 0 < len(number) <= MAX_NUMBER_LENGTH or not number.isprintable() or number != number.strip():
        raise InvalidRequest("Invalid number", field_errors=[FieldError(
            field, f"must be 1 to {MAX_NUMBER_LENGTH} printable characters without surrounding spaces")])
