"""Each record a request reads is read once (issue 28, "Once per request"): creating a payment reads the
configuration's current pointer and the account at most once, however many of the billing service's
steps ask for them (CallContext.reads)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from chalicelib.billing import repository as billing_repository
from chalicelib.billing.delinquency import service as delinquency_service
from chalicelib.billing.installments import service as installments
from chalicelib.billing.installments.models import Installment
from chalicelib.core import codes
from chalicelib.runtime import due
from chalicelib.storage import keys
from tests.api.billing.delinquency_support import delinquencies_of_account, delinquency_tenant, statuses
from tests.api.billing.support import billed_policy, billing, billing_tenant, invoices_of_account
from tests.builders import system_ctx
from tests.support.api import call, ok
from tests.support.clock import advance

FIRST_GENERATE = datetime(2026, 1, 22, 5, tzinfo=timezone.utc)
"""The generate time of the first invoice (10 days before its due time, 2026-02-01T05:00Z)."""
GRACE_END = datetime(2026, 2, 11, 5, tzinfo=timezone.utc)


def test_a_payment_create_reads_the_configuration_and_the_account_once(api, admin_token, jobs, ddb_reads):
    tenant = billing_tenant(api, admin_token, "FullPay")
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    ddb_reads.clear()
    payment = ok(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            admin_token,
            {"accountLocator": account, "type": "Check", "amount": 1000, "data": {}, "targets": []},
        )
    )
    assert payment["paymentState"] in ("draft", "validated", "posted"), payment
    by_key: dict[tuple[str, str], int] = {}
    for read in ddb_reads:
        for key in read.keys:
            by_key[key] = by_key.get(key, 0) + 1
    pointer, stored = keys.config_current(tenant), keys.account(tenant, account)
    assert len(ddb_reads.of_key(pointer.pk, pointer.sk)) <= 1, by_key
    assert len(ddb_reads.of_key(stored.pk, stored.sk)) <= 1, by_key
    assert max(by_key.values()) == 1, by_key  # no record asked for twice


def _due_run(tenant: str, at: datetime) -> dict[str, Any]:
    """The due run of the tenant's entries due by `at`, as its schedule runs it (one step)."""
    return due.run_step(replace(system_ctx().for_tenant(tenant), now=at), at).result


def test_an_invoice_generation_is_one_write_of_few_calls(api, admin_token, jobs, ddb_calls, ddb_reads):
    """The due run of an account's first invoice (issue 28: 15 calls and 3 TransactWriteItems before, the goal
    8): besides the run's three calls, 8: the account with its billing root and the configuration's pointer
    (one BatchGetItem), its holds, its uninvoiced installments (Query and BatchGetItem), the riders, the number
    (UpdateItem); the invoice, its generation and the entry's settlement in one write; the next generate time.
    Each record read once."""
    tenant = billing_tenant(api, admin_token, test_clock=True)
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    ddb_calls.clear()
    ddb_reads.clear()
    assert _due_run(tenant, FIRST_GENERATE)["invoicesGenerated"] == 1
    # the run's own: two Queries of the index (the page, then finding no more) and the entries' BatchGetItem
    assert Counter(ddb_calls) == {"Query": 6, "BatchGetItem": 3, "UpdateItem": 1, "TransactWriteItems": 1}
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    assert Decimal(str(invoice["totalAmount"])) == Decimal("102.08")
    assert max(Counter(key for read in ddb_reads for key in read.keys).values()) == 1


