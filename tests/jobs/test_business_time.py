"""Business time on a test-clock tenant (DECISIONS.md "Test clocks"): every event, and every time a record
or job of the tenant keeps, reads the tenant's clock (the due time of the work that made it), never the real
time of the advance that ran it.

A year of billing on the billing test configuration (tests/api/billing/support.py) with the Monthly plan
autopaying 2 days before each due time and the auto-renewal plan Auto (create 30 days before the term end,
accept 20, issue 10): one policy autopaid monthly and renewed; one on FullPay with the delinquency plan
Lenient, unpaid: delinquent at its due time, its reminder 5 days before the grace end, lapsed at the grace
end (30 days). The clock starts at the real time of the test, 2026-01-15T09:30Z; the real time of the
advance is WALL, which no business moment equals.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

from chalicelib.core.clock import isoformat
from tests.api.billing.support import billed_policy, billing, billing_model, invoices_of_account
from tests.api.transactions.support import policy_path
from tests.jobs.support import PLANS
from tests.support.api import call, ok
from tests.support.configs import quotes_tenant

WALL = datetime(2026, 1, 15, 10, 7, 41, 123000, tzinfo=timezone.utc)
CLOCK_START, TO = "2026-01-15T09:30:00.000Z", "2027-02-02T00:00:00.000Z"
FULL_PAY = {"installmentPreferences": {"installmentPlanName": "FullPay", "installmentWeights": []}}


def sandbox(api, token) -> str:
    model = billing_model()
    model["installmentPlans"]["Monthly"]["autopayLeadDays"] = 2
    model["autoRenewalPlans"] = {"Auto": PLANS["Auto"]}
    model["transactionTypes"] = {"AnnualRenewal": {"category": "renewal"}}
    return quotes_tenant(api, token, model, test_clock=True)


def stream(api, token, tenant) -> list[dict[str, Any]]:
    """The tenant's whole event stream, page after page."""
    events: list[dict[str, Any]] = []
    query = "?pageSize=100"
    while True:
        page = ok(call(api, "GET", f"/event/{tenant}/events/list{query}", token))
        if not page["events"]:
            return events
        events += page["events"]
        query = f"?pageSize=100&pagingToken={page['pagingToken']}"


def times_in(record: Any) -> Iterator[str]:
    """Every datetime a record shows (its fields named ...At or ...Time, nested records' too)."""
    if isinstance(record, dict):
        for name, value in record.items():
            if isinstance(value, str) and (name.endswith("At") or name.endswith("Time")):
                yield value
            else:
                yield from times_in(value)
    elif isinstance(record, list):
        for item in record:
            yield from times_in(item)


def get(api, token, tenant, suffix):
    return ok(call(api, "GET", billing(tenant, suffix), token))


