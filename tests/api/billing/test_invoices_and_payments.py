"""Installments, invoices, payments and the credit balance through the API (the policy of support.py:
premium 1,200.00 and tax 25.00 for a year from 2026-02-01; the clock at 2026-01-15T09:30Z)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.api.billing.support import (
    amounts,
    billed_policy,
    billing,
    billing_tenant,
    invoices_of_account,
    posted_payment,
)
from tests.api.transactions.support import (
    create,
    issued_change,
    issued_policy,
    issued_transaction,
    modify,
    params,
    segment_of_policy,
    step,
    vehicle_of,
)
from tests.support.api import assert_error, call, event_types, ok

FIRST_DUE = "2026-02-01T05:00:00.000Z"


@pytest.fixture
def full_pay(api, admin_token):
    """A tenant whose default plan bills the whole term on one invoice generated 30 days ahead: at issue."""
    return billing_tenant(api, admin_token, "FullPay")


def installments_of(api, token, tenant, policy):
    return ok(call(api, "GET", billing(tenant, f"/installments/policies/{policy['locator']}/list?count=100"), token))[
        "items"
    ]


def test_a_monthly_plan_spreads_each_charge_over_twelve_installments_to_the_cent(api, admin_token, jobs):
    tenant = billing_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)

    installments = installments_of(api, admin_token, tenant, policy)
    assert [i["installmentFrameIndex"] for i in installments] == list(range(12))
    assert installments[0]["installmentStartTime"] == FIRST_DUE
    assert installments[0]["dueTime"] == FIRST_DUE
    assert installments[0]["generateTime"] == "2026-01-22T05:00:00.000Z"
    assert installments[-1]["installmentEndTime"] == "2027-02-01T05:00:00.000Z"
    by_type: dict[str, Decimal] = {}
    for installment in installments:
        for item in installment["installmentItems"]:
            by_type[item["chargeType"]] = by_type.get(item["chargeType"], Decimal(0)) + Decimal(str(item["amount"]))
    assert by_type == {"premium": Decimal("1200.00"), "tax": Decimal("25.00")}
    # a months-basis policy: every month is one twelfth, February (28 days) as much as March (31 days, one
    # hour short for summer time); the tax's 25.00 / 12 = 2.0833 rounds to 2.08, 2.12 left for the last
    assert [
        {item["chargeType"]: Decimal(str(item["amount"])) for item in i["installmentItems"]} for i in installments
    ] == [{"premium": Decimal("100.00"), "tax": Decimal("2.08")}] * 11 + [
        {"premium": Decimal("100.00"), "tax": Decimal("2.12")}
    ]
    assert invoices_of_account(api, admin_token, tenant, account, zero=True) == []  # first generated 2026-01-22

    lattices = ok(
        call(api, "GET", billing(tenant, f"/installmentLattices/policies/{policy['locator']}/list"), admin_token)
    )["items"]
    assert len(lattices) == 1 and len(lattices[0]["frames"]) == 12
    assert [Decimal(str(f["normalizedWeight"])) for f in lattices[0]["frames"]] == [Decimal("0.083333")] * 12
    fetched = ok(call(api, "GET", billing(tenant, f"/installments/{installments[3]['locator']}"), admin_token))
    assert fetched == installments[3]


def test_an_invoice_due_at_issue_is_generated_numbered_and_paid(api, admin_token, jobs, full_pay):
    tenant = full_pay
    account, policy = billed_policy(api, admin_token, tenant, jobs)

    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    assert invoice["invoiceState"] == "open"
    assert invoice["invoiceNumber"] == "INV-000001"
    assert invoice["totalAmount"] == Decimal("1225.00") and invoice["totalRemainingAmount"] == Decimal("1225.00")
    assert invoice["dueTime"] == FIRST_DUE
    full = ok(call(api, "GET", billing(tenant, f"/invoices/{invoice['locator']}"), admin_token))
    assert sorted((i["chargeType"], i["amount"]) for i in full["invoiceItems"]) == [
        ("premium", Decimal("1200.00")),
        ("tax", Decimal("25.00")),
    ]
    assert [
        i["locator"]
        for i in ok(call(api, "GET", billing(tenant, f"/invoices/policies/{policy['locator']}/list"), admin_token))[
            "items"
        ]
    ] == [invoice["locator"]]
    details = ok(call(api, "GET", billing(tenant, f"/invoices/{invoice['locator']}/details"), admin_token))
    [summary] = details["invoiceSummaries"]
    assert details["invoiceLocator"] == invoice["locator"] and details["totalAmount"] == Decimal("1225.00")
    assert sorted(
        (i["chargeType"], [part["amount"] for part in i["installmentItemSummaries"]])
        for i in summary["invoiceItemSummaries"]
    ) == [("premium", [Decimal("1200.00")]), ("tax", [Decimal("25.00")])]
    by_number = ok(call(api, "GET", billing(tenant, "/invoices/numbers/INV-000001"), admin_token))
    assert [i["locator"] for i in by_number] == [invoice["locator"]]

    created = call(
        api,
        "POST",
        billing(tenant, "/payments"),
        admin_token,
        {
            "accountLocator": account,
            "type": "check",
            "amount": 1225,
            "data": {"checkNumber": "1001"},
            "targets": [{"containerType": "invoice", "containerLocator": invoice["locator"]}],
        },
    )
    payment = ok(created)
    assert payment["paymentState"] == "draft" and payment["type"] == "Check"
    assert event_types(api, admin_token, tenant, created) == ["billing.payment.create"]
    ok(call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/validate"), admin_token))
    posted = call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/post"), admin_token)
    assert ok(posted)["paymentState"] == "posted"
    assert event_types(api, admin_token, tenant, posted) == ["billing.invoice.settle", "billing.payment.post"]

    settled = ok(call(api, "GET", billing(tenant, f"/invoices/{invoice['locator']}"), admin_token))
    assert settled["invoiceState"] == "settled" and settled["totalRemainingAmount"] == 0
    assert settled["settledTime"] == "2026-01-15T09:30:00.000Z"
    paid_by = ok(call(api, "GET", billing(tenant, f"/invoices/{invoice['locator']}/payments/list"), admin_token))
    assert [p["locator"] for p in paid_by["items"]] == [payment["locator"]]
    paid = ok(call(api, "GET", billing(tenant, f"/payments/{payment['locator']}/invoices/list"), admin_token))
    assert [i["locator"] for i in paid["items"]] == [invoice["locator"]]
    credits = ok(call(api, "GET", billing(tenant, f"/invoices/{invoice['locator']}/credits/list"), admin_token))
    assert [(c["creditType"], c["amount"]) for c in credits["items"]] == [("payment", Decimal("1225.00"))]


def test_an_overpayment_goes_to_the_credit_balance_and_a_reversal_takes_it_all_back(api, admin_token, jobs, full_pay):
    tenant = full_pay
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    payment = posted_payment(api, admin_token, tenant, account, Decimal("1300.00"), payment_type="Card")

    balance = ok(
        call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), admin_token)
    )
    assert balance["balance"] == Decimal("75.00") and balance["currency"] == "USD"
    assert [(line["accountingType"], line["amount"]) for line in balance["lineItems"]] == [("credit", Decimal("75.00"))]

    reversed_ = call(
        api,
        "PATCH",
        billing(tenant, f"/payments/{payment['locator']}/reverse"),
        admin_token,
        {"reversalType": "bounced"},
    )
    assert ok(reversed_)["paymentState"] == "reversed"
    assert event_types(api, admin_token, tenant, reversed_) == ["billing.invoice.unsettle", "billing.payment.reverse"]
    reopened = ok(call(api, "GET", billing(tenant, f"/invoices/{invoice['locator']}"), admin_token))
    assert reopened["invoiceState"] == "open" and reopened["totalRemainingAmount"] == Decimal("1225.00")
    assert reopened["unsettledTime"] == "2026-01-15T09:30:00.000Z"
    balance = ok(
        call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), admin_token)
    )
    assert balance["balance"] == 0
    assert (
        ok(call(api, "GET", billing(tenant, f"/invoices/{invoice['locator']}/payments/list"), admin_token))["items"]
        == []
    )
    with_reversed = ok(
        call(
            api,
            "GET",
            billing(tenant, f"/invoices/{invoice['locator']}/payments/list?includeReversed=true"),
            admin_token,
        )
    )["items"]
    assert [p["paymentState"] for p in with_reversed] == ["reversed"]
    assert_error(
        call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/reverse"), admin_token),
        409,
        "payment.invalid_state",
    )


def test_a_payment_without_targets_pays_open_invoices_oldest_due_first(api, admin_token, jobs, full_pay):
    tenant = full_pay
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    billed_second = billed_policy(api, admin_token, tenant, jobs)  # another account: never touched
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    payment = posted_payment(api, admin_token, tenant, account, 1000, targets=[])
    partly = ok(call(api, "GET", billing(tenant, f"/invoices/{invoice['locator']}"), admin_token))
    assert partly["invoiceState"] == "open" and partly["totalRemainingAmount"] == Decimal("225.00")
    [other] = invoices_of_account(api, admin_token, tenant, billed_second[0])
    assert other["totalRemainingAmount"] == Decimal("1225.00")
    listed = ok(call(api, "GET", billing(tenant, f"/payments/list?accountLocator={account}"), admin_token))["items"]
    assert [(p["locator"], p["paymentState"]) for p in listed] == [(payment["locator"], "posted")]
    credits = ok(call(api, "GET", billing(tenant, f"/credits/list?accountLocator={account}"), admin_token))["items"]
    assert [(c["locator"], c["creditType"], c["creditState"], c["amount"]) for c in credits] == [
        (payment["locator"], "payment", "posted", Decimal("1000.00"))
    ]


@pytest.mark.parametrize("amount", [-5, 0, Decimal("12.345"), "abc", "NaN", Decimal("1E+40")])
def test_a_payment_with_a_bad_amount_is_refused(api, admin_token, jobs, full_pay, amount):
    account, _ = billed_policy(api, admin_token, full_pay, jobs)
    response = call(
        api,
        "POST",
        billing(full_pay, "/payments"),
        admin_token,
        {"accountLocator": account, "type": "Check", "amount": amount, "data": {}, "targets": []},
    )
    assert response.status_code == 400, response.body
    assert (
        ok(call(api, "GET", billing(full_pay, f"/payments/list?accountLocator={account}"), admin_token))["items"] == []
    )


def test_payments_refuse_unknown_types_foreign_targets_and_a_second_post(api, admin_token, jobs, full_pay):
    tenant = full_pay
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    other_account, _ = billed_policy(api, admin_token, tenant, jobs)
    [foreign] = invoices_of_account(api, admin_token, tenant, other_account)
    body = {"accountLocator": account, "type": "Check", "amount": 10, "data": {}, "targets": []}
    assert_error(
        call(api, "POST", billing(tenant, "/payments"), admin_token, {**body, "type": "Barter"}),
        400,
        "payment.unknown_type",
    )
    assert_error(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            admin_token,
            {**body, "targets": [{"containerType": "invoice", "containerLocator": foreign["locator"]}]},
        ),
        400,
        "payment.invalid_target",
    )
    assert_error(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            admin_token,
            {**body, "targets": [{"containerType": "account", "containerLocator": other_account}]},
        ),
        400,
        "payment.invalid_target",
    )
    assert_error(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            admin_token,
            {
                **body,
                "currency": "EUR",
                "targets": [
                    {
                        "containerType": "invoice",
                        "containerLocator": invoices_of_account(api, admin_token, tenant, account)[0]["locator"],
                    }
                ],
            },
        ),
        400,
        "payment.invalid_currency",
    )
    payment = ok(call(api, "POST", billing(tenant, "/payments"), admin_token, body))
    ok(call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/post"), admin_token))
    assert_error(
        call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/post"), admin_token),
        409,
        "payment.invalid_state",
    )
    assert_error(
        call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/discard"), admin_token),
        409,
        "payment.invalid_state",
    )
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    assert invoice["totalRemainingAmount"] == Decimal("1215.00")  # paid once, not twice


def test_a_payment_is_changed_only_as_a_draft_and_idempotent_on_its_key(api, admin_token, jobs, full_pay):
    tenant = full_pay
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    body = {"accountLocator": account, "type": "Check", "amount": 10, "data": {"a": 1}, "targets": []}
    first = call(api, "POST", billing(tenant, "/payments"), admin_token, body, headers={"X-Idempotency-Key": "p-1"})
    again = call(api, "POST", billing(tenant, "/payments"), admin_token, body, headers={"X-Idempotency-Key": "p-1"})
    assert ok(first)["locator"] == ok(again)["locator"]
    locator = ok(first)["locator"]
    changed = ok(
        call(
            api,
            "PATCH",
            billing(tenant, f"/payments/{locator}"),
            admin_token,
            {"amount": Decimal("12.50"), "setData": {"b": 2}, "removeData": {"a": None}},
        )
    )
    assert changed["amount"] == Decimal("12.50") and changed["data"] == {"b": 2}
    ok(call(api, "PATCH", billing(tenant, f"/payments/{locator}/validate"), admin_token))
    assert_error(
        call(api, "PATCH", billing(tenant, f"/payments/{locator}"), admin_token, {"amount": 5}),
        409,
        "payment.invalid_state",
    )
    assert ok(call(api, "PATCH", billing(tenant, f"/payments/{locator}/reset"), admin_token))["paymentState"] == "draft"
    assert (
        ok(call(api, "PATCH", billing(tenant, f"/payments/{locator}/discard"), admin_token))["paymentState"]
        == "discarded"
    )
    assert ok(call(api, "GET", billing(tenant, f"/payments/{locator}"), admin_token))["paymentState"] == "discarded"


def test_an_invoice_with_money_left_is_not_settled_forced_or_not(api, admin_token, jobs, full_pay):
    """Settle is for invoices of zero or negative total (spec): a positive remainder is a payment's or a
    write-off's to settle, never marked settled with money owed."""
    account, _ = billed_policy(api, admin_token, full_pay, jobs)
    [invoice] = invoices_of_account(api, admin_token, full_pay, account)
    posted_payment(api, admin_token, full_pay, account, Decimal("1224.00"), invoice=invoice["locator"])
    path = billing(full_pay, f"/invoices/{invoice['locator']}/settle")
    for query in ("", "?forced=true", "?forced=false"):
        refused = call(api, "POST", path + query, admin_token)
        body = assert_error(refused, 409, "invoice.amount_remaining")
        assert body["message"] == (
            f"Invoice {invoice['locator']} has 1.00 USD remaining: only an invoice of zero or negative total is "
            f"settled; pay it, or write the remainder off (PATCH /invoices/{invoice['locator']}/writeOff)"
        )
        assert event_types(api, admin_token, full_pay, refused) == []
    found = ok(call(api, "GET", billing(full_pay, f"/invoices/{invoice['locator']}"), admin_token))
    assert (found["invoiceState"], found["totalRemainingAmount"]) == ("open", Decimal("1.00"))
    assert "settledTime" not in found

    written = ok(call(api, "PATCH", billing(full_pay, f"/invoices/{invoice['locator']}/writeOff"), admin_token))
    assert written["amount"] == Decimal("1.00")
    assert (
        ok(call(api, "GET", billing(full_pay, f"/invoices/{invoice['locator']}"), admin_token))["invoiceState"]
        == "settled"
    )
    assert_error(call(api, "POST", path + "?forced=true", admin_token), 409, "invoice.settled")


