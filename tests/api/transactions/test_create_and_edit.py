"""Creating transactions on an issued policy and editing them as drafts: the draft and its segment, the
change instruction and element endpoints, initialize, and the bad input that stores nothing."""

from __future__ import annotations

from decimal import Decimal as D

import pytest

from tests.api.quotes.support import vehicle
from tests.api.transactions.support import (
    AUGUST,
    END,
    SEGMENT_FIELDS,
    TRANSACTION_FIELDS,
    UNKNOWN,
    create,
    issued_transaction,
    modify,
    params,
    policy_path,
    segment_of_policy,
    step,
    transaction_path,
    vehicle_of,
)
from tests.support.api import assert_error, call, event_types, events_of, ok


def _change(api, token, tenant, policy, *instructions):
    return ok(create(api, token, tenant, policy["locator"], "change", [params(AUGUST), *instructions]))


def test_a_change_is_created_as_a_draft_based_on_the_latest_issued_transaction(api, admin_token, tenant, policy):
    vehicle_static = vehicle_of(segment_of_policy(api, admin_token, tenant, policy))["staticLocator"]
    response = create(
        api, admin_token, tenant, policy["locator"], "change", [params(AUGUST), modify(vehicle_static, value="25000")]
    )
    draft = ok(response)

    assert TRANSACTION_FIELDS <= set(draft)
    assert (draft["transactionState"], draft["transactionCategory"], draft["transactionType"]) == (
        "draft",
        "change",
        "change",
    )
    assert (draft["policyLocator"], draft["termLocator"]) == (policy["locator"], policy["latestTermLocator"])
    assert draft["baseTransactionLocator"] == policy["issuedTransactionLocator"]
    assert draft["staticLocator"] == draft["locator"]
    assert draft["effectiveTime"] == AUGUST
    assert [i["action"] for i in draft["changeInstructions"]] == ["params", "modify"]
    assert all(i["locator"] for i in draft["changeInstructions"])
    assert events_of(api, admin_token, tenant, response) == [
        {
            **events_of(api, admin_token, tenant, response)[0],
            "type": "policy.change.create",
            "data": {"policyLocator": policy["locator"], "transactionLocator": draft["locator"]},
        }
    ]
    assert ok(call(api, "GET", transaction_path(tenant, draft["locator"]), admin_token)) == draft


def test_the_segment_of_a_draft_is_the_one_it_would_make(api, admin_token, tenant, policy):
    base = segment_of_policy(api, admin_token, tenant, policy)
    draft = _change(api, admin_token, tenant, policy, modify(vehicle_of(base)["staticLocator"], value="25000"))

    segment = ok(call(api, "GET", transaction_path(tenant, draft["locator"], "/segment"), admin_token))

    assert SEGMENT_FIELDS <= set(segment)
    assert (segment["startTime"], segment["endTime"], segment["duration"]) == (AUGUST, END, 6)
    assert (segment["segmentType"], segment["transactionLocator"]) == ("coverage", draft["locator"])
    assert vehicle_of(segment)["data"]["value"] == "25000"
    assert vehicle_of(segment)["locator"] == vehicle_of(base)["locator"]
    assert segment["element"]["parentLocator"] == segment["locator"]
    listed = ok(call(api, "GET", transaction_path(tenant, draft["locator"], "/segments/list"), admin_token))
    assert listed == [segment]
    assert (
        ok(call(api, "GET", transaction_path(tenant, draft["locator"], f"/segments/{segment['locator']}"), admin_token))
        == segment
    )


