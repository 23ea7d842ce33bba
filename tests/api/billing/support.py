"""Helpers of the billing API tests: the quotes test configuration (tests/support/configs.py) with
installment plans, an invoice numbering plan and a payment type; a PersonalAuto policy issued for a year
from 2026-02-01 (midnight in New York): premium 100 a month for one vehicle (1,200.00) plus a tax of
25. The clock stands at 2026-01-15T09:30Z."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from tests.api.quotes.support import new_account
from tests.api.transactions.support import issued_policy
from tests.support.api import call, ok
from tests.support.configs import quotes_model, quotes_tenant


def billing_model(default_plan: str = "Monthly") -> dict[str, Any]:
    model = quotes_model()
    model["defaultInstallmentPlan"] = default_plan
    model["installmentPlans"] = {
        "Monthly": {
            "cadence": "monthly",
            "anchorMode": "termStartDay",
            "generateLeadDays": 10,
            "dueLeadDays": 0,
            "maxInstallmentsPerTerm": 12,
        },
        "Quarterly": {"cadence": "quarterly", "installmentWeights": [3, 2], "generateLeadDays": 10, "dueLeadDays": 0},
        "FullPay": {"cadence": "fullPay", "generateLeadDays": 30, "dueLeadDays": 0},
    }
    model["numberingPlans"]["InvoiceNumbers"] = {
        "format": "\\I\\N\\V-######",
        "initialCoreNumber": "1",
        "copyFromQuote": False,
    }
    model["accounts"]["PersonAccount"]["invoiceNumberingPlan"] = "InvoiceNumbers"
    model["payments"] = {"Check": {}, "Card": {}}
    model["delinquencyPlans"] = {
        "Lenient": {"gracePeriodDays": 30, "events": {"Reminder": {"offsetBasis": "gracePeriodEnd", "offsetDays": -5}}}
    }  # a policy's own choice: no default
    model["disbursements"] = {"Refund": {"data": {}}}
    return model


def billing_tenant(api: Any, token: str, default_plan: str = "Monthly", *, test_clock: bool = False) -> str:
    return quotes_tenant(api, token, billing_model(default_plan), test_clock=test_clock)


def billed_policy(api: Any, token: str, tenant: str, jobs: Any, **fields: Any) -> tuple[str, dict[str, Any]]:
    """A new account and a policy issued on it, its billing jobs run: (account locator, policy)."""
    account = new_account(api, token, tenant)
    policy = issued_policy(api, token, tenant, account, **fields)
    jobs.drain()
    return account, policy


def billing(tenant: str, suffix: str) -> str:
    return f"/billing/{tenant}{suffix}"


def new_payment(
    api: Any,
    token: str,
    tenant: str,
    account: str,
    payment_type: str,
    amount: Decimal = Decimal("10.00"),
    targets: list[dict[str, Any]] | None = None,
) -> Any:
    """`POST .../payments`, drafted to the account (or to `targets`; `[]` lets the payment find its invoices): the
    response, whatever it is."""
    return call(
        api,
        "POST",
        billing(tenant, "/payments"),
        token,
        {
            "accountLocator": account,
            "type": payment_type,
            "amount": amount,
            "data": {},
            "targets": [{"containerType": "account", "containerLocator": account}] if targets is None else targets,
        },
    )


def posted_payment(
    api: Any,
    token: str,
    tenant: str,
    account: str,
    amount: Decimal | int,
    *,
    invoice: str | None = None,
    payment_type: str = "Check",
    targets: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A payment created and posted: to `invoice` when one is named, else to `targets` (as `new_payment`)."""
    if invoice is not None:
        targets = [{"containerType": "invoice", "containerLocator": invoice}]
    payment: dict[str, Any] = ok(new_payment(api, token, tenant, account, payment_type, Decimal(amount), targets))
    ok(call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/post"), token))
    return payment


def executed_distribution(
    api: Any, token: str, tenant: str, account: str, amount: Decimal | int, *, invoice: str
) -> dict[str, Any]:
    """A credit distribution of `amount` from the account's credit balance to `invoice`, created and executed."""
    path = billing(tenant, "/creditDistributions")
    body = {
        "accountLocator": account,
        "amount": amount,
        "targets": [{"containerType": "invoice", "containerLocator": invoice}],
    }
    distribution: dict[str, Any] = ok(call(api, "POST", path, token, body))
    ok(call(api, "PATCH", f"{path}/{distribution['locator']}/execute", token))
    return distribution


def invoices_of_account(api: Any, token: str, tenant: str, account: str, *, zero: bool = False) -> list[dict[str, Any]]:
    query = "?includeZeroAmountInvoices=true&count=100" if zero else "?count=100"
    return ok(call(api, "GET", billing(tenant, f"/invoices/accounts/{account}/list{query}"), token))["items"]


def amounts(items: list[dict[str, Any]], field: str = "totalAmount") -> list[Decimal]:
    return [Decimal(str(item[field])) for item in items]