def test_a_cancellation_refund_is_a_negative_invoice_settled_into_credit(api, admin_token, jobs):
    """The cancellation effective Aug 1 is billed over its own frame from then: its refund is invoiced at
    that frame's generate time (30 days ahead, Jul 2), due Aug 1, not at once with the term's times."""
    tenant = billing_tenant(api, admin_token, "FullPay", test_clock=True)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    issued_transaction(api, admin_token, tenant, policy["locator"], "cancel", params("2026-08-01T04:00:00.000Z"))
    jobs.drain()
    assert [i["invoiceState"] for i in invoices_of_account(api, admin_token, tenant, account)] == ["open"]
    ok(call(api, "POST", f"/clock/{tenant}/advance", admin_token, {"to": "2026-07-02T04:00:00Z"}))
    jobs.drain()

    invoices = invoices_of_account(api, admin_token, tenant, account)
    assert [i["invoiceState"] for i in invoices] == ["open", "settled"]
    refund = invoices[1]
    assert refund["totalAmount"] < 0 and refund["totalRemainingAmount"] == 0
    assert (refund["generatedTime"], refund["dueTime"]) == ("2026-07-02T04:00:00.000Z", "2026-08-01T04:00:00.000Z")
    balance = ok(
        call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), admin_token)
    )
    assert balance["balance"] == -refund["totalAmount"]
    debits = ok(call(api, "GET", billing(tenant, f"/invoices/{refund['locator']}/debits/list"), admin_token))
    assert [(d["targetType"], d["amount"]) for d in debits["items"]] == [("account", -refund["totalAmount"])]
    # the policy pays exactly for the six months it held: 600.00 of premium and 12.50 of tax
    assert refund["totalAmount"] == Decimal("-612.50")
    assert sum(amounts(invoices)) == Decimal("612.50")


