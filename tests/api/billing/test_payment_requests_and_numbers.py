"""Payment numbers (`payments.<type>.numberingPlan`, `numberingTrigger`), payment requests (request, fail,
cancel) and moving installments' times (PATCH /installments) through the API. The policy of support.py:
premium 1,200.00 and tax 25.00 for a year from 2026-02-01; the clock at 2026-01-15T09:30Z."""

from __future__ import annotations

from decimal import Decimal

from tests.api.billing.support import billed_policy, billing, billing_model, invoices_of_account, new_payment
from tests.jobs.support import DUE_DAYS
from tests.support.api import assert_error, call, event_types, ok
from tests.support.clock import advance
from tests.support.configs import quotes_tenant


def numbered_tenant(api, token, plan="FullPay", *, test_clock=False):
    model = billing_model(plan)
    model["numberingPlans"]["PaymentNumbers"] = {
        "format": "\\P\\A\\Y-####",
        "initialCoreNumber": "1",
        "copyFromQuote": False,
    }
    model["payments"] = {
        "Check": {"numberingPlan": "PaymentNumbers"},
        "Card": {"numberingPlan": "PaymentNumbers", "numberingTrigger": "creation"},
        "Cash": {},
    }
    return quotes_tenant(api, token, model, test_clock=test_clock)


def patch(api, token, tenant, locator, action):
    return call(api, "PATCH", billing(tenant, f"/payments/{locator}/{action}"), token)


def test_payments_are_numbered_at_creation_or_validation_as_their_type_says(api, admin_token, jobs):
    tenant = numbered_tenant(api, admin_token)
    account, _ = billed_policy(api, admin_token, tenant, jobs)

    card = ok(new_payment(api, admin_token, tenant, account, "Card"))
    check = ok(new_payment(api, admin_token, tenant, account, "Check"))
    cash = ok(new_payment(api, admin_token, tenant, account, "Cash"))
    assert (card.get("paymentNumber"), check.get("paymentNumber")) == ("PAY-0001", None)
    validated = ok(patch(api, admin_token, tenant, check["locator"], "validate"))
    assert validated["paymentNumber"] == "PAY-0002"
    assert ok(patch(api, admin_token, tenant, cash["locator"], "validate")).get("paymentNumber") is None
    found = ok(call(api, "GET", billing(tenant, "/payments/numbers/PAY-0002"), admin_token))
    assert [p["locator"] for p in found] == [check["locator"]]

    path = billing(tenant, f"/payments/{check['locator']}/number")
    assert_error(call(api, "POST", f"{path}/set?paymentNumber=PAY-0001", admin_token), 409, "payment.number_taken")
    renumbered = call(api, "POST", f"{path}/set?paymentNumber=CHK-7", admin_token)
    assert ok(renumbered)["paymentNumber"] == "CHK-7"
    assert event_types(api, admin_token, tenant, renumbered) == ["billing.payment.update"]
    assert_error(call(api, "GET", billing(tenant, "/payments/numbers/PAY-0002"), admin_token), 404, "payment.not_found")
    assert ok(call(api, "POST", f"{path}/generate", admin_token))["paymentNumber"] == "PAY-0003"
    assert [p["locator"] for p in ok(call(api, "GET", billing(tenant, "/payments/numbers/PAY-0003"), admin_token))] == [
        check["locator"]
    ]
    assert_error(
        call(api, "POST", billing(tenant, f"/payments/{cash['locator']}/number/generate"), admin_token),
        409,
        "payment.no_numbering_plan",
    )
    assert_error(
        call(api, "POST", billing(tenant, f"/payments/{cash['locator']}/number/set?paymentNumber=%20x"), admin_token),
        400,
        "request.invalid",
    )