def test_change_instructions_are_added_changed_and_removed_while_the_transaction_is_a_draft(
    api, admin_token, tenant, policy
):
    vehicle_static = vehicle_of(segment_of_policy(api, admin_token, tenant, policy))["staticLocator"]
    draft = _change(api, admin_token, tenant, policy)

    response = call(
        api,
        "PUT",
        transaction_path(tenant, draft["locator"], "/changeInstructions"),
        admin_token,
        modify(vehicle_static, value="25000"),
    )
    added = ok(response)
    assert event_types(api, admin_token, tenant, response) == ["policy.change.update"]
    instruction = added["changeInstructions"][-1]
    assert (instruction["action"], instruction["setData"]) == ("modify", {"value": "25000"})

    changed = ok(
        call(
            api,
            "PATCH",
            transaction_path(tenant, draft["locator"], f"/changeInstructions/{instruction['locator']}"),
            admin_token,
            modify(vehicle_static, value="30000"),
        )
    )
    assert changed["changeInstructions"][-1] == {**instruction, "setData": {"value": "30000"}}

    removed = ok(
        call(
            api,
            "DELETE",
            transaction_path(tenant, draft["locator"], f"/changeInstructions/{instruction['locator']}"),
            admin_token,
        )
    )
    assert [i["action"] for i in removed["changeInstructions"]] == ["params"]
    assert_error(
        call(api, "DELETE", transaction_path(tenant, draft["locator"], f"/changeInstructions/{UNKNOWN}"), admin_token),
        404,
        "changeInstruction.not_found",
    )


def test_the_element_endpoints_add_instructions_and_answer_the_segment_the_draft_makes(
    api, admin_token, tenant, policy
):
    base_vehicle = vehicle_of(segment_of_policy(api, admin_token, tenant, policy))
    draft = _change(api, admin_token, tenant, policy)
    path = transaction_path(tenant, draft["locator"], "/elements")

    (added,) = ok(call(api, "PUT", path, admin_token, [vehicle(vin="2HGCM82633A004352", value="30000")]))
    vehicles = [e for e in added["element"]["elements"] if e["type"] == "Vehicle"]
    assert [v["data"]["vin"] for v in vehicles] == ["1HGCM82633A004352", "2HGCM82633A004352"]
    new_vehicle = vehicles[1]
    assert new_vehicle["locator"] == new_vehicle["staticLocator"]
    assert new_vehicle["originalEffectiveTime"] == AUGUST

    (updated,) = ok(
        call(api, "PATCH", path, admin_token, {"locator": base_vehicle["locator"], "setData": {"value": "19000"}})
    )
    assert vehicle_of(updated)["data"]["value"] == "19000"
    (removed,) = ok(call(api, "DELETE", path, admin_token, [new_vehicle["staticLocator"]]))
    assert [e["data"]["vin"] for e in removed["element"]["elements"] if e["type"] == "Vehicle"] == ["1HGCM82633A004352"]

    again = ok(call(api, "GET", transaction_path(tenant, draft["locator"]), admin_token))
    assert [i["action"] for i in again["changeInstructions"]] == ["params", "add", "modify", "delete"]


def test_initializing_applies_the_instructions_and_ends_the_draft(api, admin_token, tenant, policy):
    vehicle_static = vehicle_of(segment_of_policy(api, admin_token, tenant, policy))["staticLocator"]
    draft = _change(api, admin_token, tenant, policy, modify(vehicle_static, value="25000"))

    response = step(api, admin_token, tenant, draft["locator"], "initialize")
    initialized = ok(response)

    assert initialized["transactionState"] == "initialized"
    assert event_types(api, admin_token, tenant, response) == ["policy.change.update"]
    segment = ok(call(api, "GET", transaction_path(tenant, draft["locator"], "/segment"), admin_token))
    assert vehicle_of(segment)["data"]["value"] == "25000"
    for method, suffix, body in [
        ("PUT", "/changeInstructions", params(AUGUST)),
        ("PUT", "/elements", [vehicle()]),
        ("DELETE", "/elements", [vehicle_static]),
        ("PATCH", "/elements", {"locator": vehicle_static}),
    ]:
        assert_error(
            call(api, method, transaction_path(tenant, draft["locator"], suffix), admin_token, body),
            409,
            "transaction.not_draft",
        )