def test_unknown_billing_records_answer_404(api, admin_token, full_pay):
    unknown = "01J00000000000000000000000"
    for path, code in [
        (f"/invoices/{unknown}", "invoice.not_found"),
        (f"/payments/{unknown}", "payment.not_found"),
        (f"/installments/{unknown}", "installment.not_found"),
        (f"/installmentLattices/{unknown}", "installmentLattice.not_found"),
    ]:
        assert_error(call(api, "GET", billing(full_pay, path), admin_token), 404, code)


def test_previews_show_the_invoices_a_quote_a_transaction_and_bare_charges_would_make(api, admin_token, jobs):
    import json
    from urllib.parse import quote as escape

    from tests.api.quotes.support import auto, new_account, quotes

    tenant = billing_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    quote = ok(call(api, "POST", quotes(tenant), admin_token, auto(account)))
    ok(call(api, "PATCH", quotes(tenant, f"/{quote['locator']}/price"), admin_token))
    previews = ok(
        call(api, "GET", billing(tenant, f"/invoices/quotes/{quote['locator']}/previewInvoices"), admin_token)
    )
    # as the policy would be billed: a twelfth of 1,200.00 and of 25.00 a month (2.12 of tax in the last)
    assert amounts(previews) == [Decimal("102.08")] * 11 + [Decimal("102.12")]
    assert previews[0]["dueTime"] == FIRST_DUE and previews[0]["generateTime"] == "2026-01-22T05:00:00.000Z"
    two = ok(
        call(api, "GET", billing(tenant, f"/invoices/quotes/{quote['locator']}/previewInvoices?count=2"), admin_token)
    )
    assert two == previews[:2]
    assert invoices_of_account(api, admin_token, tenant, account, zero=True) == []  # nothing stored

    _, policy = billed_policy(api, admin_token, tenant, jobs)
    change = ok(create(api, admin_token, tenant, policy["locator"], "change", [params("2026-08-01T04:00:00.000Z")]))
    ok(step(api, admin_token, tenant, change["locator"], "price"))
    changed = ok(
        call(
            api,
            "GET",
            billing(
                tenant, f"/invoices/transactions/{change['locator']}/previewInvoices?includeZeroAmountInvoices=true"
            ),
            admin_token,
        )
    )
    assert [p["dueTime"][:7] for p in changed] == ["2026-08", "2026-09", "2026-10", "2026-11", "2026-12", "2027-01"]
    # the premium's reversal and new charge cancel out (100.00 a month each); the new segment's tax, 25.00 a
    # sixth a month (4.17, the last 4.15), less the half of the old one reversed, 12.50 a sixth a month (2.08,
    # the last 2.10)
    assert amounts(changed) == [Decimal("2.09")] * 5 + [Decimal("2.05")]

    request = {
        "accountLocator": account,
        "productName": "PersonalAuto",
        "termStartTime": "2026-02-01T05:00:00Z",
        "termEndTime": "2027-02-01T05:00:00Z",
        "installmentPreferences": {"installmentWeights": [], "cadence": "quarterly"},
        "charges": [{"chargeType": "premium", "amount": "1000.00"}],
    }
    stateless = ok(
        call(
            api,
            "GET",
            billing(tenant, f"/invoices/quotes/statelessPreview?quotePreviewRequest={escape(json.dumps(request))}"),
            admin_token,
        )
    )
    # the product's durationBasis (months): every quarter is three months, though the first has 89 days
    assert amounts(stateless) == [Decimal("250.00")] * 4
    assert {item["chargeCategory"] for p in stateless for item in p["invoiceItems"]} == {"premium"}
    by_days = {**request, "durationBasis": "days"}  # 89, 92, 92 and 92 of 365 days
    assert amounts(
        ok(
            call(
                api,
                "GET",
                billing(tenant, f"/invoices/quotes/statelessPreview?quotePreviewRequest={escape(json.dumps(by_days))}"),
                admin_token,
            )
        )
    ) == [Decimal("243.84"), Decimal("252.05"), Decimal("252.05"), Decimal("252.06")]
    bad = {**request, "productName": "Nothing"}
    assert_error(
        call(
            api,
            "GET",
            billing(tenant, f"/invoices/quotes/statelessPreview?quotePreviewRequest={escape(json.dumps(bad))}"),
            admin_token,
        ),
        400,
        "quote.invalid_reference",
    )


