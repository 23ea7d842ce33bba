"""One account that is a fleet (issue 28 point 7): 30 monthly policies on one account (premium 1,200.00 and tax
60.00 a year each: an installment of 2 items a policy a month) get one invoice for their first month, 60 items,
105.00 a policy, 3,150.00 in all, however many TransactWriteItems its write takes (billing/invoices/service.py
`_stage_invoice`: its write would hold 137 actions), its items beyond INLINE_ITEMS in pages (made small here, so
the invoice has several). The due run at the first generate time (2026-01-22T05:00Z) makes it."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from chalicelib.billing import repository
from chalicelib.billing.delinquency import repository as delinquency_repository
from chalicelib.billing.delinquency import service as delinquency_service
from chalicelib.billing.installments import repository as installment_repository
from chalicelib.billing.invoices import repository as invoice_repository
from chalicelib.billing.invoices import service as invoicing
from chalicelib.billing.writeoffs import repository as write_off_repository
from chalicelib.core import codes
from chalicelib.core.clock import isoformat
from chalicelib.runtime import due
from chalicelib.storage import keys, query, table, unit_of_work
from tests.api.billing.delinquency_support import delinquency_tenant, events_of, events_of_type, statuses
from tests.api.billing.support import billing, billing_tenant, invoices_of_account, new_payment
from tests.api.policies.support import issue
from tests.api.quotes.support import new_account
from tests.builders import system_ctx
from tests.support.api import call, event_types, ok
from tests.support.clock import advance

POLICIES = 30
FIRST_GENERATE = datetime(2026, 1, 22, 5, tzinfo=timezone.utc)
TOTAL = Decimal("3150.00")


@pytest.fixture
def fleet(api, admin_token, jobs, monkeypatch):
    """(tenant, account): the account's 30 policies billed, none invoiced yet; item pages of ~2 KB, 5 locators of
    each list on the record."""
    monkeypatch.setattr(invoice_repository, "PAGE_BYTES", 2_000)
    monkeypatch.setattr(invoice_repository, "INLINE_LOCATORS", 5)
    tenant = billing_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    for _ in range(POLICIES):
        issue(tenant, account)
    jobs.drain()
    assert invoices_of_account(api, admin_token, tenant, account) == []
    return tenant, account


def run_generation(tenant):
    return due.run_step(system_ctx().for_tenant(tenant), FIRST_GENERATE).result


def raw(tenant, account, prefix):
    """The items of the account's billing partition under `prefix`, as stored."""
    return query.all_items(
        table.gateway(),
        repository.scope(tenant),
        keys.billing_partition(tenant, account),
        sk_prefix=prefix,
        consistent=True,
    )


def item_pages(tenant, account, invoice):
    return raw(tenant, account, f"{keys.BILLING_ITEM_PAGE_PREFIX}{invoice}#")


def test_a_fleet_gets_one_invoice_for_its_period_with_all_its_items(api, admin_token, fleet):
    tenant, account = fleet

    assert run_generation(tenant)["invoicesGenerated"] == 1

    [listed] = invoices_of_account(api, admin_token, tenant, account)
    assert (Decimal(str(listed["totalAmount"])), listed["dueTime"]) == (TOTAL, "2026-02-01T05:00:00.000Z")
    invoice = ok(call(api, "GET", billing(tenant, f"/invoices/{listed['locator']}"), admin_token))
    items = invoice["invoiceItems"]
    assert len(items) == 2 * POLICIES and len({i["locator"] for i in items}) == 2 * POLICIES
    assert Counter((i["chargeType"], Decimal(str(i["amount"]))) for i in items) == {
        ("premium", Decimal("100.00")): POLICIES,
        ("tax", Decimal("5.00")): POLICIES,
    }
    assert {i["invoiceLocator"] for i in items} == {listed["locator"]}
    assert sum(Decimal(str(i["remainingAmount"])) for i in items) == TOTAL
    # its items beyond the record's are in pages beside it, read with it
    assert len(item_pages(tenant, account, listed["locator"])) > 1
    # and so are its installments and policies beyond the record's first: its size is bounded whatever it bills
    [record] = raw(tenant, account, f"{keys.BILLING_INVOICE_PREFIX}{listed['locator']}")
    assert (len(record["installmentLocators"]), len(record["policyLocators"]), len(record["invoiceItems"])) == (
        5,
        5,
        invoice_repository.INLINE_ITEMS,
    )
    whole = invoicing.invoice(system_ctx().for_tenant(tenant), listed["locator"])
    assert len(set(whole.installmentLocators)) == len(set(whole.policyLocators)) == POLICIES
    assert sorted(whole.policyLocators) == whole.policyLocators  # in their order
    # each installment is invoiced on it, none left to invoice, nothing staged left on them
    assert installment_repository.uninvoiced(tenant, account, isoformat(FIRST_GENERATE)) == []
    assert raw(tenant, account, f"{keys.BILLING_UNINVOICED_PREFIX}{isoformat(FIRST_GENERATE)}#") == []  # rolled forward
    installments = ok(call(api, "GET", billing(tenant, f"/invoices/{listed['locator']}/details"), admin_token))[
        "invoiceSummaries"
    ][0]["invoiceItemSummaries"]
    assert sum(len(i["installmentItemSummaries"]) for i in installments) == 2 * POLICIES


def test_paying_a_fleets_invoice_and_reversing_the_payment_keep_every_item_exact(api, admin_token, fleet):
    tenant, account = fleet
    run_generation(tenant)
    [listed] = invoices_of_account(api, admin_token, tenant, account)
    payment = ok(new_payment(api, admin_token, tenant, account, "Check", TOTAL + 5))["locator"]

    posted = call(api, "PATCH", billing(tenant, f"/payments/{payment}/post"), admin_token)

    assert (ok(posted)["paymentState"], Decimal(str(ok(posted)["remainingAmount"]))) == ("posted", Decimal("5.00"))
    paid = ok(call(api, "GET", billing(tenant, f"/invoices/{listed['locator']}"), admin_token))
    assert (paid["invoiceState"], Decimal(str(paid["totalRemainingAmount"]))) == ("settled", 0)
    assert [Decimal(str(i["remainingAmount"])) for i in paid["invoiceItems"]] == [0] * 2 * POLICIES
    assert Counter(event_types(api, admin_token, tenant, posted)) == {
        "billing.invoice.settle": 1,
        "billing.payment.post": 1,
    }
    assert len(item_pages(tenant, account, listed["locator"])) > 1  # the new pages, the old ones deleted

    ok(call(api, "PATCH", billing(tenant, f"/payments/{payment}/reverse"), admin_token))

    reopened = ok(call(api, "GET", billing(tenant, f"/invoices/{listed['locator']}"), admin_token))
    assert (reopened["invoiceState"], Decimal(str(reopened["totalRemainingAmount"]))) == ("open", TOTAL)
    assert sorted(Decimal(str(i["remainingAmount"])) for i in reopened["invoiceItems"]) == sorted(
        Decimal(str(i["amount"])) for i in reopened["invoiceItems"]
    )
    balance = ok(
        call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), admin_token)
    )["balance"]
    assert Decimal(str(balance)) == 0


