"""What a migrated policy can get wrong, each said with where it is, all of a policy's problems at once: the
failures list of the migration names them exactly, and nothing of the account is written."""

from __future__ import annotations

import copy

from tests.api.migration.support import CREATED_BY, account_request, auto_policy, control, fetch, migrations, start
from tests.support.api import assert_error, call, ok


def _messages(failure: dict, policy: str) -> list[str]:
    return [m for item in failure["policies"][policy]["errors"]["validationItems"] for m in item["errors"]]


def test_each_problem_of_a_migrated_policy_is_named_and_the_account_is_not_written(api, admin_token, tenant, jobs):
    settings = auto_policy(
        "SRC-Q1-p1",
        currency="usd",
        timezone="Mars/Olympus_Mons",
        autoRenewalPlanName="no-such-plan",
        delinquencyPlanName="no-such-delinquency",
    )
    shapes = auto_policy("SRC-Q1-p2")
    term = shapes["terms"][0]
    issuance, change = term["transactions"]
    backwards = {"startTime": "2025-06-01T04:00:00Z", "endTime": "2025-06-01T04:00:00Z", "transactions": [issuance]}
    wrong_root = copy.deepcopy(change)
    wrong_root["segment"]["rootElement"]["elementType"] = "Vehicle"
    outside = copy.deepcopy(change)
    outside["segment"]["startTime"] = "2027-01-01T05:00:00Z"
    unknown_charge = copy.deepcopy(change)
    unknown_charge["segment"]["rootElement"]["elements"][0]["charges"][0]["chargeType"] = "surcharge"
    term["transactions"] = [issuance, {**change, "segment": None}, wrong_root, outside, unknown_charge]
    shapes["terms"] = [backwards, term]

    migration = ok(start(api, admin_token, tenant, [account_request("SRC-Q1", policies=[settings, shapes])]))["locator"]
    jobs.drain()

    (failure,) = fetch(api, admin_token, tenant, migration, "/failures/list")["items"]
    assert failure["accountOriginalId"] == "SRC-Q1" and set(failure["policies"]) == {"SRC-Q1-p1", "SRC-Q1-p2"}
    assert _messages(failure, "SRC-Q1-p1") == [
        "currency: 'usd' is not an ISO 4217 currency code",
        "timezone: 'Mars/Olympus_Mons' is not an IANA time zone",
        "autoRenewalPlanName: 'no-such-plan' is not defined in the configuration's autoRenewalPlans",
        "delinquencyPlanName: 'no-such-delinquency' is not defined in the configuration's delinquencyPlans",
    ]
    assert _messages(failure, "SRC-Q1-p2") == [
        "terms[0]: endTime is not after startTime",
        "terms[1].transactions[1].segment: every migrated transaction brings its segment",
        "terms[1].transactions[2].segment.rootElement.elementType: the root element is the product PersonalAuto, "
        "not Vehicle",
        "terms[1].transactions[3].segment.startTime: not within its term",
        "terms[1].transactions[4].charges[SRC-Q1-p2-v1][0].chargeType: 'surcharge' is not a configured charge",
    ]
    state = fetch(api, admin_token, tenant, migration, f"/accounts/{failure['accountLocator']}")
    assert state["accountMigrationState"] == "failed"
    assert ok(call(api, "GET", f"/policy/{tenant}/accounts/list?count=100", admin_token))["items"] == []


def test_a_patch_that_cannot_apply_is_refused_and_changes_nothing(api, admin_token, tenant, jobs):
    body = [account_request("SRC-R1", policies=[auto_policy("SRC-R1-p1", productName="Motorbike")])]
    migration = ok(start(api, admin_token, tenant, body))["locator"]
    jobs.drain()
    (failure,) = fetch(api, admin_token, tenant, migration, "/failures/list")["items"]
    account = failure["accountLocator"]
    patch = {"accountLocator": account, "defaultCreatedBy": CREATED_BY, "policies": {}}

    def refused(changes: dict, status: int, code: str) -> str:
        return assert_error(
            call(api, "PATCH", migrations(tenant, f"/{migration}"), admin_token, {**patch, **changes}), status, code
        )["message"]

    assert refused({"policies": {"SRC-R1-p1": auto_policy("SRC-R1-p9")}}, 400, "request.invalid") == (
        "policies.SRC-R1-p1: the policy's id is 'SRC-R1-p9', not its key"
    )
    other = account_request("SRC-R2")["accountData"]
    assert refused({"accountData": other}, 400, "request.invalid") == (
        "accountData: the account's id cannot change (nor an existing account's data)"
    )
    assert refused({"accountLocator": "X" * 300}, 404, "migrationAccount.not_found") == (
        f"migration {migration} has no account {'X' * 300}"
    )
    assert_error(
        call(api, "GET", migrations(tenant, f"/{migration}/accounts/{'X' * 300}"), admin_token),
        404,
        "migrationAccount.not_found",
    )
    # a migration that ended (failed) has nothing to pause
    assert_error(control(api, admin_token, tenant, migration, "pause"), 409, "migration.invalid_state")
    assert fetch(api, admin_token, tenant, migration, "/failures/list")["items"] == [failure]


def test_a_migration_brings_its_accounts_in_the_body_or_by_upload_not_both(api, admin_token, tenant):
    answer = call(
        api,
        "POST",
        migrations(tenant, "?uploadLocator=01M99HZMYTK46NPMES753YKTRC"),
        admin_token,
        [account_request("SRC-U1")],
    )

    assert assert_error(answer, 400, "request.invalid")["message"] == (
        "Send the accounts as the body, or name their upload with ?uploadLocator= and an empty body, not both"
    )