def test_installment_jobs_are_listed_per_transaction_and_quote_and_failed_ones_retried(api, admin_token, jobs):
    from chalicelib.runtime import wiring
    from chalicelib.runtime.job_types import JobType
    from chalicelib.runtime.jobs import enqueue
    from tests.builders import system_ctx

    tenant = billing_tenant(api, admin_token)
    _, policy = billed_policy(api, admin_token, tenant, jobs)
    [job] = ok(
        call(
            api,
            "GET",
            billing(tenant, f"/jobs/installments/transactions/{policy['issuedTransactionLocator']}/list"),
            admin_token,
        )
    )["items"]
    assert (job["jobStatus"], job["jobType"], job["referenceType"]) == ("finished", "createOrUpdate", "transaction")
    assert job["referenceLocator"] == policy["issuedTransactionLocator"]
    assert len(job["installmentLocators"].split(",")) == 12
    quote = installments_of(api, admin_token, tenant, policy)[0]["quoteLocator"]
    by_quote = ok(call(api, "GET", billing(tenant, f"/jobs/installments/quotes/{quote}/list"), admin_token))["items"]
    assert by_quote == [job]

    unknown = "01J00000000000000000000000"
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    enqueue(
        uow,
        JobType.BILLING_INSTALLMENTS,
        {"transactionLocator": unknown, "policyLocator": policy["locator"], "jobLocator": "01J00000000000000000000001"},
        locator="01J00000000000000000000001",
    )
    uow.commit()
    jobs.drain()
    [failed] = ok(call(api, "GET", billing(tenant, f"/jobs/installments/transactions/{unknown}/list"), admin_token))[
        "items"
    ]
    assert failed["jobStatus"] == "failed" and failed["processingErrors"].startswith("transaction.not_found")
    retried = ok(
        call(api, "POST", billing(tenant, f"/retryJobs/{policy['locator']}/retryFailedTransactions"), admin_token)
    )["items"]
    assert [(j["locator"], j["jobStatus"]) for j in retried] == [(failed["locator"], "queued")]
    assert jobs.drain() == 1  # runs, fails again
    assert (
        ok(call(api, "POST", billing(tenant, f"/retryJobs/{policy['locator']}/retryFailedTransactions"), admin_token))[
            "items"
        ][0]["jobStatus"]
        == "queued"
    )