def test_a_run_that_loses_the_accounts_root_leaves_nothing_seen_and_is_retried(api, admin_token, fleet, monkeypatch):
    """Another billing write of the account commits between the run's staged writes and its final write (a
    draft hold created): the final write fails on the root, nothing of the invoice is seen,
    the installments are still to invoice; the entry's retry makes the one invoice."""
    tenant, account = fleet
    real = repository.write_staged
    raced = []

    def racing(tenant_locator, groups):
        real(tenant_locator, groups)
        if not raced:
            raced.append(True)
            hold = {"accountLocator": account, "targetType": "invoicing"}  # a draft: it holds nothing
            ok(call(api, "POST", billing(tenant, "/holds"), admin_token, hold))

    monkeypatch.setattr(repository, "write_staged", racing)

    result = run_generation(tenant)

    assert raced and result.get("invoicesGenerated", 0) == 0 and result["alreadyDone"] == 1
    assert invoices_of_account(api, admin_token, tenant, account, zero=True) == []
    assert len(installment_repository.uninvoiced(tenant, account, isoformat(FIRST_GENERATE))) == POLICIES
    entry = due.entry(system_ctx().for_tenant(tenant), due.DueKind.INVOICE_GENERATE, account)
    assert entry is not None and entry.attempts == 1

    retried = due.run_step(system_ctx().for_tenant(tenant), entry.due_at).result

    assert retried["invoicesGenerated"] == 1
    [listed] = invoices_of_account(api, admin_token, tenant, account)
    assert Decimal(str(listed["totalAmount"])) == TOTAL
    invoice = ok(call(api, "GET", billing(tenant, f"/invoices/{listed['locator']}"), admin_token))
    assert len(invoice["invoiceItems"]) == 2 * POLICIES
    assert installment_repository.uninvoiced(tenant, account, isoformat(FIRST_GENERATE)) == []


DUE = datetime(2026, 2, 1, 5, tzinfo=timezone.utc)


DELINQUENT_POLICIES = 60
"""More than one write holds: a delinquency and its policies' marks are about 3 actions a policy (delinquency/
service.py `_opened_in_steps`), and so are their lapses' marks (`_unmark_in_steps`)."""
GRACE_END = datetime(2026, 2, 11, 5, tzinfo=timezone.utc)


@pytest.fixture
def delinquent_fleet(api, admin_token, jobs, monkeypatch):
    """(tenant, account): 60 policies on one account of a tenant with the Standard delinquency plan (level
    policy), their first invoice generated and unpaid."""
    monkeypatch.setattr(invoice_repository, "INLINE_LOCATORS", 5)
    tenant = delinquency_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    for _ in range(DELINQUENT_POLICIES):
        issue(tenant, account)
    jobs.drain()
    run_generation(tenant)
    return tenant, account


def largest_writes(monkeypatch):
    """The number of actions of each TransactWriteItems from now on (in order)."""
    sizes: list[int] = []
    gateway = table.gateway()
    real = gateway.transact

    def counted(scope, ops, *args, **kwargs):
        sizes.append(len(ops))
        return real(scope, ops, *args, **kwargs)

    monkeypatch.setattr(gateway, "transact", counted)
    return sizes


