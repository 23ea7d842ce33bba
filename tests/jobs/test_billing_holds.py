"""Billing holds on test-clock tenants (the configuration of test_billing_delinquency.py): an active
delinquency hold pauses a delinquency (its reminder cancelled, `delinquencyHeld`; no lapse at the grace
end) until released, when the lapse follows at once; an active invoicing hold stops the account's invoice
generation (early invoicing only with `ignoreHolds`) until released, when what it kept back is invoiced.
A hold moves only from the states its move allows; another tenant's hold or account is not found."""

from __future__ import annotations

from tests.api.billing.delinquency_support import (
    FEB_DUE,
    delinquencies_of_account,
    delinquency_tenant,
    event_jobs,
    events_of,
    hold,
)
from tests.api.billing.support import billed_policy, billing, invoices_of_account
from tests.api.quotes.support import new_account
from tests.support.api import assert_error as error
from tests.support.api import call, event_types, ok
from tests.support.clock import advance


def test_a_delinquency_hold_pauses_the_lapse_until_it_is_released(api, admin_token, jobs):
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-02-02T00:00:00Z")
    [opened] = delinquencies_of_account(api, admin_token, tenant, account)

    held = hold(api, admin_token, tenant, account, "delinquency")
    assert (held["holdState"], held["targetType"], held["accountLocator"]) == ("active", "delinquency", account)
    [reminder] = events_of(api, admin_token, tenant, opened["locator"])
    assert reminder["delinquencyEventState"] == "cancelled"
    assert [
        (j["cancelled"], j["cancellationType"]) for j in event_jobs(api, admin_token, tenant, opened["locator"])
    ] == [(True, "delinquencyHeld")]

    advance(api, admin_token, tenant, jobs, "2026-02-20T00:00:00Z")  # past the grace end of 2026-02-11
    [waiting] = delinquencies_of_account(api, admin_token, tenant, account)
    assert waiting["delinquencyState"] == "inGrace"
    grace = ok(call(api, "GET", billing(tenant, f"/jobs/delinquencies/{opened['locator']}/list"), admin_token))
    assert [j["outcome"] for j in grace["items"]] == ["held"]
    issued = ok(
        call(api, "GET", f"/policy/{tenant}/policies/{policy['locator']}/issuedTransactions/list", admin_token)
    )["items"]
    assert [t["transactionCategory"] for t in issued] == ["issuance"]

    released = call(api, "PATCH", billing(tenant, f"/holds/{held['locator']}/release"), admin_token)
    assert ok(released)["holdState"] == "released"
    assert sorted(event_types(api, admin_token, tenant, released)) == [
        "billing.delinquency.delinquencyevent.activate",
        "billing.hold.release",
    ]
    advance(api, admin_token, tenant, jobs, "2026-02-20T01:00:00Z")
    [reminder] = events_of(api, admin_token, tenant, opened["locator"])  # its time passed in the hold: now
    assert (reminder["delinquencyEventState"], reminder["triggeredAt"]) == ("triggered", "2026-02-20T00:00:00.000Z")
    [lapsed] = delinquencies_of_account(api, admin_token, tenant, account)
    assert (lapsed["delinquencyState"], lapsed["lapseTransactionEffectiveDate"]) == ("lapseTransactionCreated", FEB_DUE)
    grace = ok(call(api, "GET", billing(tenant, f"/jobs/delinquencies/{opened['locator']}/list"), admin_token))
    assert [j["outcome"] for j in grace["items"]] == ["held", "lapsed"]
    assert ok(call(api, "GET", f"/policy/{tenant}/policies/{policy['locator']}", admin_token))["statuses"] == [
        "cancelled"
    ]


def test_an_invoicing_hold_stops_invoice_generation_until_released(api, admin_token, jobs):
    tenant = delinquency_tenant(api, admin_token, default_plan=None)
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    held = hold(api, admin_token, tenant, account, "invoicing")
    advance(api, admin_token, tenant, jobs, "2026-03-20T00:00:00Z")  # February's and March's generate times
    assert invoices_of_account(api, admin_token, tenant, account) == []

    early = {
        "ignoreHolds": False,
        "installmentLocators": [],
        "accountLocator": account,
        "invoiceThroughTime": "2026-05-01T04:00:00Z",
    }
    job = ok(call(api, "POST", billing(tenant, "/invoices/earlyInvoicing"), admin_token, early))
    jobs.drain()
    ran = ok(call(api, "GET", billing(tenant, f"/jobs/invoicing/{job['jobLocator']}"), admin_token))
    assert (ran["jobStatus"], ran["invoiceLocators"]) == ("finished", [])
    assert invoices_of_account(api, admin_token, tenant, account) == []

    ok(call(api, "PATCH", billing(tenant, f"/holds/{held['locator']}/release"), admin_token))
    advance(api, admin_token, tenant, jobs, "2026-03-20T00:15:00Z")
    invoices = invoices_of_account(api, admin_token, tenant, account)
    assert [i["dueTime"] for i in invoices] == ["2026-02-01T05:00:00.000Z", "2026-03-01T05:00:00.000Z"]
    assert [i["generatedTime"] for i in invoices] == ["2026-03-20T00:00:00.000Z"] * 2

    hold(api, admin_token, tenant, account, "invoicing")
    job = ok(
        call(api, "POST", billing(tenant, "/invoices/earlyInvoicing"), admin_token, {**early, "ignoreHolds": True})
    )
    jobs.drain()
    ran = ok(call(api, "GET", billing(tenant, f"/jobs/invoicing/{job['jobLocator']}"), admin_token))
    assert len(ran["invoiceLocators"]) == 1  # April's (starting before May 1st), held or not
    assert [i["dueTime"] for i in invoices_of_account(api, admin_token, tenant, account)][2:] == [
        "2026-04-01T04:00:00.000Z"
    ]


