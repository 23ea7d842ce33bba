"""Reconciliation of an account's billing records before it is written: installments naming invoices, invoices
adding up to their installments' items, payments in the invoices' currency settling them as stated, starting
credit balances; a difference fails the account naming the entity (by original id) and both amounts."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from chalicelib.runtime.due_kinds import DueKind
from chalicelib.storage import due_index
from tests.api.migration.support import (
    account_of,
    account_request,
    billed_policy,
    fetch,
    source_installment,
    source_invoice,
    source_payment,
    start,
)
from tests.support.api import assert_error, call, ok
from tests.support.clock import advance
from tests.support.configs import configured_tenant, policy_model


def _messages(failure: dict[str, Any]) -> list[str]:
    return [message for item in failure["errors"]["validationItems"] for message in item["errors"]]


def test_differences_fail_the_account_naming_each_entity_and_both_amounts_and_write_nothing(api, admin_token, jobs):
    tenant = _payments_tenant(api, admin_token)
    policy = billed_policy(
        "SRC-R1-p1",
        [
            source_installment("I1", "INV1", 6),
            source_installment("I2", "INV2", 7),
            source_installment("I3", "INV-GONE", 8),
        ],
        [(1, "72.00"), (2, "70.00"), (4, "2.00")],
    )
    body = {
        **account_request("SRC-R1", policies=[policy]),
        "invoices": [
            source_invoice("INV1", 6, "settled"),
            source_invoice("INV2", 7, "open"),
            source_invoice("INV3", 8, "open"),
        ],
        "payments": [
            source_payment("P1", [("INV1", "71.00")]),
            source_payment("P2", [("INV2", "10.00")], currency="EUR", payment_type="Card"),
            source_payment("P3", [("INV9", "5.00")], payment_type="Card"),
            source_payment("P4", [("INV2", "-1.00")], payment_type="Card"),
        ],
        "accounting": {"originalAccountBalances": {"USD": Decimal("-5.00")}},
    }
    migration = ok(start(api, admin_token, tenant, [body]))["locator"]
    jobs.drain()

    assert fetch(api, admin_token, tenant, migration)["migrationState"] == "failed"
    (failure,) = fetch(api, admin_token, tenant, migration, "/failures/list")["items"]
    assert _messages(failure["policies"]["SRC-R1-p1"]) == [
        "terms[0].transactions[0].installments[2] (I3): its invoice 'INV-GONE' is not among the account's invoices",
        "terms[0].transactions[0]: installment item SRC-R1-p1-item2 names installment 4, the transaction brings 3",
    ]
    assert _messages(failure["invoices"]["INV1"]) == [
        "invoice INV1: stated settled, its installments' items total 72.00, its payments cover 71.00"
    ]
    assert _messages(failure["invoices"]["INV3"]) == ["invoice INV3: no installment of the account names it"]
    assert failure["invoices"]["INV3"]["originalId"] == "INV3"
    assert _messages(failure["payments"]["P2"]) == [
        "payment P2: paymentItems[0]: the payment is in EUR, invoice INV2 in USD"
    ]
    assert _messages(failure["payments"]["P3"]) == [
        "payment P3: paymentItems[0]: invoice 'INV9' is not among the account's invoices"
    ]
    assert _messages(failure["payments"]["P4"]) == ["payment P4: paymentItems[0]: its amount -1.00 is not positive"]
    assert _messages(failure["payments"]["P1"]) == ["paymentType: 'standard' is not a configured payment type"]
    assert _messages(failure["accountError"]) == [
        "accounting.originalAccountBalances.USD: the starting credit balance -5.00 is negative (credit balances are "
        "0 or more)"
    ]
    assert ok(call(api, "GET", f"/policy/{tenant}/accounts/list?count=100", admin_token))["items"] == []


def test_payments_covering_more_than_an_invoice_or_all_of_an_open_one_are_differences(api, admin_token, tenant, jobs):
    policy = billed_policy(
        "SRC-R2-p1",
        [source_installment("I1", "INV1", 6), source_installment("I2", "INV2", 7)],
        [(1, "72.00"), (2, "72.00")],
    )
    body = {
        **account_request("SRC-R2", policies=[policy]),
        "invoices": [source_invoice("INV1", 6, "open"), source_invoice("INV2", 7, "settled")],
        "payments": [
            source_payment("P1", [("INV1", "72.00")]),
            source_payment("P2", [("INV2", "50.00"), ("INV2", "30.00")]),
        ],
    }
    migration = ok(start(api, admin_token, tenant, [body]))["locator"]
    jobs.drain()

    (failure,) = fetch(api, admin_token, tenant, migration, "/failures/list")["items"]
    assert _messages(failure["invoices"]["INV1"]) == [
        "invoice INV1: stated open, its installments' items total 72.00, its payments cover 72.00 (all of it)"
    ]
    assert _messages(failure["invoices"]["INV2"]) == [
        "invoice INV2: its installments' items total 72.00, its payments cover 80.00"
    ]
    assert "policies" not in failure or failure["policies"] == {}


def test_a_charge_no_brought_installment_bills_fails_its_policy(api, admin_token, tenant, jobs):
    policy = billed_policy("SRC-R6-p1", [source_installment("I1", "INV1", 6)], [])
    body = {**account_request("SRC-R6", policies=[policy]), "invoices": [source_invoice("INV1", 6, "open")]}
    migration = ok(start(api, admin_token, tenant, [body]))["locator"]
    jobs.drain()

    (failure,) = fetch(api, admin_token, tenant, migration, "/failures/list")["items"]
    assert _messages(failure["policies"]["SRC-R6-p1"]) == [
        "terms[0].transactions[0].charges[SRC-R6-p1-v1][0]: the transaction brings its installments, but none bills "
        "this charge of 144.00"
    ]


def test_migrated_payments_settle_invoices_as_in_the_source_and_starting_balances_are_credit(api, admin_token, jobs):
    tenant = _payments_tenant(api, admin_token)
    policy = billed_policy(
        "SRC-R3-p1",
        [source_installment("I1", "INV1", 6), source_installment("I2", "INV2", 7)],
        [(1, "72.00"), (2, "72.00")],
    )
    body = {
        **account_request("SRC-R3", policies=[policy]),
        "invoices": [source_invoice("INV1", 6, "settled"), source_invoice("INV2", 7, "open")],
        "payments": [source_payment("P1", [("INV1", "72.00"), ("INV2", "10.00")], payment_type="Card")],
        "accounting": {"originalAccountBalances": {"USD": Decimal("3.50")}},
    }
    migration = ok(start(api, admin_token, tenant, [body]))["locator"]
    jobs.drain()

    assert fetch(api, admin_token, tenant, migration)["migrationState"] == "finished"
    mappings = account_of(api, admin_token, tenant, migration, "SRC-R3")
    account = mappings["accountLocator"]
    invoices = {
        mappings["invoices"][locator]["originalId"]: ok(
            call(api, "GET", f"/billing/{tenant}/invoices/{locator}", admin_token)
        )
        for locator in mappings["invoices"]
    }
    assert {
        original: (invoice["invoiceState"], Decimal(invoice["totalRemainingAmount"]))
        for original, invoice in invoices.items()
    } == {"INV1": ("settled", Decimal(0)), "INV2": ("open", Decimal("62.00"))}
    (payment_locator,) = mappings["payments"]
    assert mappings["payments"][payment_locator]["originalId"] == "P1"
    payment = ok(call(api, "GET", f"/billing/{tenant}/payments/{payment_locator}", admin_token))
    assert (payment["paymentState"], Decimal(payment["amount"])) == ("posted", Decimal("82.00"))
    balance = ok(
        call(
            api,
            "GET",
            f"/billing/{tenant}/accounting/ledgerAccounts/accountCreditBalance/{account}?currency=USD",
            admin_token,
        )
    )
    assert Decimal(balance["balance"]) == Decimal("3.50")

    # an ordinary payment afterwards: reversed, its invoices open again with what it paid
    ok(call(api, "PATCH", f"/billing/{tenant}/payments/{payment_locator}/reverse", admin_token))
    reopened = ok(call(api, "GET", f"/billing/{tenant}/invoices/{invoices['INV1']['locator']}", admin_token))
    assert (reopened["invoiceState"], Decimal(reopened["totalRemainingAmount"])) == ("open", Decimal("72.00"))


def _payments_tenant(api, token):
    model = policy_model()
    model["payments"] = {"Card": {}}
    return configured_tenant(api, token, model)


def test_brought_installments_and_open_invoices_are_billing_records_paid_through_the_payments_api(
    api, admin_token, jobs
):
    tenant = _payments_tenant(api, admin_token)
    policy = billed_policy(
        "SRC-R4-p1",
        [source_installment("I1", "INV1", 6), source_installment("I2", "INV2", 7)],
        [(1, "72.00"), (2, "72.00")],
    )
    body = {
        **account_request("SRC-R4", policies=[policy]),
        "invoices": [source_invoice("INV1", 6, "open"), source_invoice("INV2", 7, "open")],
    }
    migration = ok(start(api, admin_token, tenant, [body]))["locator"]
    jobs.drain()

    assert fetch(api, admin_token, tenant, migration)["migrationState"] == "finished"
    mappings = account_of(api, admin_token, tenant, migration, "SRC-R4")
    account = mappings["accountLocator"]
    assert sorted(mapping["originalId"] for mapping in mappings["invoices"].values()) == ["INV1", "INV2"]
    listed = ok(call(api, "GET", f"/billing/{tenant}/invoices/accounts/{account}/list?count=100", admin_token))["items"]
    # the change (it brings no installments) is billed by billing, on invoices of its own
    by_original = {
        mappings["invoices"][invoice["locator"]]["originalId"]: invoice
        for invoice in listed
        if invoice["locator"] in mappings["invoices"]
    }
    assert set(by_original) == {"INV1", "INV2"}
    first = by_original["INV1"]
    assert (first["invoiceState"], Decimal(first["totalAmount"]), first["dueTime"][:10]) == (
        "open",
        Decimal("72.00"),
        "2025-06-01",
    )
    (policy_locator,) = mappings["policies"]
    transactions = mappings["policies"][policy_locator]["childrenMappings"]["transactions"]
    issuance = next(locator for locator, position in transactions.items() if position == "0.0")
    brought = ok(
        call(api, "GET", f"/billing/{tenant}/installments/transactions/{issuance}/list?count=100", admin_token)
    )["items"]
    assert sorted(
        (i["installmentStartTime"][:10], sum(Decimal(item["amount"]) for item in i["installmentItems"]))
        for i in brought
    ) == [("2025-06-01", Decimal("72.00")), ("2025-07-01", Decimal("72.00"))]
    assert {i["invoiceLocator"] for i in brought} == {by_original["INV1"]["locator"], by_original["INV2"]["locator"]}

    payment = ok(
        call(
            api,
            "POST",
            f"/billing/{tenant}/payments",
            admin_token,
            {
                "accountLocator": account,
                "type": "Card",
                "amount": Decimal("77.00"),
                "data": {"cardHolder": "Ada Lovelace"},
                "targets": [{"containerType": "invoice", "containerLocator": first["locator"]}],
            },
        )
    )
    ok(call(api, "PATCH", f"/billing/{tenant}/payments/{payment['locator']}/post", admin_token))
    paid = ok(call(api, "GET", f"/billing/{tenant}/invoices/{first['locator']}", admin_token))
    assert (paid["invoiceState"], Decimal(paid["totalRemainingAmount"])) == ("settled", Decimal(0))
    balance = ok(
        call(
            api,
            "GET",
            f"/billing/{tenant}/accounting/ledgerAccounts/accountCreditBalance/{account}?currency=USD",
            admin_token,
        )
    )
    assert Decimal(balance["balance"]) == Decimal("5.00")
    assert sum(
        Decimal(line["amount"]) * (1 if line["accountingType"] == "credit" else -1) for line in balance["lineItems"]
    ) == Decimal("5.00")


def test_a_migrated_open_invoice_left_unpaid_past_its_due_time_becomes_delinquent(api, admin_token, jobs):
    model = policy_model()
    model["payments"] = {"Card": {}}
    model["delinquencyPlans"] = {
        "Standard": {"gracePeriodDays": 10, "advanceLapseTo": "issued", "delinquencyLevel": "policy"}
    }
    model["defaultDelinquencyPlan"] = "Standard"
    tenant = configured_tenant(api, admin_token, model, test_clock=True)
    policy = billed_policy(
        "SRC-R5-p1",
        [
            source_installment("I1", "INV1", 6),
            {
                **source_installment("I2", "INV2", 6),
                "startTime": "2026-02-01T05:00:00Z",
                "generateTime": "2026-01-10T05:00:00Z",
                "dueTime": "2026-02-01T05:00:00Z",
            },
        ],
        [(1, "72.00"), (2, "72.00")],
    )
    policy["terms"][0]["transactions"] = policy["terms"][0]["transactions"][:1]  # the issuance alone
    due = {
        **source_invoice("INV2", 6, "open"),
        "startTime": "2026-02-01T05:00:00Z",
        "endTime": "2026-06-01T04:00:00Z",
        "generateTime": "2026-01-10T05:00:00Z",
        "dueTime": "2026-02-01T05:00:00Z",
    }
    body = {
        **account_request("SRC-R5", policies=[policy]),
        "invoices": [source_invoice("INV1", 6, "settled"), due],
        "payments": [source_payment("P1", [("INV1", "72.00")], payment_type="Card")],
    }
    migration = ok(start(api, admin_token, tenant, [body]))["locator"]
    jobs.drain()
    account = account_of(api, admin_token, tenant, migration, "SRC-R5")["accountLocator"]
    delinquencies = f"/billing/{tenant}/delinquencies/accounts/{account}/list?count=100"
    assert ok(call(api, "GET", delinquencies, admin_token))["items"] == []

    advance(api, admin_token, tenant, jobs, "2026-02-02T00:00:00Z")
    (opened,) = ok(call(api, "GET", delinquencies, admin_token))["items"]
    assert (opened["delinquencyState"], opened["graceStartedAt"]) == ("inGrace", "2026-02-01T05:00:00.000Z")


def test_disbursements_are_executed_records_paid_out_of_the_credit_and_a_bad_one_fails_its_account(
    api, admin_token, jobs
):
    model = policy_model()
    model["disbursements"] = {"Refund": {"data": {}}}
    tenant = configured_tenant(api, admin_token, model)
    refund = {
        "id": "D1",
        "disbursementType": "refund",
        "disbursementTime": "2025-09-01T12:00:00Z",
        "data": {},
        "sources": [{"amount": Decimal("15.00")}, {"amount": Decimal("5.00")}],
    }
    good = {
        **account_request("SRC-D1"),
        "disbursements": [refund],
        "accounting": {"originalAccountBalances": {"USD": Decimal("3.50")}},
    }
    bad = {
        **account_request("SRC-D2"),
        "disbursements": [
            {**refund, "id": "D2", "disbursementType": "Cheque"},
            {**refund, "id": "D3", "sources": [{"amount": Decimal("-1.00")}]},
        ],
    }
    migration = ok(start(api, admin_token, tenant, [good, bad]))["locator"]
    jobs.drain()

    (failure,) = fetch(api, admin_token, tenant, migration, "/failures/list")["items"]
    assert failure["accountOriginalId"] == "SRC-D2" and set(failure["disbursements"]) == {"D2", "D3"}
    assert _messages(failure["disbursements"]["D2"]) == [
        "disbursementType: 'Cheque' is not a configured disbursement type"
    ]
    assert _messages(failure["disbursements"]["D3"]) == ["disbursement D3: sources[0].amount -1.00 is not positive"]

    mappings = account_of(api, admin_token, tenant, migration, "SRC-D1")
    (locator,) = mappings["disbursements"]
    assert mappings["disbursements"][locator]["originalId"] == "D1"
    paid_out = ok(call(api, "GET", f"/billing/{tenant}/disbursements/{locator}", admin_token))
    assert (paid_out["disbursementState"], Decimal(paid_out["amount"]), paid_out["accountLocator"]) == (
        "executed",
        Decimal("20.00"),
        mappings["accountLocator"],
    )
    balance = ok(
        call(
            api,
            "GET",
            f"/billing/{tenant}/accounting/ledgerAccounts/accountCreditBalance/"
            f"{mappings['accountLocator']}?currency=USD",
            admin_token,
        )
    )
    assert Decimal(balance["balance"]) == Decimal("3.50")  # the source's balance, after what it paid out


def test_a_discarded_invoice_is_migrated_discarded_owing_nothing_and_one_a_payment_covers_is_a_difference(
    api, admin_token, jobs
):
    tenant = _payments_tenant(api, admin_token)
    installments = [source_installment("I1", "INV1", 6), source_installment("I2", "INV2", 7)]
    good = {
        **account_request("SRC-R7", policies=[billed_policy("SRC-R7-p1", installments, [(1, "72.00"), (2, "72.00")])]),
        "invoices": [source_invoice("INV1", 6, "open"), source_invoice("INV2", 7, "discarded")],
    }
    bad = {
        **account_request("SRC-R8", policies=[billed_policy("SRC-R8-p1", installments, [(1, "72.00"), (2, "72.00")])]),
        "invoices": [source_invoice("INV1", 6, "settled"), source_invoice("INV2", 7, "discarded")],
        "payments": [source_payment("P1", [("INV1", "72.00"), ("INV2", "10.00")], payment_type="Card")],
    }
    migration = ok(start(api, admin_token, tenant, [good, bad]))["locator"]
    jobs.drain()

    (failure,) = fetch(api, admin_token, tenant, migration, "/failures/list")["items"]
    assert failure["accountOriginalId"] == "SRC-R8"
    assert _messages(failure["invoices"]["INV2"]) == [
        "invoice INV2: stated discarded (it owes nothing), its installments' items total 72.00, its payments cover "
        "10.00"
    ]
    mappings = account_of(api, admin_token, tenant, migration, "SRC-R7")
    account = mappings["accountLocator"]
    by_original = {
        mappings["invoices"][locator]["originalId"]: ok(
            call(api, "GET", f"/billing/{tenant}/invoices/{locator}", admin_token)
        )
        for locator in mappings["invoices"]
    }
    discarded = by_original["INV2"]
    assert (
        discarded["invoiceState"],
        Decimal(discarded["totalAmount"]),
        Decimal(discarded["totalRemainingAmount"]),
        discarded.get("settledTime"),
    ) == ("discarded", Decimal("72.00"), Decimal(0), None)
    assert due_index.get(tenant, DueKind.INVOICE_DUE, discarded["locator"]) is None
    assert due_index.get(tenant, DueKind.INVOICE_DUE, by_original["INV1"]["locator"]) is not None
    for method, action in (("POST", "settle"), ("PATCH", "writeOff")):
        assert_error(
            call(api, method, f"/billing/{tenant}/invoices/{discarded['locator']}/{action}", admin_token),
            409,
            "invoice.discarded",
        )
    assert_error(
        call(
            api,
            "POST",
            f"/billing/{tenant}/payments",
            admin_token,
            {
                "accountLocator": account,
                "type": "Card",
                "amount": Decimal("1.00"),
                "data": {},
                "targets": [{"containerType": "invoice", "containerLocator": discarded["locator"]}],
            },
        ),
        400,
        "payment.invalid_target",
    )

    # a payment to the account pays what it owes (the open invoices), never the discarded one, which owes nothing
    payment = ok(
        call(
            api,
            "POST",
            f"/billing/{tenant}/payments",
            admin_token,
            {
                "accountLocator": account,
                "type": "Card",
                "amount": Decimal("100.00"),
                "data": {},
                "targets": [{"containerType": "account", "containerLocator": account}],
            },
        )
    )
    ok(call(api, "PATCH", f"/billing/{tenant}/payments/{payment['locator']}/post", admin_token))
    assert (
        ok(call(api, "GET", f"/billing/{tenant}/invoices/{discarded['locator']}", admin_token))["invoiceState"]
        == "discarded"
    )
    assert (
        ok(call(api, "GET", f"/billing/{tenant}/invoices/{by_original['INV1']['locator']}", admin_token))[
            "invoiceState"
        ]
        == "settled"
    )
    assert (
        ok(call(api, "GET", f"/billing/{tenant}/invoices/{discarded['locator']}/credits/list", admin_token))["items"]
        == []
    )
