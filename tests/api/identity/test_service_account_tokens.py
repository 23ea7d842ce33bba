"""POST /auth/users/{locator}/tokens for someone else (DECISIONS.md, answers raised building the spine):
only for a service account whose every tenant the caller holds, with `users.write`; never for another
person's interactive account."""

from __future__ import annotations

from tests.api.identity.support import assert_error, assert_event, token_body, user_holding, whoami
from tests.builders import new_role, new_tenant, new_user
from tests.support.api import call, ok


def test_a_user_writer_mints_a_token_for_a_service_account_of_its_tenant(api, clock):
    tenant = new_tenant()
    robot = user_holding([new_role(["accounts.read"])], [tenant], service_account=True)
    writer, token = new_user(["users.write", "accounts.read"], [tenant])

    response = call(
        api,
        "POST",
        f"/auth/users/{robot}/tokens",
        token,
        token_body(clock, name="robot", permissions=["accounts.read", "users.custom"], tenants=[tenant]),
    )
    minted = ok(response)

    assert assert_event(response, "auth.token.create", writer)["data"] == {"userLocator": robot, "name": "robot"}
    me = ok(whoami(api, minted))
    assert me["locator"] == robot and me["serviceAccount"] is True


def test_no_token_for_another_persons_interactive_account(api, clock):
    tenant = new_tenant()
    person = user_holding([new_role(["accounts.read"])], [tenant])
    _, token = new_user(["users.write", "accounts.read"], [tenant])
    assert_error(
        call(api, "POST", f"/auth/users/{person}/tokens", token, token_body(clock)), 403, "token.not_service_account"
    )


def test_minting_for_a_service_account_needs_users_write(api, clock):
    tenant = new_tenant()
    robot = user_holding([], [tenant], service_account=True)
    _, reader = new_user(["users.read"], [tenant])
    assert_error(
        call(api, "POST", f"/auth/users/{robot}/tokens", reader, token_body(clock)), 403, "auth.permission_denied"
    )


def test_a_service_account_of_a_tenant_the_caller_does_not_hold_is_not_found(api, clock):
    robot = user_holding([], [new_tenant()], service_account=True)
    _, writer = new_user(["users.write"], [new_tenant()])
    assert_error(call(api, "POST", f"/auth/users/{robot}/tokens", writer, token_body(clock)), 404, "user.not_found")


def test_a_service_account_stronger_than_the_caller_gets_no_token_from_it(api, admin_token, clock):
    tenant = new_tenant()
    robot = user_holding(["admin"], [tenant], service_account=True)
    _, writer = new_user(["users.write"], [tenant])
    assert_error(
        call(api, "POST", f"/auth/users/{robot}/tokens", writer, token_body(clock)), 403, "auth.user_outranks_caller"
    )


def test_anyone_mints_tokens_for_itself_with_self_service(api, clock):
    locator, token = new_user([], [])
    minted = ok(call(api, "POST", f"/auth/users/{locator}/tokens", token, token_body(clock, name="mine")))
    assert ok(whoami(api, minted))["locator"] == locator