def test_a_lapse_reads_each_record_once_and_writes_in_few_transactions(api, admin_token, jobs, ddb_calls):
    """The grace end of an unpaid invoice's delinquency, one due step with nothing left after it: the
    delinquency lapsed, the policy's cancellation created and issued (the policy root written once, its
    delinquency mark with the issue), its billing (the lattice, its installments, the refund's invoice of those
    due now written invoiced, the account's generation entry moved on to the rest) and the entry's settlement
    are one write (delinquency/service.py `_lapsed_in_one_write` and `_billed_in`). Issue 28 measured 43-48
    calls and 8-9 TransactWriteItems (the goal: 15 and 3); 26 and 3 before this write billed the lapse (its
    installments' write and the generation entry's run after it); 11 now besides the run's three: the
    delinquency's alias naming its container, the container's root, the record with the account, the
    configuration's pointer and the account's generation entry (one BatchGetItem), the holds (delinquency and
    invoicing, one Query), the policy's head (3), the account's riders, the invoice's number, the credit
    balance, the write."""
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-02-11T04:00:00Z")
    ddb_calls.clear()
    assert _due_run(tenant, GRACE_END)["graceEnded"] == ["lapsed"]
    jobs.drain()
    # besides the run's three (the first page of due entries, their BatchGetItem, the last page finding none)
    assert Counter(ddb_calls) == {
        "GetItem": 4,
        "Query": 5,
        "TransactWriteItems": 1,
        "BatchGetItem": 3,
        "UpdateItem": 1,
    }
    assert statuses(api, admin_token, tenant, policy) == ["cancelled"]
    assert [
        (i["invoiceState"], Decimal(str(i["totalAmount"])))
        for i in invoices_of_account(api, admin_token, tenant, account)
    ] == [("open", Decimal("102.08")), ("settled", Decimal("-102.08"))]
    ddb_calls.clear()
    assert "graceEnded" not in _due_run(tenant, GRACE_END)  # nothing left due: the page finds nothing
    assert ddb_calls == ["Query"]


def _tenant_items(tenant: str) -> list[dict[str, Any]]:
    """Every stored item of the tenant (a test's look at the whole table): what a Scan filtered on the tenant's key
    prefix answers, read from the in-process moto's table by partition (tests/support/stored.py; a Scan walked every
    item of the session's table, which grows with every tenant the process made)."""
    from chalicelib.storage import codec
    from tests.support.stored import items_under

    return [codec.deserialize(item) for item in items_under(keys.tenant_scope(tenant))]


def _what_a_lapse_left(api: Any, token: str, tenant: str, account: str, policy: dict[str, Any]) -> dict[str, Any]:
    """What a user sees of a lapse (and what it stored), without the locators, tokens and root versions that
    differ from one run to another."""
    items = _tenant_items(tenant)
    stored = {i["locator"]: i for i in items if i.get("entity") == "invoice" and "invoiceItems" in i}
    invoices = [
        (
            i["invoiceState"],
            Decimal(str(i["totalAmount"])),
            i.get("invoiceNumber"),
            *(i[field] for field in ("totalRemainingAmount", "startTime", "endTime", "dueTime", "generatedTime")),
            sorted(
                (item["chargeType"], str(item["amount"]), str(item["remainingAmount"]))
                for item in stored[i["locator"]]["invoiceItems"]
            ),
        )
        for i in invoices_of_account(api, token, tenant, account, zero=True)
    ]
    installments = sorted(
        (
            i.generateTime,
            i.dueTime,
            i.installmentStartTime,
            i.invoicing,
            "invoiced" if i.invoiceLocator else "uninvoiced",
            sum((item.amount for item in i.installmentItems), Decimal(0)),
        )
        for i in (
            billing_repository.model_of(Installment, item) for item in items if item.get("entity") == "installment"
        )
    )
    return {
        "statuses": statuses(api, token, tenant, policy),
        "delinquencies": [d["delinquencyState"] for d in delinquencies_of_account(api, token, tenant, account)],
        "invoices": invoices,
        "installments": installments,
        "records": Counter(str(i.get("entity")) for i in items if i.get("entity") != "event"),
        "events": Counter(str(i["type"]) for i in items if i.get("entity") == "event"),
        "due": sorted((str(i["kind"]), str(i["dueAt"])) for i in items if i.get("entity") == "dueEntry"),
        "credit": sorted((str(i["currency"]), str(i["balance"])) for i in items if i.get("entity") == "creditBalance"),
        "ledger": sorted(str(i.get("amount")) for i in items if i.get("entity") == "ledgerLine"),
    }