def test_a_requested_payment_is_posted_or_fails_when_its_provider_answers(api, admin_token, jobs):
    tenant = numbered_tenant(api, admin_token)
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    target = [{"containerType": "invoice", "containerLocator": invoice["locator"]}]

    paid = ok(new_payment(api, admin_token, tenant, account, "Check", Decimal("1225.00"), target))
    assert_error(patch(api, admin_token, tenant, paid["locator"], "request"), 409, "payment.invalid_state")
    ok(patch(api, admin_token, tenant, paid["locator"], "validate"))
    requested = patch(api, admin_token, tenant, paid["locator"], "request")
    assert ok(requested)["paymentState"] == "requested"
    assert event_types(api, admin_token, tenant, requested) == ["billing.payment.request"]
    assert (
        ok(call(api, "GET", billing(tenant, f"/invoices/{invoice['locator']}"), admin_token))["invoiceState"] == "open"
    )  # nothing moves until the provider answers
    posted = patch(api, admin_token, tenant, paid["locator"], "post")
    assert ok(posted)["paymentState"] == "posted"
    assert event_types(api, admin_token, tenant, posted) == ["billing.invoice.settle", "billing.payment.post"]
    assert_error(patch(api, admin_token, tenant, paid["locator"], "fail"), 409, "payment.invalid_state")

    bounced = ok(new_payment(api, admin_token, tenant, account, "Cash", Decimal("50.00")))
    ok(patch(api, admin_token, tenant, bounced["locator"], "validate"))
    ok(patch(api, admin_token, tenant, bounced["locator"], "request"))
    failed = patch(api, admin_token, tenant, bounced["locator"], "fail")
    assert ok(failed)["paymentState"] == "failed"
    assert event_types(api, admin_token, tenant, failed) == ["billing.payment.fail"]
    assert_error(patch(api, admin_token, tenant, bounced["locator"], "post"), 409, "payment.invalid_state")
    balance = ok(
        call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), admin_token)
    )
    assert balance["balance"] == 0  # a failed payment moved no money

    dropped = ok(new_payment(api, admin_token, tenant, account, "Cash"))
    assert_error(patch(api, admin_token, tenant, dropped["locator"], "cancel"), 409, "payment.invalid_state")
    ok(patch(api, admin_token, tenant, dropped["locator"], "validate"))
    cancelled = patch(api, admin_token, tenant, dropped["locator"], "cancel")
    assert ok(cancelled)["paymentState"] == "cancelled"
    assert event_types(api, admin_token, tenant, cancelled) == ["billing.payment.cancel"]
    states = [
        p["paymentState"]
        for p in ok(call(api, "GET", billing(tenant, f"/payments/list?accountLocator={account}"), admin_token))["items"]
    ]
    assert states == ["posted", "failed", "cancelled"]


def test_moving_an_installments_times_moves_when_it_is_invoiced(api, admin_token, jobs):
    tenant = numbered_tenant(api, admin_token, "Monthly", test_clock=True)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    installments = ok(
        call(api, "GET", billing(tenant, f"/installments/policies/{policy['locator']}/list"), admin_token)
    )["items"]
    march, april = installments[1], installments[2]

    moved = call(
        api,
        "PATCH",
        billing(tenant, "/installments"),
        admin_token,
        {
            "installmentLocators": [march["locator"], april["locator"]],
            "generateTime": "2026-01-20T00:00:00Z",
            "dueTime": "2026-02-15T05:00:00Z",
        },
    )
    answer = ok(moved)
    assert [(i["locator"], i["generateTime"], i["dueTime"]) for i in answer] == [
        (march["locator"], "2026-01-20T00:00:00.000Z", "2026-02-15T05:00:00.000Z"),
        (april["locator"], "2026-01-20T00:00:00.000Z", "2026-02-15T05:00:00.000Z"),
    ]
    assert answer[0]["autopayTime"] == march["autopayTime"]  # not named: unchanged
    assert event_types(api, admin_token, tenant, moved) == ["billing.installment.update"]

    advance(api, admin_token, tenant, jobs, "2026-01-21T00:00:00Z")
    [early] = invoices_of_account(api, admin_token, tenant, account)
    assert (early["generatedTime"], early["dueTime"]) == ("2026-01-20T00:00:00.000Z", "2026-02-15T05:00:00.000Z")
    total = sum(Decimal(str(item["amount"])) for i in (march, april) for item in i["installmentItems"])
    assert early["totalAmount"] == total
    advance(api, admin_token, tenant, jobs, "2026-01-23T00:00:00Z")
    assert [i["dueTime"] for i in invoices_of_account(api, admin_token, tenant, account)] == [
        "2026-02-15T05:00:00.000Z",
        DUE_DAYS[0],
    ]  # February's, generated 2026-01-22 as planned

    body = {"installmentLocators": [march["locator"]], "dueTime": "2026-02-20T05:00:00Z"}
    assert_error(call(api, "PATCH", billing(tenant, "/installments"), admin_token, body), 409, "installment.invoiced")
    body["installmentLocators"] = ["01J00000000000000000000000"]
    assert_error(call(api, "PATCH", billing(tenant, "/installments"), admin_token, body), 404, "installment.not_found")
    assert_error(
        call(
            api,
            "PATCH",
            billing(tenant, "/installments"),
            admin_token,
            {"installmentLocators": [installments[5]["locator"]]},
        ),
        400,
        "request.invalid",
    )
    assert_error(
        call(
            api,
            "PATCH",
            billing(tenant, "/installments"),
            admin_token,
            {"installmentLocators": [], "dueTime": "2026-02-20T05:00:00Z"},
        ),
        400,
        "request.invalid",
    )