def test_a_fleets_invoice_falling_due_opens_one_delinquency_and_its_grace_end_lapses_every_policy(
    api, admin_token, delinquent_fleet, ddb_calls, monkeypatch, jobs
):
    """The invoice of 60 policies unpaid at its due time: one delinquency of them all (its record and events in one
    write, then its policies' marks and references in writes of about 30 policies each, each behind the account's
    billing root, the create job and the entry's settlement last), their roots read together (BatchGetItem, not one
    GetItem each). At its grace end each policy lapses (a cancellation effective at the grace start, issued), the
    marks removed in writes of their own first: no write over DynamoDB's 100 actions (request.invalid before)."""
    tenant, account = delinquent_fleet
    [listed] = invoices_of_account(api, admin_token, tenant, account)
    ddb_calls.clear()
    sizes = largest_writes(monkeypatch)

    step = due.run_step(system_ctx().for_tenant(tenant), DUE)

    assert not step.result["failed"], step.result
    assert step.result["delinquenciesOpened"] == 1
    assert ddb_calls.count("GetItem") <= 2, Counter(ddb_calls)  # 22 before, at 20 policies
    assert len(sizes) >= 3 and max(sizes) <= 100, sizes
    # the record and its event (12 actions), the marks of 30, 30 and the rest (97, 97, 49), the entry's (3)
    assert sizes[:5] == [12, 97, 97, 49, 3], sizes
    ddb_calls.clear()
    path = billing(tenant, f"/delinquencies/invoices/{listed['locator']}/list")
    [record] = ok(call(api, "GET", path, admin_token))["items"]
    assert record["delinquencyState"] == "inGrace"
    assert (record["graceStartedAt"], record["graceEndAt"]) == ("2026-02-01T05:00:00.000Z", "2026-02-11T05:00:00.000Z")
    policies = sorted(r["referenceLocator"] for r in record["references"] if r["referenceType"] == "policy")
    assert len(set(policies)) == DELINQUENT_POLICIES
    assert [r["referenceLocator"] for r in record["references"] if r["referenceType"] == "invoice"] == [
        listed["locator"]
    ]
    for policy in policies:  # each marked delinquent, the delinquency listed under it
        assert "delinquent" in statuses(api, admin_token, tenant, {"locator": policy})
        listed_under = ok(call(api, "GET", billing(tenant, f"/delinquencies/policies/{policy}/list"), admin_token))
        assert [d["locator"] for d in listed_under["items"]] == [record["locator"]]
    [reminder] = events_of(api, admin_token, tenant, record["locator"])
    assert (reminder["name"], reminder["triggerTime"]) == ("Reminder", "2026-02-08T05:00:00.000Z")
    created = ok(
        call(api, "GET", billing(tenant, f"/jobs/delinquencies/invoices/{listed['locator']}/list"), admin_token)
    )["items"]
    assert [(j["jobStatus"], j["delinquencyLocators"]) for j in created] == [("finished", [record["locator"]])]
    [create] = events_of_type(api, admin_token, tenant, "billing.delinquency.create")
    assert sorted(create["data"]["policyLocators"]["items"]) == policies
    assert due.entry(system_ctx().for_tenant(tenant), due.DueKind.INVOICE_DUE, listed["locator"]) is None  # settled

    sizes.clear()
    ended = due.run_step(system_ctx().for_tenant(tenant), GRACE_END)

    assert not ended.result["failed"], ended.result
    assert ended.result["graceEnded"] == ["lapsed"]
    assert max(sizes) <= 100, sizes
    lapsed = ok(call(api, "GET", billing(tenant, f"/delinquencies/{record['locator']}"), admin_token))
    assert (lapsed["delinquencyState"], lapsed["lapseTransactionEffectiveDate"]) == (
        "lapseTransactionCreated",
        "2026-02-01T05:00:00.000Z",
    )
    lapses = {
        r["referenceLocator"]: r.get("transactionLocator")
        for r in lapsed["references"]
        if r["referenceType"] == "policy"
    }
    assert sorted(lapses) == policies and all(lapses.values()), lapses
    for policy, lapse in lapses.items():
        transaction = ok(call(api, "GET", f"/policy/{tenant}/transactions/{lapse}", admin_token))
        assert (transaction["transactionCategory"], transaction["transactionState"], transaction["effectiveTime"]) == (
            "cancellation",
            "issued",
            "2026-02-01T05:00:00.000Z",
        )
        assert "delinquent" not in statuses(api, admin_token, tenant, {"locator": policy})
    [event] = events_of_type(api, admin_token, tenant, "billing.delinquency.lapse")
    assert sorted(event["data"]["policyLocators"]["items"]) == policies
    jobs.drain()
    # as a lapse of one policy (tests/jobs/test_billing_delinquency.py): the whole term refunded from its start,
    # the month's invoice stays open (60 x 105.00 unpaid); the refunds, of one container and due time, are ONE
    # negative invoice settled into credit (DECISIONS "Billing"; one a policy before, each lapse billed and invoiced
    # by a job of its own when the lapses did not fit in one write), as those of lapses that fit in one write are
    invoices = invoices_of_account(api, admin_token, tenant, account)
    assert Counter((i["invoiceState"], Decimal(str(i["totalAmount"]))) for i in invoices) == {
        ("open", Decimal("6300.00")): 1,
        ("settled", Decimal("-6300.00")): 1,
    }
    [refund] = [i for i in invoices if i["invoiceState"] == "settled"]
    whole = ok(call(api, "GET", billing(tenant, f"/invoices/{refund['locator']}"), admin_token))
    assert len(whole["invoiceItems"]) == 2 * DELINQUENT_POLICIES  # each policy's premium and tax given back
    assert Counter(item["policyLocator"] for item in whole["invoiceItems"]) == {p: 2 for p in policies}
    assert {t for item in whole["invoiceItems"] for t in item["transactionLocators"]} == set(lapses.values())
    balance = ok(
        call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), admin_token)
    )["balance"]
    assert Decimal(str(balance)) == Decimal("6300.00")


