"""`X-Idempotency-Key` on the state moves a client retries most (DECISIONS.md "Idempotency"; issue 31): a quote's
and a transaction's accept and issue, a payment's post and reverse. A replay answers the first answer without
moving anything again, and where that answer was lost after the move committed (a fault between the commit and
the answer's save), the replay answers the record as the committed move left it, never 409 in progress."""

from __future__ import annotations

from decimal import Decimal

from tests.api.billing.support import billed_policy, billing, billing_tenant
from tests.api.quotes.support import auto, new_account, quote_path, quotes
from tests.api.transactions.support import AUGUST, create, params, transaction_path
from tests.simulation.support import answers_lost
from tests.support.api import assert_error, call, events_of, json_of, ok


def _key(name: str) -> dict[str, str]:
    return {"X-Idempotency-Key": name}


def _payment(api, token, tenant, account: str, amount: str) -> str:
    return ok(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            token,
            {"accountLocator": account, "type": "Check", "amount": Decimal(amount), "data": {}, "targets": []},
        )
    )["locator"]


def test_a_replayed_quote_issue_answers_the_first_answer_and_issues_one_policy(api, admin_token):
    tenant = billing_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    quote = ok(call(api, "POST", quotes(tenant), admin_token, auto(account)))["locator"]
    first = call(api, "PATCH", quote_path(tenant, quote, "/issue"), admin_token, headers=_key("issue-1"))
    issued = ok(first)

    again = call(api, "PATCH", quote_path(tenant, quote, "/issue"), admin_token, headers=_key("issue-1"))

    assert (again.status_code, again.body) == (200, first.body)
    assert issued["quoteState"] == "issued"
    assert events_of(api, admin_token, tenant, again) == []  # nothing happened a second time
    unkeyed = call(api, "PATCH", quote_path(tenant, quote, "/issue"), admin_token)
    assert_error(unkeyed, 409, "quote.invalid_state")  # without its key, a second issue is refused as before


def test_a_quote_issue_whose_answer_was_lost_after_it_committed_answers_the_issued_quote(api, admin_token, jobs):
    tenant = billing_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    quote = ok(call(api, "POST", quotes(tenant), admin_token, auto(account)))["locator"]
    with answers_lost() as plan:
        lost = call(api, "PATCH", quote_path(tenant, quote, "/issue"), admin_token, headers=_key("issue-lost"))
    assert_error(lost, 503, "service.unavailable")
    assert plan.injected["timeout_after"] == 5  # the commit and botocore's four resends: all applied, none answered

    retried = call(api, "PATCH", quote_path(tenant, quote, "/issue"), admin_token, headers=_key("issue-lost"))

    answer = ok(retried)
    assert answer["quoteState"] == "issued" and answer["policyLocator"]
    assert answer == ok(call(api, "GET", quote_path(tenant, quote), admin_token))
    assert "policy.quote.issue" in [event["type"] for event in events_of(api, admin_token, tenant, lost)]
    assert events_of(api, admin_token, tenant, retried) == []
    policy = ok(call(api, "GET", f"/policy/{tenant}/policies/{answer['policyLocator']}", admin_token))
    assert policy["locator"] == answer["policyLocator"]
    replayed = call(api, "PATCH", quote_path(tenant, quote, "/issue"), admin_token, headers=_key("issue-lost"))
    assert (replayed.status_code, replayed.body) == (200, retried.body)  # the rebuilt answer is kept


def test_a_replay_of_a_move_with_another_body_is_refused_and_changes_nothing(api, admin_token, jobs):
    tenant = billing_tenant(api, admin_token)
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    payment = _payment(api, admin_token, tenant, account, "40.00")
    ok(call(api, "PATCH", billing(tenant, f"/payments/{payment}/post"), admin_token))
    path = billing(tenant, f"/payments/{payment}/reverse")
    first = call(api, "PATCH", path, admin_token, {"reversalType": "bounced"}, headers=_key("reverse-1"))
    assert ok(first)["paymentState"] == "reversed"

    other = call(api, "PATCH", path, admin_token, {"reversalType": "stopped"}, headers=_key("reverse-1"))
    same = call(api, "PATCH", path, admin_token, {"reversalType": "bounced"}, headers=_key("reverse-1"))

    assert_error(other, 409, "idempotency.key_reused")
    assert (same.status_code, same.body) == (200, first.body)
    balance = ok(
        call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), admin_token)
    )["balance"]
    assert Decimal(str(balance)) == 0  # credited once by the post, taken back once by the reversal


def test_a_payment_reversal_whose_answer_was_lost_answers_the_reversed_payment_and_reverses_once(
    api, admin_token, jobs
):
    tenant = billing_tenant(api, admin_token)
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    payment = _payment(api, admin_token, tenant, account, "75.00")
    with answers_lost():
        lost_post = call(
            api, "PATCH", billing(tenant, f"/payments/{payment}/post"), admin_token, headers=_key("post-lost")
        )
    assert_error(lost_post, 503, "service.unavailable")
    posted = ok(
        call(api, "PATCH", billing(tenant, f"/payments/{payment}/post"), admin_token, headers=_key("post-lost"))
    )
    assert posted["paymentState"] == "posted"
    path = billing(tenant, f"/payments/{payment}/reverse")
    with answers_lost():
        lost = call(api, "PATCH", path, admin_token, {"reversalType": "bounced"}, headers=_key("reverse-lost"))
    assert_error(lost, 503, "service.unavailable")

    retried = call(api, "PATCH", path, admin_token, {"reversalType": "bounced"}, headers=_key("reverse-lost"))

    assert ok(retried)["paymentState"] == "reversed"
    assert json_of(retried) == ok(call(api, "GET", billing(tenant, f"/payments/{payment}"), admin_token))
    balance = ok(
        call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), admin_token)
    )["balance"]
    assert Decimal(str(balance)) == 0
    assert "billing.payment.reverse" in [event["type"] for event in events_of(api, admin_token, tenant, lost)]
    assert events_of(api, admin_token, tenant, retried) == []  # the reversal's events, once: the lost attempt's


def test_a_transaction_issue_is_replayed_and_a_lost_answer_rebuilt(api, admin_token, jobs):
    tenant = billing_tenant(api, admin_token)
    _, policy = billed_policy(api, admin_token, tenant, jobs)
    change = ok(create(api, admin_token, tenant, policy["locator"], "change", [params(AUGUST)]))["locator"]
    ok(call(api, "PATCH", transaction_path(tenant, change, "/price"), admin_token))
    with answers_lost():
        lost = call(api, "PATCH", transaction_path(tenant, change, "/issue"), admin_token, headers=_key("tx-issue"))
    assert_error(lost, 503, "service.unavailable")

    retried = call(api, "PATCH", transaction_path(tenant, change, "/issue"), admin_token, headers=_key("tx-issue"))
    replayed = call(api, "PATCH", transaction_path(tenant, change, "/issue"), admin_token, headers=_key("tx-issue"))

    assert ok(retried)["transactionState"] == "issued"
    assert json_of(retried) == ok(call(api, "GET", transaction_path(tenant, change), admin_token))
    assert (replayed.status_code, replayed.body) == (200, retried.body)