def test_a_cancellation_takes_one_params_instruction_and_a_renewal_starts_at_the_end_of_the_term(
    api, admin_token, tenant, policy
):
    cancellation = ok(create(api, admin_token, tenant, policy["locator"], "cancel", params(AUGUST)))
    assert (cancellation["transactionCategory"], cancellation["effectiveTime"]) == ("cancellation", AUGUST)
    segment = ok(call(api, "GET", transaction_path(tenant, cancellation["locator"], "/segment"), admin_token))
    assert (segment["segmentType"], segment["startTime"], segment["endTime"]) == ("gap", AUGUST, END)

    renewal = ok(create(api, admin_token, tenant, policy["locator"], "renew", []))
    assert (renewal["transactionCategory"], renewal["effectiveTime"]) == ("renewal", END)
    assert renewal["termLocator"] != policy["latestTermLocator"]
    segment = ok(call(api, "GET", transaction_path(tenant, renewal["locator"], "/segment"), admin_token))
    assert (segment["startTime"], segment["endTime"]) == (END, "2028-02-01T05:00:00.000Z")


def test_branches_list_the_unissued_transactions_by_their_heads(api, admin_token, tenant, policy):
    first = _change(api, admin_token, tenant, policy)
    second = _change(api, admin_token, tenant, policy)
    chained = ok(
        create(
            api, admin_token, tenant, policy["locator"], "change", [params(AUGUST)], f"?baseLocator={first['locator']}"
        )
    )

    branches = ok(call(api, "GET", policy_path(tenant, policy["locator"], "/branches"), admin_token))

    assert {head: [t["locator"] for t in chain] for head, chain in branches.items()} == {
        chained["locator"]: [chained["locator"], first["locator"]],
        second["locator"]: [second["locator"]],
    }


def test_the_policy_names_the_head_of_every_branch_drafts_too(api, admin_token, tenant, policy, ddb_calls):
    def heads():
        fetched = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
        return fetched["branchHeadTransactionLocators"]

    issued = policy["issuedTransactionLocator"]
    assert heads() == [issued]
    ddb_calls.clear()
    first = _change(api, admin_token, tenant, policy)["locator"]
    # the policy's head (its root, its terms; the latest records by key), then one write: the draft, its
    # alias, its event and the root's branch heads
    assert [name for name in ddb_calls if name != "BatchGetItem"] == ["GetItem", "Query", "TransactWriteItems"]
    assert heads() == [first]
    second = _change(api, admin_token, tenant, policy)["locator"]
    assert heads() == [first, second]  # two drafts on one base: two branches
    chained = ok(
        create(api, admin_token, tenant, policy["locator"], "change", [params(AUGUST)], f"?baseLocator={first}")
    )["locator"]
    assert heads() == [second, chained]  # a draft based on a draft extends its branch

    ddb_calls.clear()
    ok(step(api, admin_token, tenant, chained, "discard"))
    # its alias, the policy's head, then one write: the transaction, its event and the branch heads
    assert [name for name in ddb_calls if name != "BatchGetItem"] == [
        "GetItem",
        "GetItem",
        "Query",
        "TransactWriteItems",
    ]
    assert heads() == [first, second]
    ok(step(api, admin_token, tenant, second, "refuse"))
    assert heads() == [first]
    ok(step(api, admin_token, tenant, first, "discard"))
    assert heads() == [issued]


# --- bad input: a clear 4xx and nothing stored -------------------------------------------------------


def _nothing_stored(api, token, tenant, policy, response):
    assert event_types(api, token, tenant, response) == []
    assert ok(call(api, "GET", policy_path(tenant, policy["locator"], "/branches"), token)) == {}


