"""`X-Idempotency-Key` on the creates whose answer is lost after their commit (issue 31): the guard written in the
create's own transaction keeps the created record's locator (`@endpoint(creates=..., replay=...)`), so the retry
with the same key answers the record as committed, never 409 in progress for good, and creates nothing again.
Also a disbursement's validate and approve, which a client retries like the other state moves, and a policy's
change, whose record (a transaction) is fetched by a path of its own."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from tests.api.billing.support import billed_policy, billing, billing_tenant, invoices_of_account, posted_payment
from tests.api.quotes.support import auto, quotes
from tests.api.transactions.support import AUGUST, params, policy_path
from tests.simulation.support import answers_lost
from tests.support.api import assert_error, call, event_types, ok

PERSON = {
    "type": "PersonAccount",
    "data": {
        "firstName": "Ada",
        "lastName": "Lovelace",
        "email": "ada@example.com",
        "address": {"line1": "12 St James's Square", "city": "London", "postcode": "12345"},
    },
}


def _created_once(
    api: Any, token: str, tenant: str, method: str, path: str, body: Any, key: str, fetch: str
) -> dict[str, Any]:
    """`body` sent to `path` with its answer lost after the commit, then again with the same key: the retry
    answers the record created (as `fetch` + its locator reads it), the lost attempt recorded the record's events
    and the retry none; a third send answers the retry's answer, kept."""
    headers = {"X-Idempotency-Key": key}
    with answers_lost():
        lost = call(api, method, path, token, body, headers=headers)
    assert_error(lost, 503, "service.unavailable")

    retried = call(api, method, path, token, body, headers=headers)

    answer = ok(retried)
    assert answer == ok(call(api, "GET", f"{fetch}/{answer['locator']}", token))
    assert event_types(api, token, tenant, lost) != [] and event_types(api, token, tenant, retried) == []
    again = call(api, method, path, token, body, headers=headers)
    assert (again.status_code, again.body) == (200, retried.body)
    return answer


def test_an_account_and_a_quote_whose_answers_were_lost_answer_the_records_created_once(api, admin_token):
    tenant = billing_tenant(api, admin_token)
    accounts = f"/policy/{tenant}/accounts"

    account = _created_once(api, admin_token, tenant, "POST", accounts, PERSON, "account-lost", accounts)
    quote = _created_once(
        api, admin_token, tenant, "POST", quotes(tenant), auto(account["locator"]), "quote-lost", quotes(tenant)
    )

    listed = ok(call(api, "GET", f"{accounts}/list?count=100", admin_token))["items"]
    assert [item["locator"] for item in listed] == [account["locator"]]
    assert quote["accountLocator"] == account["locator"]
    assert [
        item["locator"] for item in ok(call(api, "GET", quotes(tenant, "/list?count=100"), admin_token))["items"]
    ] == [quote["locator"]]


def test_a_payment_and_a_write_off_whose_answers_were_lost_are_made_once(api, admin_token, jobs):
    tenant = billing_tenant(api, admin_token, "FullPay")
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    body = {"accountLocator": account, "type": "Check", "amount": Decimal("40.00"), "data": {}, "targets": []}

    payment = _created_once(
        api,
        admin_token,
        tenant,
        "POST",
        billing(tenant, "/payments"),
        body,
        "payment-lost",
        billing(tenant, "/payments"),
    )
    written = _created_once(
        api,
        admin_token,
        tenant,
        "POST",
        billing(tenant, "/writeOffs"),
        {
            "accountLocator": account,
            "targets": [
                {"containerType": "invoice", "containerLocator": invoice["locator"], "amount": Decimal("10.00")}
            ],
        },
        "write-off-lost",
        billing(tenant, "/writeOffs"),
    )

    assert payment["paymentState"] == "draft"
    assert [
        p["locator"]
        for p in ok(
            call(api, "GET", billing(tenant, f"/payments/list?accountLocator={account}&count=100"), admin_token)
        )["items"]
    ] == [payment["locator"]]
    assert (written["writeOffState"], written["amount"]) == ("distributed", Decimal("10.00"))
    [after] = invoices_of_account(api, admin_token, tenant, account)
    assert Decimal(str(after["totalRemainingAmount"])) == Decimal(str(invoice["totalRemainingAmount"])) - 10


def test_credit_moves_whose_answers_were_lost_are_made_once(api, admin_token, jobs):
    """75.00 in credit (1,300.00 paid on an invoice of 1,225.00): a distribution of 20.00 and a disbursement of
    30.00 created, the disbursement validated and approved, each answer lost once."""
    tenant = billing_tenant(api, admin_token, "FullPay")
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    posted_payment(api, admin_token, tenant, account, 1300, invoice=invoice["locator"], payment_type="Check")
    distributions, disbursements = billing(tenant, "/creditDistributions"), billing(tenant, "/disbursements")

    distribution = _created_once(
        api,
        admin_token,
        tenant,
        "POST",
        distributions,
        {
            "accountLocator": account,
            "amount": 20,
            "sources": [],
            "targets": [{"containerType": "account", "containerLocator": account}],
        },
        "distribution-lost",
        distributions,
    )
    refund = _created_once(
        api,
        admin_token,
        tenant,
        "POST",
        disbursements,
        {"accountLocator": account, "type": "Refund", "amount": 30, "data": {}, "sources": []},
        "refund-lost",
        disbursements,
    )
    for step, state in (("validate", "validated"), ("approve", "approved")):
        path = f"{disbursements}/{refund['locator']}/{step}"
        with answers_lost():
            assert_error(
                call(api, "PATCH", path, admin_token, headers={"X-Idempotency-Key": step}), 503, "service.unavailable"
            )
        assert (
            ok(call(api, "PATCH", path, admin_token, headers={"X-Idempotency-Key": step}))["disbursementState"] == state
        )

    assert distribution["creditDistributionState"] == "draft"
    assert [
        d["locator"]
        for d in ok(call(api, "GET", f"{distributions}/list?accountLocator={account}&count=100", admin_token))["items"]
    ] == [distribution["locator"]]
    assert [
        d["locator"]
        for d in ok(call(api, "GET", f"{disbursements}/list?accountLocator={account}&count=100", admin_token))["items"]
    ] == [refund["locator"]]
    executed = ok(call(api, "PATCH", f"{disbursements}/{refund['locator']}/execute", admin_token))
    assert executed["disbursementState"] == "executed"
    balance = ok(
        call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), admin_token)
    )["balance"]
    assert Decimal(str(balance)) == Decimal("45.00")


def test_a_policy_change_whose_answer_was_lost_answers_the_transaction_created_once(api, admin_token, jobs):
    tenant = billing_tenant(api, admin_token)
    _, policy = billed_policy(api, admin_token, tenant, jobs)
    path = policy_path(tenant, policy["locator"], "/change")

    change = _created_once(
        api, admin_token, tenant, "PATCH", path, [params(AUGUST)], "change-lost", f"/policy/{tenant}/transactions"
    )

    assert (change["transactionState"], change["policyLocator"]) == ("draft", policy["locator"])