def test_early_invoicing_invoices_named_installments_now_once(api, admin_token, jobs):
    tenant = billing_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    installments = installments_of(api, admin_token, tenant, policy)
    body = {
        "ignoreHolds": False,
        "installmentLocators": [installments[0]["locator"], installments[1]["locator"]],
        "invoiceDueTime": "2026-01-20T05:00:00Z",
    }
    first = call(
        api,
        "POST",
        billing(tenant, "/invoices/earlyInvoicing"),
        admin_token,
        body,
        headers={"X-Idempotency-Key": "early-1"},
    )
    again = call(
        api,
        "POST",
        billing(tenant, "/invoices/earlyInvoicing"),
        admin_token,
        body,
        headers={"X-Idempotency-Key": "early-1"},
    )
    answer = ok(first)
    assert answer["candidateInstallmentsCount"] == 2 and ok(again) == answer
    assert jobs.drain() == 1

    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    assert invoice["dueTime"] == "2026-01-20T05:00:00.000Z"
    assert invoice["totalAmount"] == sum(
        Decimal(str(item["amount"])) for i in installments[:2] for item in i["installmentItems"]
    )
    job = ok(call(api, "GET", billing(tenant, f"/jobs/invoicing/{answer['jobLocator']}"), admin_token))
    assert (job["jobStatus"], job["invoiceLocators"]) == ("finished", [invoice["locator"]])
    assert job["invoicingData"]["installmentsToBeInvoiced"] == body["installmentLocators"]
    listed = ok(call(api, "GET", billing(tenant, f"/jobs/invoicing/accounts/{account}/list"), admin_token))["items"]
    assert [j["locator"] for j in listed] == [answer["jobLocator"]]
    assert_error(
        call(api, "POST", billing(tenant, "/invoices/earlyInvoicing"), admin_token, body),
        400,
        "installment.not_invoiceable",
    )

    through = ok(
        call(
            api,
            "POST",
            billing(tenant, "/invoices/earlyInvoicing"),
            admin_token,
            {
                "ignoreHolds": False,
                "installmentLocators": [],
                "accountLocator": account,
                "invoiceThroughTime": "2026-05-01T04:00:00Z",
            },
        )
    )
    assert through["candidateInstallmentsCount"] == 1  # April's; Feb and March are invoiced
    jobs.drain()
    assert len(invoices_of_account(api, admin_token, tenant, account)) == 2