def test_a_hold_moves_only_as_its_state_allows_and_never_across_tenants(api, admin_token, jobs):
    tenant = delinquency_tenant(api, admin_token, default_plan=None)
    other = delinquency_tenant(api, admin_token, default_plan=None)
    account = new_account(api, admin_token, tenant)
    foreign_account = new_account(api, admin_token, other)
    created = call(
        api, "POST", billing(tenant, "/holds"), admin_token, {"accountLocator": account, "targetType": "delinquency"}
    )
    draft = ok(created)
    assert (draft["holdState"], draft["targetType"]) == ("draft", "delinquency")
    assert event_types(api, admin_token, tenant, created) == ["billing.hold.create"]
    changed = ok(
        call(api, "PATCH", billing(tenant, f"/holds/{draft['locator']}"), admin_token, {"targetType": "invoicing"})
    )
    assert changed["targetType"] == "invoicing"
    validated = ok(call(api, "PATCH", billing(tenant, f"/holds/{draft['locator']}/validate"), admin_token))
    assert (validated["holdState"], validated["validationResult"]) == (
        "validated",
        {"success": True, "validationItems": []},
    )
    error(
        call(api, "PATCH", billing(tenant, f"/holds/{draft['locator']}"), admin_token, {"targetType": "delinquency"}),
        409,
        "hold.invalid_state",
    )
    reset = ok(call(api, "PATCH", billing(tenant, f"/holds/{draft['locator']}/reset"), admin_token))
    assert reset["holdState"] == "draft"
    active = ok(call(api, "PATCH", billing(tenant, f"/holds/{draft['locator']}/activate"), admin_token))
    assert active["holdState"] == "active"
    error(
        call(api, "PATCH", billing(tenant, f"/holds/{draft['locator']}/discard"), admin_token),
        409,
        "hold.invalid_state",
    )
    ok(call(api, "PATCH", billing(tenant, f"/holds/{draft['locator']}/release"), admin_token))
    again = error(
        call(api, "PATCH", billing(tenant, f"/holds/{draft['locator']}/release"), admin_token),
        409,
        "hold.invalid_state",
    )
    assert "released" in again["message"]
    fetched = ok(call(api, "GET", billing(tenant, f"/holds/{draft['locator']}"), admin_token))
    assert (fetched["holdState"], fetched["updatedAt"]) == ("released", active["updatedAt"])

    discarded = ok(
        call(
            api, "POST", billing(tenant, "/holds"), admin_token, {"accountLocator": account, "targetType": "invoicing"}
        )
    )
    ok(call(api, "PATCH", billing(tenant, f"/holds/{discarded['locator']}/discard"), admin_token))
    listed = ok(call(api, "GET", billing(tenant, f"/holds/accounts/{account}/list"), admin_token))["items"]
    assert [(h["locator"], h["holdState"]) for h in listed] == [
        (draft["locator"], "released"),
        (discarded["locator"], "discarded"),
    ]
    only = ok(call(api, "GET", billing(tenant, f"/holds/accounts/{account}/list?state=discarded"), admin_token))
    assert [h["locator"] for h in only["items"]] == [discarded["locator"]]

    # another tenant's account and holds are not found, and nothing is created or moved
    error(
        call(
            api,
            "POST",
            billing(tenant, "/holds"),
            admin_token,
            {"accountLocator": foreign_account, "targetType": "invoicing"},
        ),
        404,
        "account.not_found",
    )
    foreign = ok(
        call(
            api,
            "POST",
            billing(other, "/holds"),
            admin_token,
            {"accountLocator": foreign_account, "targetType": "delinquency"},
        )
    )
    error(
        call(api, "PATCH", billing(tenant, f"/holds/{foreign['locator']}/activate"), admin_token), 404, "hold.not_found"
    )
    assert ok(call(api, "GET", billing(other, f"/holds/{foreign['locator']}"), admin_token))["holdState"] == "draft"
    assert len(ok(call(api, "GET", billing(tenant, f"/holds/accounts/{account}/list"), admin_token))["items"]) == 2
    error(
        call(api, "POST", billing(tenant, "/holds"), admin_token, {"accountLocator": account, "targetType": "autopay"}),
        400,
        "request.invalid",
    )
