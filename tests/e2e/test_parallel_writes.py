"""Writers racing on one record through the real local stack (issue 10): no acknowledged change is lost, the
losers answer 409 in our error body, and a quote issued by many clients at once becomes one policy."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.accounts.support import person
from tests.api.quotes.support import auto
from tests.e2e.support import LocalStack, in_parallel
from tests.support.configs import package, policy_model

PATCHERS = 9
ISSUERS = 20
ADVANCERS = 8
LOST_RACE_CODES = {"conflict.concurrent_modification", "quote.invalid_state"}
"""A loser read the quote before the winner wrote it (its conditional write fails), or after (the quote
is no longer in a state its request may change)."""


@pytest.fixture(scope="module")
def stack(local_stack) -> LocalStack:
    return local_stack


@pytest.fixture(scope="module")
def token(stack) -> str:
    return stack.sign_in()


@pytest.fixture(scope="module")
def tenant(stack, token) -> str:
    status, body = stack.request(
        "POST", "/config/createTenant?name=parallel-writes", token=token, package=package(policy_model())
    )
    assert status == 200, body
    assert body["deploymentResult"]["isSuccess"] is True, body["deploymentResult"]
    return body["locator"]


@pytest.fixture
def quote(stack, token, tenant) -> str:
    """A draft PersonalAuto quote (no plugins: validation checks the schema, rating yields no charges)."""
    status, account = stack.request("POST", f"/policy/{tenant}/accounts", token=token, json_body=person())
    assert status == 200, account
    status, created = stack.request("POST", f"/policy/{tenant}/quotes", token=token, json_body=auto(account["locator"]))
    assert status == 200, created
    return created["locator"]


def _contact(client: int) -> str:
    return f"01J00000000000000000000{client:03d}"


def _assert_lost_race(status: int, body: Any) -> None:
    assert status == 409, body
    assert body["httpStatus"] == 409 and body["code"] in LOST_RACE_CODES, body
    assert body["message"] and body["requestId"], body


def _events(stack: LocalStack, token: str, tenant: str, event_type: str) -> list[dict[str, Any]]:
    status, body = stack.request("GET", f"/event/{tenant}/events/list?type={event_type}&pageSize=100", token=token)
    assert status == 200, body
    return body["events"]


def test_of_parallel_updates_of_one_quote_each_acknowledged_one_is_kept_and_the_others_answer_409(
    stack, token, tenant, quote
):
    path = f"/policy/{tenant}/quotes/{quote}"
    answers = in_parallel(
        PATCHERS,
        lambda client: stack.request(
            "PATCH",
            path,
            token=token,
            json_body={"setContacts": [{"contactLocator": _contact(client), "roles": ["broker"]}]},
        ),
    )

    acknowledged = {_contact(client) for client, (status, _) in enumerate(answers) if status == 200}
    for status, body in answers:
        if status != 200:
            _assert_lost_race(status, body)
    assert acknowledged, answers
    status, stored = stack.request("GET", path, token=token)
    assert status == 200, stored
    assert {contact["contactLocator"] for contact in stored["contacts"]} == acknowledged
    updates = [
        event
        for event in _events(stack, token, tenant, "policy.quote.update")
        if event["data"]["quoteLocator"] == quote
    ]
    assert len(updates) == len(acknowledged)


def test_of_parallel_issues_of_one_accepted_quote_one_makes_the_policy_and_the_others_answer_409(
    stack, token, tenant, quote
):
    path = f"/policy/{tenant}/quotes/{quote}"
    status, accepted = stack.request("PATCH", f"{path}/accept", token=token)
    assert (status, accepted["quoteState"]) == (200, "accepted"), accepted

    answers = in_parallel(ISSUERS, lambda _: stack.request("PATCH", f"{path}/issue", token=token))

    issued = [body for status, body in answers if status == 200]
    assert len(issued) == 1, answers
    for status, body in answers:
        if status != 200:
            _assert_lost_race(status, body)
    status, stored = stack.request("GET", path, token=token)
    assert (status, stored["quoteState"], stored["policyLocator"]) == (200, "issued", issued[0]["policyLocator"])
    status, policies = stack.request(
        "GET", f"/policy/{tenant}/accounts/{stored['accountLocator']}/policies/list", token=token
    )
    assert status == 200, policies
    assert [policy["locator"] for policy in policies["items"]] == [issued[0]["policyLocator"]]
    assert [event["data"]["quoteLocator"] for event in _events(stack, token, tenant, "policy.quote.issue")] == [quote]


def test_parallel_advances_of_one_test_clock_never_overlap_and_the_others_answer_409(stack, token):
    status, body = stack.request(
        "POST",
        "/config/createTenant?name=parallel-advances&testClock=true",
        token=token,
        package=package(policy_model()),
    )
    assert status == 200, body
    sandbox = body["locator"]

    answers = in_parallel(
        ADVANCERS,
        lambda client: stack.request(
            "POST", f"/clock/{sandbox}/advance", token=token, json_body={"to": f"20{30 + client}-01-01T00:00:00Z"}
        ),
    )

    # The advance that goes through runs at once (no due work): a request that arrives after it finished may
    # start the next one. Advances never overlap: each began where the one before it ended.
    through = sorted((body for status, body in answers if status == 200), key=lambda body: body["now"])
    assert through, answers
    assert all(body["status"] == "advancing" for body in through)
    assert [body["now"] for body in through[1:]] == [body["advancingTo"] for body in through[:-1]]
    for status, body in answers:
        if status != 200:
            assert (status, body["code"]) in {(409, "clock.advancing"), (400, "clock.not_forward")}, body
    assert len(through) < ADVANCERS