def test_generation_runs_and_an_invoices_lifecycle_are_readable(api, admin_token, jobs, full_pay):
    account, _ = billed_policy(api, admin_token, full_pay, jobs)
    [invoice] = invoices_of_account(api, admin_token, full_pay, account)
    [run] = ok(call(api, "GET", billing(full_pay, f"/jobs/invoices/accounts/{account}/list"), admin_token))["items"]
    assert run["jobStatus"] == "finished" and run["generateTime"] == "2026-01-15T09:30:00.000Z"
    assert [i["invoiceLocator"] for i in run["invoiceGenerationInstances"]] == [invoice["locator"]]
    lifecycle = ok(call(api, "GET", billing(full_pay, f"/jobs/invoicesLifecycle/{invoice['locator']}"), admin_token))
    # FullPay sets no autopayLeadDays: no autopay until an update asks for one
    assert lifecycle["contextData"]["triggers"] == [{"triggerTime": FIRST_DUE, "triggerType": "due"}]
    ok(
        call(
            api,
            "PATCH",
            billing(full_pay, f"/invoices/{invoice['locator']}"),
            admin_token,
            {"autopayTime": "2026-01-30T05:00:00Z", "suppressAutopay": False},
        )
    )
    lifecycle = ok(call(api, "GET", billing(full_pay, f"/jobs/invoicesLifecycle/{invoice['locator']}"), admin_token))
    assert lifecycle["contextData"]["triggers"] == [
        {"triggerTime": "2026-01-30T05:00:00.000Z", "triggerType": "autopay"},
        {"triggerTime": FIRST_DUE, "triggerType": "due"},
    ]
    ok(
        call(
            api,
            "PATCH",
            billing(full_pay, f"/invoices/{invoice['locator']}"),
            admin_token,
            {"autopayTime": "2026-01-30T05:00:00Z", "suppressAutopay": True},
        )
    )
    lifecycle = ok(call(api, "GET", billing(full_pay, f"/jobs/invoicesLifecycle/{invoice['locator']}"), admin_token))
    assert lifecycle["contextData"]["triggers"] == [{"triggerTime": FIRST_DUE, "triggerType": "due"}]
    updated = ok(call(api, "GET", billing(full_pay, f"/invoices/{invoice['locator']}"), admin_token))
    assert updated["autopayTime"] == "2026-01-30T05:00:00.000Z"


