"""A migration for an existing account (`POST .../migrations/accounts/{accountLocator}`): its policies, invoices,
payments and disbursements join the account the tenant has; an unknown account is 404, a replay with the same
X-Idempotency-Key starts one migration."""

from __future__ import annotations

from decimal import Decimal

from tests.api.accounts.support import create
from tests.api.migration.support import (
    CREATED_BY,
    account_of,
    account_request,
    auto_policy,
    billed_policy,
    fetch,
    migrations,
    source_installment,
    source_invoice,
    source_payment,
    start,
)
from tests.support.api import assert_error, call, ok
from tests.support.configs import configured_tenant, policy_model


def _start(api, token, tenant, account, body, key=None):
    return call(
        api,
        "POST",
        migrations(tenant, f"/accounts/{account}"),
        token,
        body,
        headers={"X-Idempotency-Key": key} if key else None,
    )


def test_an_existing_accounts_records_join_it_and_an_unknown_account_is_404(api, admin_token, jobs):
    model = policy_model()
    model["payments"] = {"Card": {}}
    tenant = configured_tenant(api, admin_token, model)
    account = create(api, admin_token, tenant)["locator"]
    policy = billed_policy(
        "SRC-X-p1",
        [source_installment("I1", "INV1", 6), source_installment("I2", "INV2", 7)],
        [(1, "72.00"), (2, "72.00")],
    )
    body = {
        "defaultCreatedBy": CREATED_BY,
        "policies": [policy, auto_policy("SRC-X-p2")],
        "invoices": [source_invoice("INV1", 6, "settled"), source_invoice("INV2", 7, "open")],
        "payments": [source_payment("P1", [("INV1", "72.00")], payment_type="Card")],
        "disbursements": [],
    }
    started = ok(_start(api, admin_token, tenant, account, body, key="existing-1"))
    assert ok(_start(api, admin_token, tenant, account, body, key="existing-1"))["locator"] == started["locator"]
    assert started["totalAccounts"] == 1
    jobs.drain()

    migration = started["locator"]
    done = fetch(api, admin_token, tenant, migration)
    failures = fetch(api, admin_token, tenant, migration, "/failures/list")["items"]
    assert failures == [], str(failures)
    assert (done["migrationState"], done["completedAccounts"]) == ("finished", 1)
    (mapped,) = fetch(api, admin_token, tenant, migration, "/mappings/list")["items"]
    assert mapped["accountLocator"] == account and mapped["originalAccountId"] == account
    assert sorted(m["originalId"] for m in mapped["policies"].values()) == ["SRC-X-p1", "SRC-X-p2"]
    listed = ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}/policies/list", admin_token))["items"]
    assert sorted(p["locator"] for p in listed) == sorted(mapped["policies"])
    assert {p["accountLocator"] for p in listed} == {account}
    invoices = {
        i["locator"]: i
        for i in ok(call(api, "GET", f"/billing/{tenant}/invoices/accounts/{account}/list", admin_token))["items"]
    }
    assert {
        mapped["invoices"][locator]["originalId"]: (
            invoices[locator]["invoiceState"],
            Decimal(invoices[locator]["totalAmount"]),
        )
        for locator in mapped["invoices"]
    } == {"INV1": ("settled", Decimal("72.00")), "INV2": ("open", Decimal("72.00"))}
    assert ok(call(api, "GET", f"/policy/{tenant}/accounts/list", admin_token))["items"][0]["locator"] == account

    unknown = "01JVM6MGG0BCY4HV1F8F6P2RWE"
    assert_error(_start(api, admin_token, tenant, unknown, body), 404, "account.not_found")