def test_a_fleets_delinquency_cut_short_between_its_writes_is_finished_by_the_entrys_retry(
    api, admin_token, delinquent_fleet, monkeypatch
):
    """The second write of the policies' marks fails, and so does every write of marks after it in this run (409: the
    run's own prompt retries, MARKING_ATTEMPTS, fail too): the delinquency stands, in grace, 30 of its policies
    marked; the entry is still due and its retry (a day later) opens nothing more: it finds the delinquency by the
    invoice's references and marks the rest, then settles."""
    tenant, account = delinquent_fleet
    [listed] = invoices_of_account(api, admin_token, tenant, account)
    gateway = table.gateway()
    real, calls = gateway.transact, []

    def failing(scope, ops, *args, **kwargs):
        calls.append(len(ops))
        if len(calls) >= 3 and len(ops) > 40:  # the writes of marks from the second on (not the other entries')
            raise codes.CONCURRENT_MODIFICATION("a policy changed meanwhile")
        return real(scope, ops, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(gateway, "transact", failing)
        first = due.run_step(system_ctx().for_tenant(tenant), DUE).result

    assert first["alreadyDone"] == 1 and "delinquenciesOpened" not in first, first
    path = billing(tenant, f"/delinquencies/invoices/{listed['locator']}/list")
    [record] = ok(call(api, "GET", path, admin_token))["items"]
    policies = sorted(r["referenceLocator"] for r in record["references"] if r["referenceType"] == "policy")
    marked = [p for p in policies if "delinquent" in statuses(api, admin_token, tenant, {"locator": p})]
    assert record["delinquencyState"] == "inGrace" and 0 < len(marked) < DELINQUENT_POLICIES, len(marked)
    entry = due.entry(system_ctx().for_tenant(tenant), due.DueKind.INVOICE_DUE, listed["locator"])
    assert entry is not None and entry.attempts == 1

    retried = due.run_step(system_ctx().for_tenant(tenant), entry.due_at).result

    assert not retried["failed"] and retried["delinquenciesOpened"] == 1, retried
    assert [d["locator"] for d in ok(call(api, "GET", path, admin_token))["items"]] == [record["locator"]]
    for policy in policies:
        assert "delinquent" in statuses(api, admin_token, tenant, {"locator": policy})
    created = ok(
        call(api, "GET", billing(tenant, f"/jobs/delinquencies/invoices/{listed['locator']}/list"), admin_token)
    )["items"]
    assert [j["delinquencyLocators"] for j in created] == [[record["locator"]]]
    assert len(events_of_type(api, admin_token, tenant, "billing.delinquency.create")) == 1
    assert due.entry(system_ctx().for_tenant(tenant), due.DueKind.INVOICE_DUE, listed["locator"]) is None


@pytest.mark.parametrize("cut_short", [False, True])
def test_paying_a_fleets_invoice_in_its_grace_settles_the_delinquency_and_every_policy(
    api, admin_token, delinquent_fleet, monkeypatch, cut_short
):
    """The payment's write settles the delinquency of 60 policies (request.invalid before: every policy's mark in
    that write); the marks are removed right after it in writes of their own, and should that not get to the end
    (`cut_short`: it fails at once) the delinquency's grace end, put due at the payment, removes them."""
    tenant, account = delinquent_fleet
    [listed] = invoices_of_account(api, admin_token, tenant, account)
    assert not due.run_step(system_ctx().for_tenant(tenant), DUE).result["failed"]
    path = billing(tenant, f"/delinquencies/invoices/{listed['locator']}/list")
    [record] = ok(call(api, "GET", path, admin_token))["items"]
    policies = sorted(r["referenceLocator"] for r in record["references"] if r["referenceType"] == "policy")
    payment = ok(new_payment(api, admin_token, tenant, account, "Check", Decimal("6300.00")))["locator"]

    def failing(*args, **kwargs):
        raise codes.CONCURRENT_MODIFICATION("a policy changed meanwhile")

    with monkeypatch.context() as patched:
        if cut_short:
            patched.setattr(delinquency_service, "_unmark_in_steps", failing)
        posted = call(api, "PATCH", billing(tenant, f"/payments/{payment}/post"), admin_token)

    assert ok(posted)["paymentState"] == "posted"
    [settled] = ok(call(api, "GET", path, admin_token))["items"]
    assert settled["delinquencyState"] == "settled"
    still = [p for p in policies if "delinquent" in statuses(api, admin_token, tenant, {"locator": p})]
    assert len(still) == (DELINQUENT_POLICIES if cut_short else 0)

    ran = due.run_step(system_ctx().for_tenant(tenant), DUE + timedelta(days=1)).result

    assert not ran["failed"] and ran["graceEnded"] == ["settled"], ran
    assert [p for p in policies if "delinquent" in statuses(api, admin_token, tenant, {"locator": p})] == []
    assert events_of_type(api, admin_token, tenant, "billing.delinquency.lapse") == []


def fleet_policies(api, admin_token, tenant, invoice):
    """The delinquency of the invoice and its policies' locators, sorted."""
    [record] = ok(call(api, "GET", billing(tenant, f"/delinquencies/invoices/{invoice}/list"), admin_token))["items"]
    return record, sorted(r["referenceLocator"] for r in record["references"] if r["referenceType"] == "policy")


def delinquent_of(api, admin_token, tenant, policies):
    return [p for p in policies if "delinquent" in statuses(api, admin_token, tenant, {"locator": p})]


@pytest.mark.parametrize("cut_short", [False, True])
def test_a_reversal_that_re_opens_a_fleets_settled_delinquency_marks_its_policies_in_steps(
    api, admin_token, delinquent_fleet, monkeypatch, jobs, cut_short
):
    """60 policies delinquent, their invoice paid in full in the grace (settled, the marks removed), the payment
    reversed: the delinquency is in grace again (request.invalid before: every policy's mark in the reversal's one
    write), its 60 policies marked after that write in writes of their own behind the billing root, its grace end
    back at its time; should that not get to the end (`cut_short`), the grace end, put due at the reversal, marks
    the rest at the next due run and moves on to its time. At the grace end every policy lapses, exactly as an
    unpaid fleet's: one refund invoice of -6,300.00 (60 policies' refunds) into 6,300.00 of credit, the 6,300.00
    invoice open."""
    tenant, account = delinquent_fleet
    [listed] = invoices_of_account(api, admin_token, tenant, account)
    advance(api, admin_token, tenant, jobs, "2026-02-05T00:00:00Z")
    record, policies = fleet_policies(api, admin_token, tenant, listed["locator"])
    assert len(policies) == DELINQUENT_POLICIES and record["delinquencyState"] == "inGrace"
    payment = ok(new_payment(api, admin_token, tenant, account, "Check", Decimal("6300.00")))["locator"]
    assert ok(call(api, "PATCH", billing(tenant, f"/payments/{payment}/post"), admin_token))["paymentState"] == "posted"
    advance(api, admin_token, tenant, jobs, "2026-02-06T00:00:00Z")
    assert fleet_policies(api, admin_token, tenant, listed["locator"])[0]["delinquencyState"] == "settled"
    assert delinquent_of(api, admin_token, tenant, policies) == []
    sizes = largest_writes(monkeypatch)

    def failing(*args, **kwargs):
        raise codes.CONCURRENT_MODIFICATION("a policy changed meanwhile")

    with monkeypatch.context() as patched:
        if cut_short:
            patched.setattr(delinquency_service, "_marked_in_steps", failing)
        reversed_payment = call(api, "PATCH", billing(tenant, f"/payments/{payment}/reverse"), admin_token)

    assert ok(reversed_payment)["paymentState"] == "reversed"
    assert max(sizes) <= 100, sizes
    reopened, _ = fleet_policies(api, admin_token, tenant, listed["locator"])
    assert (reopened["locator"], reopened["delinquencyState"], reopened["graceEndAt"]) == (
        record["locator"],
        "inGrace",
        "2026-02-11T05:00:00.000Z",
    )
    assert sorted(event_types(api, admin_token, tenant, reversed_payment)) == [
        "billing.delinquency.delinquencyevent.activate",
        "billing.delinquency.update",
        "billing.invoice.unsettle",
        "billing.payment.reverse",
        *(["policy.status.update"] * (0 if cut_short else DELINQUENT_POLICIES)),
    ]
    grace_end = due.entry(system_ctx().for_tenant(tenant), due.DueKind.DELINQUENCY_GRACE_END, record["locator"])
    if cut_short:
        assert delinquent_of(api, admin_token, tenant, policies) == []
        assert grace_end is not None and grace_end.due_at == datetime(2026, 2, 6, tzinfo=timezone.utc)
        ran = due.run_step(system_ctx().for_tenant(tenant), grace_end.due_at).result
        assert not ran["failed"] and ran["graceEnded"] == ["marked"], ran
        grace_end = due.entry(system_ctx().for_tenant(tenant), due.DueKind.DELINQUENCY_GRACE_END, record["locator"])
    assert delinquent_of(api, admin_token, tenant, policies) == policies
    assert grace_end is not None and grace_end.due_at == GRACE_END
    [reminder] = events_of(api, admin_token, tenant, record["locator"])
    assert (reminder["delinquencyEventState"], reminder["triggerTime"]) == ("active", "2026-02-08T05:00:00.000Z")

    sizes.clear()
    advance(api, admin_token, tenant, jobs, "2026-02-11T05:00:00Z")

    assert max(sizes) <= 100, sizes
    lapsed, _ = fleet_policies(api, admin_token, tenant, listed["locator"])
    assert (lapsed["delinquencyState"], lapsed["lapseTransactionEffectiveDate"]) == (
        "lapseTransactionCreated",
        "2026-02-01T05:00:00.000Z",
    )
    lapses = [r.get("transactionLocator") for r in lapsed["references"] if r["referenceType"] == "policy"]
    assert len(lapses) == DELINQUENT_POLICIES and all(lapses)
    for policy in policies:
        assert statuses(api, admin_token, tenant, {"locator": policy}) == ["cancelled"]
    [event] = events_of_type(api, admin_token, tenant, "billing.delinquency.lapse")
    assert sorted(event["data"]["policyLocators"]["items"]) == policies
    invoices = invoices_of_account(api, admin_token, tenant, account)
    assert Counter(
        (i["invoiceState"], Decimal(str(i["totalAmount"])), Decimal(str(i["totalRemainingAmount"]))) for i in invoices
    ) == {
        ("open", Decimal("6300.00"), Decimal("6300.00")): 1,
        ("settled", Decimal("-6300.00"), Decimal("0")): 1,
    }
    balance = ok(
        call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), admin_token)
    )["balance"]
    assert Decimal(str(balance)) == Decimal("6300.00")