def test_policies_billed_at_account_level_share_invoices_and_one_at_policy_level_has_its_own(api, admin_token, jobs):
    from tests.api.quotes.support import new_account

    tenant = billing_tenant(api, admin_token, "FullPay", test_clock=True)
    account = new_account(api, admin_token, tenant)
    first = issued_policy(api, admin_token, tenant, account, startTime="2026-03-01T05:00:00Z")
    second = issued_policy(api, admin_token, tenant, account, startTime="2026-03-01T05:00:00Z")
    alone = issued_policy(api, admin_token, tenant, account, startTime="2026-03-01T05:00:00Z", billingLevel="policy")
    jobs.drain()
    assert invoices_of_account(api, admin_token, tenant, account) == []  # generated 30 days ahead: 2026-01-30
    ok(call(api, "POST", f"/clock/{tenant}/advance", admin_token, {"to": "2026-02-01T00:00:00Z"}))
    jobs.drain()

    invoices = invoices_of_account(api, admin_token, tenant, account)
    assert sorted(amounts(invoices)) == [Decimal("1225.00"), Decimal("2450.00")]
    shared = next(i for i in invoices if i["totalAmount"] == Decimal("2450.00"))
    own = next(i for i in invoices if i["totalAmount"] == Decimal("1225.00"))
    for policy, expected in ((first, shared), (second, shared), (alone, own)):
        listed = ok(call(api, "GET", billing(tenant, f"/invoices/policies/{policy['locator']}/list"), admin_token))[
            "items"
        ]
        assert [i["locator"] for i in listed] == [expected["locator"]]
    items = ok(call(api, "GET", billing(tenant, f"/invoices/{shared['locator']}"), admin_token))["invoiceItems"]
    assert sorted(i["policyLocator"] for i in items) == sorted([first["locator"]] * 2 + [second["locator"]] * 2)


def test_a_reversal_bills_exactly_what_it_takes_back(api, admin_token, jobs):
    """The change effective Aug 1 is invoiced at its frame's generate time (Jul 2); its reversal, billed
    after that, at once."""
    tenant = billing_tenant(api, admin_token, "FullPay", test_clock=True)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    vehicle = vehicle_of(segment_of_policy(api, admin_token, tenant, policy))["staticLocator"]
    change = issued_change(
        api, admin_token, tenant, policy["locator"], "2026-08-01T04:00:00.000Z", modify(vehicle, value="25000")
    )
    jobs.drain()
    assert sum(amounts(invoices_of_account(api, admin_token, tenant, account, zero=True))) == Decimal("1225.00")
    ok(call(api, "POST", f"/clock/{tenant}/advance", admin_token, {"to": "2026-07-02T04:00:00Z"}))
    jobs.drain()
    after_change = sum(amounts(invoices_of_account(api, admin_token, tenant, account, zero=True)))
    assert after_change == Decimal("1225.00") + Decimal("300.00") + Decimal("25.00") - Decimal("12.50")

    reversal = ok(
        call(
            api,
            "PATCH",
            f"/policy/{tenant}/policies/{policy['locator']}/reversal",
            admin_token,
            {
                "baseLocator": change["locator"],
                "toTransaction": policy["issuedTransactionLocator"],
                "reverseTransactions": [change["locator"]],
            },
        )
    )
    ok(step(api, admin_token, tenant, reversal["locator"], "issue"))
    jobs.drain()
    assert sum(amounts(invoices_of_account(api, admin_token, tenant, account, zero=True))) == Decimal("1225.00")