def test_a_migration_joining_an_account_pays_its_open_invoices_by_locator_reconciled_first(api, admin_token, jobs):
    model = policy_model()
    model["payments"] = {"Card": {}}
    tenant = configured_tenant(api, admin_token, model)
    account = create(api, admin_token, tenant)["locator"]
    policy = billed_policy(
        "SRC-Y-p1",
        [source_installment("I1", "INV1", 6), source_installment("I2", "INV2", 7)],
        [(1, "72.00"), (2, "72.00")],
    )
    first = ok(
        _start(
            api,
            admin_token,
            tenant,
            account,
            {
                "defaultCreatedBy": CREATED_BY,
                "policies": [policy],
                "disbursements": [],
                "invoices": [source_invoice("INV1", 6, "settled"), source_invoice("INV2", 7, "open")],
                "payments": [source_payment("P1", [("INV1", "72.00")], payment_type="Card")],
            },
        )
    )["locator"]
    jobs.drain()
    (mapped,) = fetch(api, admin_token, tenant, first, "/mappings/list")["items"]
    located = {mapping["originalId"]: locator for locator, mapping in mapped["invoices"].items()}

    def joining(payments):
        started = ok(
            _start(
                api,
                admin_token,
                tenant,
                account,
                {
                    "defaultCreatedBy": CREATED_BY,
                    "policies": [],
                    "invoices": [],
                    "disbursements": [],
                    "payments": payments,
                },
            )
        )["locator"]
        jobs.drain()
        return started

    refused = joining(
        [
            source_payment("P2", [(located["INV2"], "100.00")], payment_type="Card"),
            source_payment("P3", [(located["INV1"], "1.00")], payment_type="Card"),
        ]
    )
    assert fetch(api, admin_token, tenant, refused)["migrationState"] == "failed"
    (failure,) = fetch(api, admin_token, tenant, refused, "/failures/list")["items"]
    assert {
        original: [m for item in entity["errors"]["validationItems"] for m in item["errors"]]
        for original, entity in failure["payments"].items()
    } == {
        "P2": [
            f"payment P2: the account's invoice {located['INV2']} has 72.00 remaining, the migration's payments "
            "pay 100.00 of it"
        ],
        "P3": [f"payment P3: paymentItems[0]: the account's invoice {located['INV1']} is settled, it owes nothing"],
    }
    owed = ok(call(api, "GET", f"/billing/{tenant}/invoices/{located['INV2']}", admin_token))
    assert (owed["invoiceState"], Decimal(owed["totalRemainingAmount"])) == ("open", Decimal("72.00"))

    paid = joining(
        [
            source_payment("P4", [(located["INV2"], "50.00")], payment_type="Card"),
            source_payment("P5", [(located["INV2"], "22.00")], payment_type="Card"),
        ]
    )
    assert fetch(api, admin_token, tenant, paid)["migrationState"] == "finished"
    settled = ok(call(api, "GET", f"/billing/{tenant}/invoices/{located['INV2']}", admin_token))
    assert (settled["invoiceState"], Decimal(settled["totalRemainingAmount"])) == ("settled", Decimal(0))
    (joined,) = fetch(api, admin_token, tenant, paid, "/mappings/list")["items"]
    credits = ok(call(api, "GET", f"/billing/{tenant}/invoices/{located['INV2']}/credits/list", admin_token))["items"]
    assert sorted((c["locator"], Decimal(c["amount"])) for c in credits) == sorted(
        (locator, Decimal("50.00") if mapping["originalId"] == "P4" else Decimal("22.00"))
        for locator, mapping in joined["payments"].items()
    )


def _earlier_book(api, token):
    """A tenant whose first migration brought a new account with invoices INV1 (48.00, settled by P1), INV2 and
    INV3 (48.00 each, open): (tenant, the account's locator, the first migration's invoices by original id)."""
    model = policy_model()
    model["payments"] = {"Card": {}}
    tenant = configured_tenant(api, token, model)
    policy = billed_policy(
        "SRC-Z-p1",
        [source_installment("I1", "INV1", 6), source_installment("I2", "INV2", 7), source_installment("I3", "INV3", 8)],
        [(1, "48.00"), (2, "48.00"), (3, "48.00")],
    )
    body = {
        **account_request("SRC-Z", policies=[policy]),
        "invoices": [
            source_invoice("INV1", 6, "settled"),
            source_invoice("INV2", 7, "open"),
            source_invoice("INV3", 8, "open"),
        ],
        "payments": [source_payment("P1", [("INV1", "48.00")], payment_type="Card")],
    }
    first = ok(start(api, token, tenant, [body]))["locator"]
    return tenant, first


def _joining(api, token, tenant, account, jobs, payments, invoices=(), policies=()):
    started = ok(
        _start(
            api,
            token,
            tenant,
            account,
            {
                "defaultCreatedBy": CREATED_BY,
                "policies": list(policies),
                "invoices": list(invoices),
                "disbursements": [],
                "payments": payments,
            },
        )
    )["locator"]
    jobs.drain()
    return started


def _messages(api, token, tenant, migration):
    (failure,) = fetch(api, token, tenant, migration, "/failures/list")["items"]
    return {
        kind: {
            original: [m for item in entity["errors"]["validationItems"] for m in item["errors"]]
            for original, entity in failure[kind].items()
        }
        for kind in ("invoices", "payments")
        if failure[kind]
    }


def _invoice_state(api, token, tenant, locator):
    found = ok(call(api, "GET", f"/billing/{tenant}/invoices/{locator}", token))
    return found["invoiceState"], Decimal(found["totalRemainingAmount"])