def test_a_partial_payment_between_a_fleets_marking_steps_leaves_the_rest_marked_in_the_same_run(
    api, admin_token, delinquent_fleet, monkeypatch
):
    """A payment of 105.00 posted between the first and second writes of the 60 policies' marks (it bumps the
    account's billing root, so the second write fails with 409): the run reads the roots, the delinquency and the
    policies again and marks the other 30 at once (before, its due entry waited a day, RETRY_AFTER, and the policies
    showed not delinquent meanwhile); the delinquency stays in grace, the invoice open with 6,195.00 to pay."""
    tenant, account = delinquent_fleet
    [listed] = invoices_of_account(api, admin_token, tenant, account)
    payment = ok(new_payment(api, admin_token, tenant, account, "Check", Decimal("105.00")))["locator"]
    gateway = table.gateway()
    real, calls, posted = gateway.transact, [], []

    def paying_between(scope, ops, *args, **kwargs):
        calls.append(len(ops))
        if len(calls) == 3 and not posted:  # the second write of marks: the payment commits just before it
            posted.append(call(api, "PATCH", billing(tenant, f"/payments/{payment}/post"), admin_token))
        return real(scope, ops, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(gateway, "transact", paying_between)
        step = due.run_step(system_ctx().for_tenant(tenant), DUE).result

    assert ok(posted[0])["paymentState"] == "posted"
    assert not step["failed"] and step["delinquenciesOpened"] == 1 and step["alreadyDone"] == 0, step
    assert max(calls) <= 100, calls
    record, policies = fleet_policies(api, admin_token, tenant, listed["locator"])
    assert record["delinquencyState"] == "inGrace" and len(policies) == DELINQUENT_POLICIES
    assert delinquent_of(api, admin_token, tenant, policies) == policies
    assert due.entry(system_ctx().for_tenant(tenant), due.DueKind.INVOICE_DUE, listed["locator"]) is None
    assert len(events_of_type(api, admin_token, tenant, "billing.delinquency.create")) == 1
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    assert (invoice["invoiceState"], Decimal(str(invoice["totalRemainingAmount"]))) == ("open", Decimal("6195.00"))


def application_records(tenant, account, invoice):
    return raw(tenant, account, f"APP#{invoice}#"), raw(
        tenant, account, f"{keys.BILLING_APPLICATION_PAGE_PREFIX}{invoice}#"
    )


def test_an_application_of_more_items_than_its_record_holds_keeps_its_amounts_in_pages(
    api, admin_token, fleet, monkeypatch
):
    """A payment of all but 50.00 of the 60-item invoice, its record holding at most 5 item amounts (made small
    here: APPLICATION_INLINE_AMOUNTS is 1,000) in pages of ~500 bytes: the application's record holds none of its
    amounts and names its pages' count, the pages hold each item's amount exactly (the last items paid in part), and
    the reversal (its record rewritten, the pages left as they are) gives each item back exactly what it took. The
    payment's answers are those of an unpaged application (nothing of the application is in them)."""
    monkeypatch.setattr(invoice_repository, "APPLICATION_INLINE_AMOUNTS", 5)
    monkeypatch.setattr(invoice_repository, "APPLICATION_PAGE_BYTES", 500)
    tenant, account = fleet
    run_generation(tenant)
    [listed] = invoices_of_account(api, admin_token, tenant, account)
    before = ok(call(api, "GET", billing(tenant, f"/invoices/{listed['locator']}"), admin_token))
    payment = ok(new_payment(api, admin_token, tenant, account, "Check", TOTAL - 50))["locator"]

    posted = ok(call(api, "PATCH", billing(tenant, f"/payments/{payment}/post"), admin_token))

    assert (posted["paymentState"], Decimal(str(posted["remainingAmount"]))) == ("posted", 0)
    [record], pages = application_records(tenant, account, listed["locator"])
    assert record["itemAmounts"] == {} and record["amountPages"] == len(pages) > 1, (record, len(pages))
    assert all(len(page["itemAmounts"]) <= 500 for page in pages)
    amounts = {k: Decimal(v) for page in pages for k, v in json.loads(page["itemAmounts"]).items()}
    items = before["invoiceItems"]
    # in order: the items paid in full, then the one paid in part (the last ones, unpaid, are not in it)
    assert list(amounts) == [i["locator"] for i in items][: len(amounts)] and len(amounts) < len(items)
    assert sum(amounts.values()) == TOTAL - 50
    paid = ok(call(api, "GET", billing(tenant, f"/invoices/{listed['locator']}"), admin_token))
    taken = {i["locator"]: Decimal(str(i["amount"])) - Decimal(str(i["remainingAmount"])) for i in paid["invoiceItems"]}
    assert {locator: amount for locator, amount in taken.items() if amount} == amounts
    assert Decimal(str(paid["totalRemainingAmount"])) == 50

    reversed_payment = ok(call(api, "PATCH", billing(tenant, f"/payments/{payment}/reverse"), admin_token))

    assert reversed_payment["paymentState"] == "reversed"
    [record], after = application_records(tenant, account, listed["locator"])
    assert (record["reversed"], record["itemAmounts"], record["amountPages"]) == (True, {}, len(pages))
    assert after == pages  # not rewritten
    reopened = ok(call(api, "GET", billing(tenant, f"/invoices/{listed['locator']}"), admin_token))
    assert (reopened["invoiceState"], Decimal(str(reopened["totalRemainingAmount"]))) == ("open", TOTAL)
    assert [(i["locator"], Decimal(str(i["remainingAmount"]))) for i in reopened["invoiceItems"]] == [
        (i["locator"], Decimal(str(i["amount"]))) for i in items
    ]


SMALL_FLEET = 8
"""Policies of the fleets below, their writes made small instead (unit_of_work.MAX_TRANSACTION_ITEMS and
MARKS_IN_PAYMENT patched): ~3 actions a policy beyond what a write of MAX_TRANSACTION_ITEMS holds."""
SMALL_WRITE = 20


@pytest.fixture
def small_fleet(api, admin_token, jobs, monkeypatch):
    """(tenant, account): 8 policies on one account of a tenant with the Standard delinquency plan, their first
    invoice (840.00) generated."""
    monkeypatch.setattr(invoice_repository, "INLINE_LOCATORS", 5)
    tenant = delinquency_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    for _ in range(SMALL_FLEET):
        issue(tenant, account)
    jobs.drain()
    run_generation(tenant)
    return tenant, account


def small_writes(monkeypatch):
    """From now on at most SMALL_WRITE actions to a write, MARKS_IN_PAYMENT policies in a payment's or reversal's."""
    monkeypatch.setattr(unit_of_work, "MAX_TRANSACTION_ITEMS", SMALL_WRITE)
    monkeypatch.setattr(delinquency_service, "MARKS_IN_PAYMENT", 2)


@pytest.mark.parametrize("path", ["one write", "in steps", "cut short"])
def test_a_reversal_that_opens_a_new_delinquency_for_a_fleet_marks_its_policies_in_steps(
    api, admin_token, small_fleet, monkeypatch, jobs, path
):
    """The fleet's invoice paid before its due time, the payment reversed after it: a new delinquency in grace from
    the reversal, of every policy, each marked delinquent and listing it, the reminder at its time, the grace end at
    its time and the same events as when all of it fits in the reversal's write (`one write`). Its writes made
    small (`in steps`: the policies' marks and references do not fit in the reversal's write; request.invalid
    before), the reversal's write opens the delinquency with its grace end due now and its policies are marked
    after it in writes of their own behind the billing root, then the grace end put at its time; cut short, the
    grace end due now marks the rest at the next due run (`marked`). At the grace end every policy lapses."""
    tenant, account = small_fleet
    [listed] = invoices_of_account(api, admin_token, tenant, account)
    advance(api, admin_token, tenant, jobs, "2026-01-25T00:00:00Z")
    total = Decimal(str(listed["totalAmount"]))
    payment = ok(new_payment(api, admin_token, tenant, account, "Check", total))["locator"]
    assert ok(call(api, "PATCH", billing(tenant, f"/payments/{payment}/post"), admin_token))["paymentState"] == "posted"
    advance(api, admin_token, tenant, jobs, "2026-02-03T12:00:00Z")
    path_of = billing(tenant, f"/delinquencies/invoices/{listed['locator']}/list")
    assert ok(call(api, "GET", path_of, admin_token))["items"] == []
    if path != "one write":
        small_writes(monkeypatch)
    sizes = largest_writes(monkeypatch)

    def failing(*args, **kwargs):
        raise codes.CONCURRENT_MODIFICATION("a policy changed meanwhile")

    with monkeypatch.context() as patched:
        if path == "cut short":
            patched.setattr(delinquency_service, "_marked_in_steps", failing)
        reversed_payment = call(api, "PATCH", billing(tenant, f"/payments/{payment}/reverse"), admin_token)

    assert ok(reversed_payment)["paymentState"] == "reversed"
    assert max(sizes) <= (100 if path == "one write" else SMALL_WRITE), sizes
    opened, policies = fleet_policies(api, admin_token, tenant, listed["locator"])
    assert len(policies) == SMALL_FLEET
    assert (opened["delinquencyState"], opened["graceStartedAt"], opened["graceEndAt"]) == (
        "inGrace",
        "2026-02-03T12:00:00.000Z",
        "2026-02-13T12:00:00.000Z",
    )
    assert [r["referenceLocator"] for r in opened["references"] if r["referenceType"] == "invoice"] == [
        listed["locator"]
    ]
    assert sorted(event_types(api, admin_token, tenant, reversed_payment)) == [
        "billing.delinquency.create",
        "billing.delinquency.delinquencyevent.create",
        "billing.invoice.unsettle",
        "billing.payment.reverse",
        *(["policy.status.update"] * (0 if path == "cut short" else SMALL_FLEET)),
    ]
    grace_end = due.entry(system_ctx().for_tenant(tenant), due.DueKind.DELINQUENCY_GRACE_END, opened["locator"])
    if path == "cut short":
        assert delinquent_of(api, admin_token, tenant, policies) == []
        assert grace_end is not None and grace_end.due_at == datetime(2026, 2, 3, 12, tzinfo=timezone.utc)
        ran = due.run_step(system_ctx().for_tenant(tenant), grace_end.due_at).result
        assert not ran["failed"] and ran["graceEnded"] == ["marked"], ran
        assert max(sizes) <= SMALL_WRITE, sizes
        grace_end = due.entry(system_ctx().for_tenant(tenant), due.DueKind.DELINQUENCY_GRACE_END, opened["locator"])
    assert grace_end is not None and grace_end.due_at == datetime(2026, 2, 13, 12, tzinfo=timezone.utc)
    assert delinquent_of(api, admin_token, tenant, policies) == policies
    for policy in policies:  # each lists it
        path_of = billing(tenant, f"/delinquencies/policies/{policy}/list")
        assert [d["locator"] for d in ok(call(api, "GET", path_of, admin_token))["items"]] == [opened["locator"]]
    [reminder] = events_of(api, admin_token, tenant, opened["locator"])
    assert (reminder["delinquencyEventState"], reminder["triggerTime"]) == ("active", "2026-02-10T12:00:00.000Z")

    monkeypatch.setattr(unit_of_work, "MAX_TRANSACTION_ITEMS", 100)  # the lapses as any fleet's
    advance(api, admin_token, tenant, jobs, "2026-02-13T12:00:00Z")

    lapsed, _ = fleet_policies(api, admin_token, tenant, listed["locator"])
    assert (lapsed["delinquencyState"], lapsed["lapseTransactionEffectiveDate"]) == (
        "lapseTransactionCreated",
        "2026-02-03T12:00:00.000Z",
    )
    for policy in policies:
        assert statuses(api, admin_token, tenant, {"locator": policy}) == ["cancelled"]
    [event] = events_of_type(api, admin_token, tenant, "billing.delinquency.lapse")
    assert sorted(event["data"]["policyLocators"]["items"]) == policies


def delinquency_records(tenant, account, delinquency):
    """The delinquency's record and its reference pages (every set), as stored."""
    [record] = raw(tenant, account, f"{delinquency_repository.DELINQUENCY_PREFIX}{delinquency}")
    return record, raw(tenant, account, f"{keys.BILLING_DELINQUENCY_PAGE_PREFIX}{delinquency}#")


def answered(api, admin_token, tenant, account, delinquency, policies, invoice):
    """The delinquency as `GET /delinquencies/{l}` answers it, asserted the same in every list that shows it (the
    account's, each policy's, the invoice's)."""
    found = ok(call(api, "GET", billing(tenant, f"/delinquencies/{delinquency}"), admin_token))
    lists = [f"/delinquencies/accounts/{account}/list", f"/delinquencies/invoices/{invoice}/list"]
    for path in lists + [f"/delinquencies/policies/{p}/list" for p in policies]:
        assert ok(call(api, "GET", billing(tenant, path), admin_token))["items"] == [found], path
    return found


def stored_references(record, pages):
    """The references as the record or its pages hold them, as the API answers them."""
    if "referencePages" not in record:
        return record["references"]
    entries = [entry for page in pages for entry in json.loads(page["references"])]
    return [
        {
            "locator": locator,
            "delinquencyLocator": record["locator"],
            "referenceLocator": referenced,
            "referenceType": kind,
            **({"transactionLocator": transaction} if transaction else {}),
        }
        for locator, kind, referenced, transaction in entries
    ]


@pytest.mark.parametrize("path", ["inline", "paged", "paged in steps"])
def test_a_fleets_delinquency_of_more_references_than_its_record_holds_keeps_them_in_pages(
    api, admin_token, small_fleet, monkeypatch, jobs, path
):
    """The 8 policies' delinquency (9 references: one a policy, one of the invoice) with at most 3 on its record
    (made small here: delinquency/repository.py INLINE_REFERENCES is 100) in pages of ~300 bytes: its record holds
    none and names its pages (`referencePages`), which hold each reference; opened, its policies marked, settled by a
    payment, re-opened by the payment's reversal (the record rewritten alone, the pages left as they are), lapsed at
    its grace end (a new set of pages naming each policy's lapse transaction, the old set deleted): every answer
    (`GET`, the account's, the invoice's and each policy's lists) shows every reference as an unpaged one's does.
    `inline` (the threshold not reached): stored as before, references on the record, no page. `paged in steps`:
    writes of 20 actions (the opening, the settlement's and the re-opening's marks in steps behind the billing
    root), the pages more than the record's write holds (PAGES_IN_WRITE 1: written ahead, the old ones deleted
    after the write)."""
    if path != "inline":
        monkeypatch.setattr(delinquency_repository, "INLINE_REFERENCES", 3)
    monkeypatch.setattr(delinquency_repository, "PAGE_BYTES", 300)
    tenant, account = small_fleet
    [listed] = invoices_of_account(api, admin_token, tenant, account)
    if path == "paged in steps":
        small_writes(monkeypatch)
        monkeypatch.setattr(delinquency_repository, "PAGES_IN_WRITE", 1)
    sizes = largest_writes(monkeypatch)

    advance(api, admin_token, tenant, jobs, "2026-02-01T06:00:00Z")

    record, policies = fleet_policies(api, admin_token, tenant, listed["locator"])
    assert max(sizes) <= (SMALL_WRITE if path == "paged in steps" else 100), sizes
    assert len(policies) == SMALL_FLEET and record["delinquencyState"] == "inGrace"
    assert delinquent_of(api, admin_token, tenant, policies) == policies
    opened = answered(api, admin_token, tenant, account, record["locator"], policies, listed["locator"])
    assert [r["referenceType"] for r in opened["references"]] == ["policy"] * SMALL_FLEET + ["invoice"]
    stored, pages = delinquency_records(tenant, account, record["locator"])
    assert stored_references(stored, pages) == opened["references"]
    if path == "inline":
        assert pages == [] and "referencePages" not in stored and len(stored["references"]) == SMALL_FLEET + 1
    else:
        assert stored["references"] == [] and stored["referencePages"]["count"] == len(pages) > 1, pages
        assert all(len(page["references"]) <= 300 for page in pages)
    [create] = events_of_type(api, admin_token, tenant, "billing.delinquency.create")
    assert sorted(create["data"]["policyLocators"]["items"]) == policies

    payment = ok(new_payment(api, admin_token, tenant, account, "Check", Decimal(str(listed["totalAmount"]))))
    posted = call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/post"), admin_token)
    assert ok(posted)["paymentState"] == "posted"
    advance(api, admin_token, tenant, jobs, "2026-02-03T00:00:00Z")  # a fleet's: the rest of the marks, if any

    settled = answered(api, admin_token, tenant, account, record["locator"], policies, listed["locator"])
    assert settled["delinquencyState"] == "settled" and settled["references"] == opened["references"]
    assert delinquent_of(api, admin_token, tenant, policies) == []
    assert delinquency_records(tenant, account, record["locator"])[1] == pages  # the record rewritten alone

    reversed_payment = call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/reverse"), admin_token)
    assert ok(reversed_payment)["paymentState"] == "reversed"
    advance(api, admin_token, tenant, jobs, "2026-02-04T00:00:00Z")

    reopened = answered(api, admin_token, tenant, account, record["locator"], policies, listed["locator"])
    assert (reopened["delinquencyState"], reopened["graceEndAt"]) == ("inGrace", "2026-02-11T05:00:00.000Z")
    assert reopened["references"] == opened["references"]
    assert delinquent_of(api, admin_token, tenant, policies) == policies
    assert delinquency_records(tenant, account, record["locator"])[1] == pages
    assert max(sizes) <= (SMALL_WRITE if path == "paged in steps" else 100), sizes

    monkeypatch.setattr(unit_of_work, "MAX_TRANSACTION_ITEMS", 100)  # the lapses as any fleet's
    advance(api, admin_token, tenant, jobs, "2026-02-11T05:00:00Z")

    lapsed = answered(api, admin_token, tenant, account, record["locator"], policies, listed["locator"])
    assert (lapsed["delinquencyState"], lapsed["lapseTransactionEffectiveDate"]) == (
        "lapseTransactionCreated",
        "2026-02-01T05:00:00.000Z",
    )
    lapses = {r["referenceLocator"]: r.get("transactionLocator") for r in lapsed["references"]}
    assert [{**r, "transactionLocator": None} for r in lapsed["references"]] == [
        {**r, "transactionLocator": None} for r in opened["references"]
    ]
    assert all(lapses[p] for p in policies) and lapses[listed["locator"]] is None, lapses
    for policy in policies:
        assert statuses(api, admin_token, tenant, {"locator": policy}) == ["cancelled"]
        transaction = ok(call(api, "GET", f"/policy/{tenant}/transactions/{lapses[policy]}", admin_token))
        assert (transaction["policyLocator"], transaction["transactionState"]) == (policy, "issued")
    stored, now = delinquency_records(tenant, account, record["locator"])
    assert stored_references(stored, now) == lapsed["references"]
    if path != "inline":  # a new set, the old one deleted
        assert stored["referencePages"]["count"] == len(now) and not {p["SK"] for p in now} & {p["SK"] for p in pages}
    [event] = events_of_type(api, admin_token, tenant, "billing.delinquency.lapse")
    assert sorted(event["data"]["policyLocators"]["items"]) == policies


def write_off_records(tenant, account, write_off):
    return raw(tenant, account, f"{keys.BILLING_WRITEOFF_PREFIX}{write_off}"), raw(
        tenant, account, f"{keys.BILLING_WRITEOFF_PAGE_PREFIX}{write_off}#"
    )


def test_a_write_off_of_more_items_than_its_record_holds_keeps_its_amounts_in_pages(
    api, admin_token, fleet, monkeypatch
):
    """The 60-item invoice written off whole, a write-off's record holding at most 5 item amounts (made small here:
    writeoffs/repository.py INLINE_AMOUNTS is 1,000) in pages of ~500 bytes: its record holds none of them (its
    allocation its total) and names its pages' count, the pages hold each item's amount exactly; a reversal of part
    of it and then of the rest (the record rewritten alone, the pages left as they are) give each item back exactly
    what it took, the last items first; its answers, its list's and the invoice's credits are those of an unpaged
    write-off."""
    monkeypatch.setattr(write_off_repository, "INLINE_AMOUNTS", 5)
    monkeypatch.setattr(write_off_repository, "PAGE_BYTES", 500)
    tenant, account = fleet
    run_generation(tenant)
    [listed] = invoices_of_account(api, admin_token, tenant, account)
    items = ok(call(api, "GET", billing(tenant, f"/invoices/{listed['locator']}"), admin_token))["invoiceItems"]

    made = ok(call(api, "PATCH", billing(tenant, f"/invoices/{listed['locator']}/writeOff"), admin_token))

    assert (made["writeOffState"], Decimal(str(made["amount"])), made["reversedAmount"]) == ("distributed", TOTAL, 0)
    [record], pages = write_off_records(tenant, account, made["locator"])
    [allocation] = record["allocations"]
    assert (allocation["itemAmounts"], Decimal(str(allocation["total"]))) == ({}, TOTAL)
    assert record["amountPages"] == len(pages) > 1 and all(len(p["itemAmounts"]) <= 500 for p in pages)
    entries = [entry for page in pages for entry in json.loads(page["itemAmounts"])]
    assert [(invoice, item, Decimal(amount)) for invoice, item, amount in entries] == [
        (listed["locator"], i["locator"], Decimal(str(i["amount"]))) for i in items
    ]
    assert ok(call(api, "GET", billing(tenant, f"/writeOffs/{made['locator']}"), admin_token)) == made
    listed_off = ok(call(api, "GET", billing(tenant, f"/writeOffs/list?accountLocator={account}"), admin_token))
    assert listed_off["items"] == [made]
    credits_path = billing(tenant, f"/invoices/{listed['locator']}/credits/list?includeReversed=true")
    [credit] = ok(call(api, "GET", credits_path, admin_token))["items"]
    assert (credit["creditState"], Decimal(str(credit["amount"]))) == ("distributed", TOTAL)

    reverse = billing(tenant, f"/writeOffs/{made['locator']}/reverse")
    part = ok(call(api, "PATCH", reverse, admin_token, {"amount": Decimal("150.00")}))

    assert (part["writeOffState"], Decimal(str(part["reversedAmount"]))) == ("distributed", Decimal("150.00"))
    [record], after = write_off_records(tenant, account, made["locator"])
    assert (record["allocations"][0]["itemAmounts"], record["amountPages"], after) == ({}, len(pages), pages)
    assert record["allocations"][0].get("reversedItemAmounts", {}) == {}  # what it gave back: its reversedAmount
    now = ok(call(api, "GET", billing(tenant, f"/invoices/{listed['locator']}"), admin_token))
    reopened = [(i["locator"], Decimal(str(i["remainingAmount"]))) for i in now["invoiceItems"]]
    # the last items first: the last two premiums' tax and the last premium in full (110.00), 40.00 of the one before
    expected = [(i["locator"], Decimal(0)) for i in items]
    for back, amount in ((1, "5.00"), (2, "100.00"), (3, "5.00"), (4, "40.00")):
        expected[-back] = (items[-back]["locator"], Decimal(amount))
    assert [i["chargeType"] for i in items[-4:]] == ["premium", "tax", "premium", "tax"]
    assert reopened == expected
    [credit] = ok(call(api, "GET", credits_path, admin_token))["items"]
    assert Decimal(str(credit["amount"])) == TOTAL - 150

    rest = ok(call(api, "PATCH", reverse, admin_token, {}))

    assert (rest["writeOffState"], Decimal(str(rest["reversedAmount"]))) == ("reversed", TOTAL)
    assert write_off_records(tenant, account, made["locator"])[1] == pages
    whole = ok(call(api, "GET", billing(tenant, f"/invoices/{listed['locator']}"), admin_token))
    assert (whole["invoiceState"], Decimal(str(whole["totalRemainingAmount"]))) == ("open", TOTAL)
    assert [(i["locator"], Decimal(str(i["remainingAmount"]))) for i in whole["invoiceItems"]] == [
        (i["locator"], Decimal(str(i["amount"]))) for i in items
    ]
    [credit] = ok(call(api, "GET", credits_path, admin_token))["items"]
    assert (credit["creditState"], Decimal(str(credit["amount"]))) == ("reversed", TOTAL)
