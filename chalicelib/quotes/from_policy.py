"""A draft quote's fields copied from a policy segment (POST /policies/{locator}/quote). Pure.

The quote is what creating a quote with these fields gives (service.create_quote): the policy's
account, product, currency, time zone, durationBasis and term, plans, preferences, billing level,
region, jurisdiction, producer code, invoice fee and contacts; the segment's element tree, and its
span as the quote's start and end (the quote prices that segment's coverage again, e.g. to rewrite it
as a new policy). The tree comes as a create request's elements would: every element gets a new
locator and a new static locator (issuing the quote makes a new policy, whose elements have no
history in the old one), and its category from the current configuration.
"""

from __future__ import annotations

from chalicelib.accounts.models import Preferences
from chalicelib.policies.models import (
    IssuedStack,
    Policy,
    Segment,
    TransactionCategory,
    TransactionState,
)
from chalicelib.priceable.models import Element, ElementInput
from chalicelib.quotes.models import QuoteFields


def issuance_segment(stack: IssuedStack) -> Segment | None:
    """The segment the policy's issuance transaction made (None when the stack holds none)."""
    for transaction in stack.transactions:
        if (
            transaction.transactionCategory == TransactionCategory.ISSUANCE
            and transaction.transactionState == TransactionState.ISSUED
            and transaction.segments
        ):
            return stack.segments.get(transaction.segments[0].locator)
    return None


def quote_fields(policy: Policy, segment: Segment, *, include_static: bool) -> QuoteFields:
    """The create request a quote copying `segment` of `policy` amounts to; policy-level static data only
    with `include_static`."""
    root = segment.element
    return QuoteFields(
        productName=policy.productName,
        accountLocator=policy.accountLocator,
        startTime=segment.startTime,
        endTime=segment.endTime,
        currency=policy.currency,
        timezone=policy.timezone,
        durationBasis=policy.durationBasis,
        termDuration=int(policy.termDuration) if policy.termDuration else None,
        data=root.data,
        coverageTerms=root.coverageTerms,
        elements=[_as_input(child) for child in root.elements],
        preferences=Preferences.model_validate(policy.preferences) if policy.preferences else None,
        delinquencyPlanName=policy.delinquencyPlanName,
        autoRenewalPlanName=policy.autoRenewalPlanName,
        billingLevel=policy.billingLevel,
        invoiceFeeAmount=policy.invoiceFeeAmount,
        producerCode=policy.producerCode,
        region=policy.region,
        jurisdiction=policy.jurisdiction,
        contacts=policy.contacts,
        static=dict(policy.static) if include_static else {},
    )


def _as_input(element: Element) -> ElementInput:
    """The element and its children as a create request names them (no locators: new ones are made)."""
    return ElementInput(
        type=element.type,
        data=element.data,
        coverageTerms=element.coverageTerms,
        elements=[_as_input(child) for child in element.elements],
    )