@pytest.mark.parametrize(
    "kind, body, status, code",
    [
        ("change", [params("2025-06-01T00:00:00Z")], 400, "transaction.effective_time_outside_terms"),
        ("change", [params("2027-03-01T00:00:00Z")], 400, "transaction.effective_time_outside_terms"),
        ("change", [], 400, "transaction.effective_time_required"),
        ("change", [params(AUGUST), modify(UNKNOWN, value="1")], 400, "transaction.invalid_element"),
        (
            "change",
            [params(AUGUST), {"action": "delete", "staticElementLocators": [UNKNOWN]}],
            400,
            "transaction.invalid_element",
        ),
        ("change", [params(AUGUST), params(AUGUST)], 400, "transaction.invalid_instruction"),
        ("change", [params(AUGUST), {"action": "explode"}], 400, "request.invalid"),
        ("NoSuchType", [params(AUGUST)], 400, "transaction.unknown_type"),
        ("reinstate", [], 409, "transaction.policy_not_cancelled"),
        ("renew", [params("2026-09-01T04:00:00Z")], 400, "transaction.renewal_effective_time"),
        ("cancel", {"action": "params"}, 400, "request.invalid"),
    ],
)
def test_bad_input_is_refused_and_stores_nothing(api, admin_token, tenant, policy, kind, body, status, code):
    response = create(api, admin_token, tenant, policy["locator"], kind, body)

    assert_error(response, status, code)
    _nothing_stored(api, admin_token, tenant, policy, response)


def test_an_unknown_policy_or_transaction_is_a_404(api, admin_token, tenant):
    assert_error(create(api, admin_token, tenant, UNKNOWN, "change", [params(AUGUST)]), 404, "policy.not_found")
    for suffix in ("", "/segment", "/preferences", "/price", "/underwritingFlags", "/elements/changes"):
        assert_error(
            call(api, "GET", transaction_path(tenant, UNKNOWN, suffix), admin_token), 404, "transaction.not_found"
        )
    assert_error(step(api, admin_token, tenant, UNKNOWN, "initialize"), 404, "transaction.not_found")


def test_a_renewal_of_a_cancelled_policy_and_a_stale_base_are_conflicts(api, admin_token, tenant, policy):
    issued_transaction(api, admin_token, tenant, policy["locator"], "cancel", params(AUGUST))

    renewal = create(api, admin_token, tenant, policy["locator"], "renew", [])
    assert_error(renewal, 409, "transaction.policy_cancelled")
    stale = create(
        api,
        admin_token,
        tenant,
        policy["locator"],
        "reinstate",
        [],
        f"?baseLocator={policy['issuedTransactionLocator']}",
    )
    assert_error(stale, 409, "transaction.stale_base")
    for response in (renewal, stale):
        assert event_types(api, admin_token, tenant, response) == []


def test_previews_answer_what_a_transaction_would_be_and_store_nothing(api, admin_token, tenant, policy):
    static = vehicle_of(segment_of_policy(api, admin_token, tenant, policy))["staticLocator"]
    body = [params(AUGUST), modify(static, value="25000")]
    path = policy_path(tenant, policy["locator"], "/change")

    validated = call(api, "PATCH", f"{path}/validatePreview", admin_token, body)
    priced = call(api, "PATCH", f"{path}/pricePreview", admin_token, body)
    underwritten = call(api, "PATCH", f"{path}/underwritePreview", admin_token, body)

    assert ok(validated)["transactionState"] == "validated"
    assert sorted((c["chargeType"], c["amount"]) for c in ok(priced)["charges"]) == [
        ("premium", -600),
        ("premium", 900),
        ("tax", D("-12.5")),
        ("tax", 25),
    ]
    assert (ok(underwritten)["transactionState"], ok(underwritten)["underwritingStatus"]) == ("underwritten", "info")
    for response in (validated, priced, underwritten):
        assert event_types(api, admin_token, tenant, response) == []
    assert ok(call(api, "GET", policy_path(tenant, policy["locator"], "/branches"), admin_token)) == {}
    failing = ok(call(api, "PATCH", f"{path}/pricePreview", admin_token, [params(AUGUST), modify(static, vin="short")]))
    assert (failing["transactionState"], failing["validationResult"]["success"]) == ("draft", False)
    assert_error(
        call(api, "PATCH", f"{path}/pricePreview", admin_token, [params("2030-01-01T00:00:00Z")]),
        400,
        "transaction.effective_time_outside_terms",
    )