def test_a_later_migration_pays_an_invoice_an_earlier_one_brought_by_its_original_id(api, admin_token, jobs):
    tenant, first = _earlier_book(api, admin_token)
    jobs.drain()
    mapped = account_of(api, admin_token, tenant, first, "SRC-Z")
    account = mapped["accountLocator"]
    located = {mapping["originalId"]: locator for locator, mapping in mapped["invoices"].items()}
    assert _invoice_state(api, admin_token, tenant, located["INV2"]) == ("open", Decimal("48.00"))

    refused = _joining(
        api,
        admin_token,
        tenant,
        account,
        jobs,
        [
            source_payment("P2", [("INV1", "1.00")], payment_type="Card"),
            source_payment("P3", [("INV3", "30.00")], payment_type="Card"),
            source_payment("P4", [(located["INV3"], "20.00")], payment_type="Card"),
            source_payment("P5", [("INV2", "10.00")], payment_type="Card"),
        ],
    )
    assert fetch(api, admin_token, tenant, refused)["migrationState"] == "failed"
    assert _messages(api, admin_token, tenant, refused) == {
        "payments": {
            "P2": [
                f"payment P2: paymentItems[0]: the account's invoice INV1 ({located['INV1']}) is settled, it owes "
                "nothing"
            ],
            "P3": [
                f"payment P3: the account's invoice INV3 ({located['INV3']}) has 48.00 remaining, the migration's "
                "payments pay 50.00 of it"
            ],
            "P4": [
                f"payment P4: the account's invoice INV3 ({located['INV3']}) has 48.00 remaining, the migration's "
                "payments pay 50.00 of it"
            ],
        }
    }
    assert _invoice_state(api, admin_token, tenant, located["INV2"]) == ("open", Decimal("48.00"))
    assert _invoice_state(api, admin_token, tenant, located["INV3"]) == ("open", Decimal("48.00"))

    paid = _joining(
        api,
        admin_token,
        tenant,
        account,
        jobs,
        [
            source_payment("P6", [("INV2", "48.00"), ("INV3", "20.00")], payment_type="Card"),
            source_payment("P7", [(located["INV3"], "8.00")], payment_type="Card"),
        ],
    )
    done = fetch(api, admin_token, tenant, paid)
    assert (done["migrationState"], done["completedAccounts"]) == ("finished", 1)
    assert _invoice_state(api, admin_token, tenant, located["INV1"]) == ("settled", Decimal(0))
    assert _invoice_state(api, admin_token, tenant, located["INV2"]) == ("settled", Decimal(0))
    assert _invoice_state(api, admin_token, tenant, located["INV3"]) == ("open", Decimal("20.00"))
    (joined,) = fetch(api, admin_token, tenant, paid, "/mappings/list")["items"]
    payment_of = {mapping["originalId"]: locator for locator, mapping in joined["payments"].items()}
    credits = ok(call(api, "GET", f"/billing/{tenant}/invoices/{located['INV3']}/credits/list", admin_token))["items"]
    assert sorted((c["locator"], Decimal(c["amount"])) for c in credits) == sorted(
        [(payment_of["P6"], Decimal("20.00")), (payment_of["P7"], Decimal("8.00"))]
    )
    six = ok(call(api, "GET", f"/billing/{tenant}/payments/{payment_of['P6']}", admin_token))
    assert (six["paymentState"], Decimal(six["amount"])) == ("posted", Decimal("68.00"))


def test_an_unknown_or_already_brought_original_invoice_id_fails_the_account_writing_nothing(api, admin_token, jobs):
    tenant, first = _earlier_book(api, admin_token)
    jobs.drain()
    mapped = account_of(api, admin_token, tenant, first, "SRC-Z")
    account = mapped["accountLocator"]
    located = {mapping["originalId"]: locator for locator, mapping in mapped["invoices"].items()}
    before = ok(call(api, "GET", f"/billing/{tenant}/invoices/accounts/{account}/list", admin_token))["items"]

    unknown = _joining(
        api, admin_token, tenant, account, jobs, [source_payment("P8", [("INV9", "5.00")], payment_type="Card")]
    )
    assert fetch(api, admin_token, tenant, unknown)["migrationState"] == "failed"
    assert _messages(api, admin_token, tenant, unknown) == {
        "payments": {"P8": ["payment P8: paymentItems[0]: invoice 'INV9' is not among the account's invoices"]}
    }

    again = billed_policy("SRC-Z-p2", [source_installment("J1", "INV2", 9)], [(1, "144.00")])
    twice = _joining(
        api,
        admin_token,
        tenant,
        account,
        jobs,
        [source_payment("P9", [("INV2", "144.00")], payment_type="Card")],
        invoices=[source_invoice("INV2", 9, "settled")],
        policies=[again],
    )
    assert fetch(api, admin_token, tenant, twice)["migrationState"] == "failed"
    assert _messages(api, admin_token, tenant, twice) == {
        "invoices": {
            "INV2": [
                f"invoice INV2: the account has it already (invoice {located['INV2']}, brought by migration {first})"
            ]
        }
    }
    after = ok(call(api, "GET", f"/billing/{tenant}/invoices/accounts/{account}/list", admin_token))["items"]
    assert after == before
    listed = ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}/policies/list", admin_token))["items"]
    assert [p["locator"] for p in listed] == list(mapped["policies"])
    assert _invoice_state(api, admin_token, tenant, located["INV2"]) == ("open", Decimal("48.00"))