def test_a_year_of_billing_stamps_every_event_record_and_job_with_business_time(api, admin_token, jobs, clock):
    tenant = sandbox(api, admin_token)
    paying, renewed = billed_policy(api, admin_token, tenant, jobs, autoRenewalPlanName="Auto")
    unpaid, lapsed = billed_policy(api, admin_token, tenant, jobs, preferences=FULL_PAY, delinquencyPlanName="Lenient")
    clock.set(WALL)
    ok(call(api, "POST", f"/clock/{tenant}/advance", admin_token, {"to": TO}))
    jobs.drain()

    invoices = {i["locator"]: i for a in (paying, unpaid) for i in invoices_of_account(api, admin_token, tenant, a)}
    payments = {
        p["locator"]: p
        for p in get(api, admin_token, tenant, f"/payments/list?accountLocator={paying}&count=100")["items"]
    }
    [delinquency] = get(api, admin_token, tenant, f"/delinquencies/accounts/{unpaid}/list")["items"]
    [reminder] = get(api, admin_token, tenant, f"/delinquencies/{delinquency['locator']}/events/list")["items"]
    transactions = {
        t["locator"]: t
        for p in (renewed, lapsed)
        for t in ok(
            call(api, "GET", policy_path(tenant, p["locator"], "/issuedTransactions/list?count=100"), admin_token)
        )["items"]
    }
    renewal = next(t for t in transactions.values() if t["transactionCategory"] == "renewal")
    lapse = next(t for t in transactions.values() if t["transactionCategory"] == "cancellation")
    # where each event must stand: the moment of the record it is about
    expected = {
        "billing.invoice.generate": lambda d: invoices[d["invoiceLocator"]]["generatedTime"],
        "billing.invoice.autopay": lambda d: invoices[d["invoiceLocator"]]["autopayTime"],
        "billing.invoice.settle": lambda d: invoices[d["invoiceLocator"]]["settledTime"],
        "billing.payment.create": lambda d: payments[d["paymentLocator"]]["createdAt"],
        "billing.payment.validate": lambda d: payments[d["paymentLocator"]]["postedAt"],
        "billing.payment.post": lambda d: payments[d["paymentLocator"]]["postedAt"],
        "billing.delinquency.create": lambda d: delinquency["graceStartedAt"],
        "billing.delinquency.delinquencyevent.create": lambda d: delinquency["graceStartedAt"],
        "billing.delinquency.delinquencyevent.trigger": lambda d: reminder["triggeredAt"],
        "billing.delinquency.lapse": lambda d: delinquency["graceEndAt"],
        "policy.renewal.create": lambda d: renewal["createdAt"],
        "policy.renewal.accept": lambda d: renewal["acceptedTime"],
        "policy.renewal.issue": lambda d: renewal["issuedTime"],
        "policy.cancellation.issue": lambda d: lapse["issuedTime"],
        "clock.advance.finish": lambda d: TO,
    }

    events = stream(api, admin_token, tenant)
    ran = [e for e in events if e["timestamp"] > CLOCK_START]  # what the advance did
    assert {e["type"] for e in ran} >= set(expected) | {"policy.status.update", "billing.installmentlattice.create"}
    assert [(e["type"], e["timestamp"]) for e in ran if e["type"] in expected] == [
        (e["type"], expected[e["type"]](e["data"])) for e in ran if e["type"] in expected
    ]
    assert [e["timestamp"] for e in events] == sorted(e["timestamp"] for e in events)  # in business order
    assert {e["timestamp"] for e in events} <= {CLOCK_START, TO} | {
        moment
        for record in (*invoices.values(), *payments.values(), delinquency, reminder, renewal, lapse)
        for moment in times_in(record)
    } | {renewed["startTime"]}
    assert (delinquency["graceStartedAt"], delinquency["graceEndAt"], renewal["issuedTime"]) == (
        "2026-02-01T05:00:00.000Z",
        "2026-03-03T05:00:00.000Z",
        "2027-01-22T05:00:00.000Z",
    )
    # the billing jobs of the lapse and the renewal ran after the advance's step, at the time of their issue
    assert [e["timestamp"] for e in ran if e["type"] == "billing.installmentlattice.create"] == [
        lapse["issuedTime"],
        renewal["issuedTime"],
    ]
    assert max(i["generatedTime"] for i in invoices.values()) == "2027-01-22T05:00:00.000Z"  # not the target
    # twelve months invoiced and autopaid, the lapse's refund and the renewed term's first month invoiced
    assert (len(payments), [e["type"] for e in ran].count("billing.invoice.generate")) == (12, 14)

    # the billing jobs and records keep business time too: nothing anywhere reads the real time of the advance
    jobs_of = [
        get(api, admin_token, tenant, f"/jobs/invoices/accounts/{a}/list?count=100")["items"] for a in (paying, unpaid)
    ]
    jobs_of.append(get(api, admin_token, tenant, f"/jobs/delinquencies/{delinquency['locator']}/list")["items"])
    jobs_of.append(get(api, admin_token, tenant, f"/jobs/delinquencies/{delinquency['locator']}/events/list")["items"])
    shown = [*events, *invoices.values(), *payments.values(), delinquency, reminder, *transactions.values(), *jobs_of]
    assert isoformat(WALL) not in set(times_in(shown)) | {e["timestamp"] for e in events}
    runs = [run for run in jobs_of[0] if run["generateTime"] > CLOCK_START]
    assert runs and all(run["createdAt"] == run["completedAt"] == run["generateTime"] for run in runs)