def test_a_lapse_billed_in_its_write_leaves_what_billing_after_it_leaves(api, admin_token, jobs, monkeypatch):
    """The lapse billed in its write and the lapse whose billing does not fit there (billed after it, its
    invoice by the generation entry's run in the same step, as before) leave the same: the same invoices to the
    cent (numbers, states, times, items), installments, records of each kind, events of each type, due entries,
    credit balance and ledger."""
    left = []
    for fits in (True, False):
        tenant = delinquency_tenant(api, admin_token)
        account, policy = billed_policy(api, admin_token, tenant, jobs)
        advance(api, admin_token, tenant, jobs, "2026-02-11T04:00:00Z")
        with monkeypatch.context() as patched:
            if not fits:  # the write has no room for the billing: as many actions as one write holds left for after it
                patched.setattr(delinquency_service, "LAPSE_RECORDS", 100)
            assert _due_run(tenant, GRACE_END)["graceEnded"] == ["lapsed"]
            jobs.drain()
        left.append(_what_a_lapse_left(api, admin_token, tenant, account, policy))
    billed_in_write, billed_after = left
    assert billed_in_write == billed_after
    assert billed_in_write["statuses"] == ["cancelled"]
    assert [i[:2] for i in billed_in_write["invoices"]] == [
        ("open", Decimal("102.08")),
        ("settled", Decimal("-102.08")),
    ]
    assert billed_in_write["events"]["billing.invoice.generate"] == 2
    assert billed_in_write["events"]["billing.installmentlattice.create"] == 2
    assert len(billed_in_write["installments"]) == 24  # the policy's 12 and its lapse's 12
    assert [i[4] for i in billed_in_write["installments"]].count("invoiced") == 2  # the first and its refund


def test_a_lapse_its_policy_hold_refuses_is_recorded_step_by_step(api, admin_token, jobs):
    """A policy whose hold blocks cancellations: the one write of the lapse is dropped whole (the issue is
    refused while it is built) and the grace end lapses step by step, recording the refusal: the delinquency
    lapsed with the error, the policy no longer delinquent and not cancelled, nothing billed."""
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    held = ok(
        call(
            api,
            "PUT",
            f"/policy/{tenant}/holds",
            admin_token,
            {
                "referenceType": "policy",
                "referenceLocator": policy["locator"],
                "policyHoldScope": {
                    "transactionCategory": ["cancellation"],
                    "transactionType": [],
                    "allowStaticData": True,
                },
            },
        )
    )
    ok(call(api, "PATCH", f"/policy/{tenant}/holds/{held['locator']}/activate", admin_token))
    advance(api, admin_token, tenant, jobs, "2026-02-11T04:00:00Z")
    assert _due_run(tenant, GRACE_END)["graceEnded"] == ["lapsed"]
    jobs.drain()
    [record] = delinquencies_of_account(api, admin_token, tenant, account)
    assert record["delinquencyState"] == "lapseTransactionCreated"
    assert [r.get("transactionLocator") for r in record["references"] if r["referenceType"] == "policy"] == [None]
    [grace] = ok(call(api, "GET", billing(tenant, f"/jobs/delinquencies/{record['locator']}/list"), admin_token))[
        "items"
    ]
    assert (grace["outcome"], grace["jobStatus"]) == ("lapsed", "failed")
    assert f"{policy['locator']}: transaction.held" in grace["processingErrors"]
    assert statuses(api, admin_token, tenant, policy) == ["onRisk"]  # no longer delinquent, not cancelled
    assert [i["invoiceState"] for i in invoices_of_account(api, admin_token, tenant, account)] == ["open"]


def test_a_lapse_its_step_fails_to_bill_is_billed_by_its_safety_net(api, admin_token, jobs, monkeypatch):
    """A lapse whose billing does not fit in its write holds its billing safety net instead, and is billed in
    the step once the write committed: when that billing fails (a conflict, say), the
    lapse stands unbilled and the safety net's entry, due 15 minutes on, enqueues the billing job, which
    bills it as a lapse's job always did."""
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-02-11T04:00:00Z")
    real, failed = installments.bill_transaction, []

    def conflicting(*args: Any, **kwargs: Any) -> Any:
        if not failed:
            failed.append(True)
            raise codes.CONCURRENT_MODIFICATION("another billing change came first")
        return real(*args, **kwargs)

    monkeypatch.setattr(installments, "bill_transaction", conflicting)
    monkeypatch.setattr(delinquency_service, "LAPSE_RECORDS", 100)  # billed after the write (it does not fit in it)
    assert _due_run(tenant, GRACE_END)["graceEnded"] == ["lapsed"]
    jobs.drain()
    assert statuses(api, admin_token, tenant, policy) == ["cancelled"]
    assert [i["invoiceState"] for i in invoices_of_account(api, admin_token, tenant, account)] == ["open"]
    assert _due_run(tenant, GRACE_END + timedelta(minutes=15))["billingJobsEnqueued"] == 1
    jobs.drain()
    assert [
        (i["invoiceState"], Decimal(str(i["totalAmount"])))
        for i in invoices_of_account(api, admin_token, tenant, account)
    ] == [("open", Decimal("102.08")), ("settled", Decimal("-102.08"))]
