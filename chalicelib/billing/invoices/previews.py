"""Invoice previews: the invoices a priced quote or transaction, or charges given in the request, would be
billed on if issued now. Nothing is stored: the lattice and installments are made up (installments/
service.py `billed`) and grouped into invoices by the pure generator."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Protocol

from chalicelib.accounts import service as accounts
from chalicelib.accounts.models import InstallmentPreferences
from chalicelib.billing.installments import service as installments
from chalicelib.billing.invoices import generator
from chalicelib.billing.invoices.models import Invoice
from chalicelib.configuration import products
from chalicelib.configuration import service as configuration
from chalicelib.configuration.billing_plans import (
    BillingPlans,
    InstallmentGrouping,
)
from chalicelib.core import codes, money
from chalicelib.core.context import CallContext
from chalicelib.core.errors import FieldError
from chalicelib.priceable.models import Charge
from chalicelib.quotes import service as quotes
from chalicelib.transactions import service as transactions

PREVIEW = "preview"
"""The locator prefix of what a preview makes up (a lattice, installments): none of it is stored."""


def preview_quote(ctx: CallContext, quote_locator: str) -> list[Invoice]:
    """The invoices the priced quote would be billed on if it were issued now."""
    quote = quotes.priced_quote(ctx, quote_locator)
    account = accounts.get_account(ctx, quote.accountLocator)
    end = quote.endTime or quote.startTime
    billing = installments.Billing(
        account=account,
        policy_locator=quote.policyLocator or "",
        transaction_locator="",
        term_locator="",
        quote_locator=quote.locator,
        container=installments.container_for(quote.billingLevel, account, quote.locator),
        term_start=quote.startTime,
        term_end=end,
        effective=quote.startTime,
        currency=quote.currency,
        timezone=quote.timezone,
        duration_basis=quote.durationBasis,
        plan_name=quote.installmentPlanName,
        preferences=quote.preferences.model_dump(exclude_none=True) if quote.preferences else None,
    )
    return _previewed(ctx, configuration.billing_plans(ctx, quote.configVersion), billing, quote.charges or [])


def preview_transaction(ctx: CallContext, transaction_locator: str) -> list[Invoice]:
    """The invoices the priced transaction's charges would add if it were issued now."""
    transaction, parts = transactions.priced_transaction(ctx, transaction_locator)
    billing = installments.of_transaction(ctx, transaction)
    charges = [charge for part in (transaction, *parts) for charge in part.charges]
    return _previewed(ctx, configuration.billing_plans(ctx, transaction.configVersion), billing, charges)


class PreviewCharge(Protocol):
    """A charge of a stateless preview (the request's PreviewChargeRequest, invoices/schemas.py)."""

    @property
    def amount(self) -> Decimal: ...

    @property
    def chargeType(self) -> str: ...

    @property
    def elementLocator(self) -> str | None: ...

    @property
    def elementStaticLocator(self) -> str | None: ...


class StatelessPreview(Protocol):
    """What `preview_stateless` reads of the request: the QuoteBillingPreviewRequest a route parsed
    (invoices/schemas.py)."""

    @property
    def accountLocator(self) -> str: ...

    @property
    def productName(self) -> str: ...

    @property
    def termStartTime(self) -> datetime: ...

    @property
    def termEndTime(self) -> datetime: ...

    @property
    def timezone(self) -> str | None: ...

    @property
    def durationBasis(self) -> str | None: ...

    @property
    def currency(self) -> str | None: ...

    @property
    def installmentPreferences(self) -> InstallmentPreferences | None: ...

    @property
    def charges(self) -> Sequence[PreviewCharge]: ...


def preview_stateless(ctx: CallContext, request: StatelessPreview) -> list[Invoice]:
    """The invoices charges given in the request would be billed on: nothing is read but the account
    and the configuration."""
    account = accounts.get_account(ctx, request.accountLocator)
    billing_plans = configuration.billing_plans(ctx)
    model = configuration.current_model(ctx, resolved=True)[1]
    product = next(
        (
            products.product(model, name)
            for name in (model.get("products") or {})
            if name.lower() == request.productName.lower()
        ),
        None,
    )
    if product is None:
        raise codes.INVALID_REFERENCE["quote"](
            f"No product {request.productName!r} is configured",
            field_errors=[FieldError("productName", "unknown product")],
        )
    if request.termEndTime <= request.termStartTime:
        raise codes.REQUEST_INVALID(
            "The term ends after it starts", field_errors=[FieldError("termEndTime", "must be after termStartTime")]
        )
    currency = (request.currency or model.get("defaultCurrency") or "USD").upper()
    categories = {
        name.lower(): str((body or {}).get("category") or name) for name, body in (model.get("charges") or {}).items()
    }
    charges = []
    for index, given in enumerate(request.charges):
        if not given.amount.is_finite() or money.round_money(given.amount, currency) != given.amount:
            raise codes.REQUEST_INVALID(
                f"A charge's amount has at most {money.minor_units(currency)} decimals",
                field_errors=[FieldError(f"charges[{index}].amount", "not an amount")],
            )
        element = given.elementStaticLocator or given.elementLocator or ""
        charges.append(
            Charge(
                locator=f"{PREVIEW}-{index}",
                elementLocator=given.elementLocator or element,
                elementStaticLocator=element,
                chargeType=given.chargeType,
                chargeCategory=categories.get(given.chargeType.lower(), given.chargeType),
                rate=Decimal(0),
                amount=given.amount,
            )
        )
    preferences = (
        {"installmentPreferences": request.installmentPreferences.model_dump(exclude_none=True)}
        if request.installmentPreferences
        else None
    )
    billing = installments.Billing(
        account=account,
        policy_locator="",
        transaction_locator="",
        term_locator="",
        quote_locator=None,
        container=account.locator,
        term_start=request.termStartTime,
        term_end=request.termEndTime,
        effective=request.termStartTime,
        currency=currency,
        timezone=request.timezone or account.timezone,
        duration_basis=request.durationBasis or product.duration_basis,
        plan_name=None,
        preferences=preferences,
    )
    return _previewed(ctx, billing_plans, billing, charges)


def _previewed(
    ctx: CallContext, billing_plans: BillingPlans, billing: installments.Billing, charges: list[Charge]
) -> list[Invoice]:
    if billing.term_end <= billing.term_start:
        return []
    billed = installments.billed_charges(ctx, billing_plans, billing, charges, f"{PREVIEW}-lattice")
    plan = billing_plans.invoicing_plan(billing.account.invoicingPlanName)
    return generator.generate(
        billed.installments,
        ctx.now,
        ctx.user_locator,
        grouping=plan.installment_grouping if plan else InstallmentGrouping(),
    )