@pytest.mark.parametrize("handling, expected", [("max", "7.50"), ("min", "5.00"), ("sum", "12.50"), ("waive", "0")])
def test_an_invoice_carries_one_fee_for_its_policies_as_the_plan_combines_them(
    api, admin_token, jobs, handling, expected
):
    from tests.api.billing.support import billing_model
    from tests.api.quotes.support import new_account
    from tests.support.configs import quotes_tenant

    model = billing_model("FullPay")
    model["invoicingPlans"] = {
        "Fees": {
            "invoiceFeeHandling": handling,
            "invoiceFeeAmounts": {"USD": 5},
            "consolidateInvoicesOnCancellation": "none",
        }
    }
    model["defaultInvoicingPlan"] = "Fees"
    tenant = quotes_tenant(api, admin_token, model, test_clock=True)
    account = new_account(api, admin_token, tenant)
    issued_policy(api, admin_token, tenant, account, startTime="2026-03-01T05:00:00Z")
    issued_policy(api, admin_token, tenant, account, startTime="2026-03-01T05:00:00Z", invoiceFeeAmount="7.50")
    jobs.drain()
    ok(call(api, "POST", f"/clock/{tenant}/advance", admin_token, {"to": "2026-02-01T00:00:00Z"}))
    jobs.drain()

    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    items = ok(call(api, "GET", billing(tenant, f"/invoices/{invoice['locator']}"), admin_token))["invoiceItems"]
    fee_items = [i["amount"] for i in items if i["chargeType"] == "invoiceFee"]
    assert fee_items == ([] if handling == "waive" else [Decimal(expected)])
    assert invoice["totalAmount"] == Decimal("2450.00") + Decimal(expected)


def test_a_billing_job_that_died_between_its_chunks_writes_each_installment_once_when_run_again_later(
    api, admin_token, jobs, clock, monkeypatch
):
    """A lattice too large for one write goes in chunks, then the lattice: an attempt that died after its first
    chunk, run again later (another `now`), writes the same installments under the same keys, not a second set
    (their locators derive from the transaction's issue time, not from the job's now)."""
    from chalicelib.billing.installments import service
    from chalicelib.runtime.jobs import dispatch
    from chalicelib.storage import keys, query, table, unit_of_work
    from tests.api.quotes.support import new_account

    tenant = billing_tenant(api, admin_token)
    monkeypatch.setattr(unit_of_work, "MAX_TRANSACTION_ITEMS", 20)  # 12 installments x 2 writes do not fit
    written, real_commit = [], service._commit_new

    def dies_after_one_chunk(uow):
        if written:
            raise RuntimeError("the worker died")
        real_commit(uow)
        written.append(uow)

    monkeypatch.setattr(service, "_commit_new", dies_after_one_chunk)
    account = new_account(api, admin_token, tenant)
    policy = issued_policy(api, admin_token, tenant, account)
    with pytest.raises(RuntimeError):
        jobs.drain()
    monkeypatch.setattr(service, "_commit_new", real_commit)
    clock.advance(seconds=90)
    [message] = [m for m in jobs.sent if m.job_type == "billing.installments"]
    assert dispatch(message) == "finished"  # SQS delivers it again

    listed = ok(
        call(api, "GET", billing(tenant, f"/installments/policies/{policy['locator']}/list?count=100"), admin_token)
    )["items"]
    assert len(listed) == 12 and len({i["locator"] for i in listed}) == 12
    assert sum(Decimal(str(item["amount"])) for i in listed for item in i["installmentItems"]) == Decimal("1225.00")
    uninvoiced = [
        item
        for item in query.all_items(
            table.gateway(), keys.tenant_scope(tenant), keys.billing_partition(tenant, account), consistent=True
        )
        if item.get("entity") == "uninvoicedInstallment"
    ]
    assert sorted(item["locator"] for item in uninvoiced) == sorted(i["locator"] for i in listed)
