"""Helpers of the identity API tests: JSON calls, error assertions, the events of one request."""

from __future__ import annotations

from typing import Any

from tests.builders import system_ctx, unique_name
from tests.support.api import assert_error as assert_error_body
from tests.support.api import call, ok


def request_id(response: Any) -> str:
    return response.headers["X-Request-Id"]


def events_of(response: Any) -> list[dict[str, Any]]:
    """The system event items recorded by the request that gave `response`."""
    from chalicelib.storage import keys, table

    items, _ = table.gateway().query(
        keys.SYSTEM_SCOPE, keys.events_by_request(keys.SYSTEM_SCOPE, request_id(response)), index="GSI3"
    )
    return items


def assert_event(response: Any, event_type: str, user_locator: str) -> dict[str, Any]:
    """Exactly one event of the request, of `event_type`, stamped with its request id and caller."""
    events = events_of(response)
    assert [e["type"] for e in events] == [event_type]
    event = events[0]
    assert event["requestId"] == request_id(response)
    assert event["userLocator"] == user_locator
    return event


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    """The error body of DECISIONS.md with a message, and a failed request records no event."""
    body = assert_error_body(response, status, code)
    assert body["message"]
    assert events_of(response) == []
    return body


def field_names(body: dict[str, Any]) -> set[str]:
    return {f["field"] for f in body.get("fieldErrors", [])}


def user_body(**overrides: Any) -> dict[str, Any]:
    """A UserCreateRequest without a password (no argon2 cost), with a unique user name."""
    return {"userName": unique_name(), "firstName": "Ada", "lastName": "Lovelace", **overrides}


def role_name() -> str:
    from chalicelib.core.ids import new_locator

    return f"role-{new_locator().lower()}"


def role_body(**overrides: Any) -> dict[str, Any]:
    return {"name": role_name(), "description": "A test role", "permissions": ["accounts.read"], **overrides}


def whoami(api: Any, token: str) -> Any:
    return call(api, "GET", "/auth/users/whoami", token)


PASSWORD = "correct horse battery staple"


def user_with_password(tenants: list[str], roles: list[str] | None = None) -> tuple[str, str]:
    """A user who signs in with PASSWORD (costs one argon2 hash): (locator, user name)."""
    from chalicelib.identity import service
    from chalicelib.identity.models import UserFields
    from tests.builders import system_ctx

    name = unique_name()
    profile = service.create_user(
        system_ctx(),
        UserFields(
            userName=name, firstName="Sign", lastName="In", password=PASSWORD, roles=roles or [], tenants=tenants
        ),
        enable_user=False,
    )
    return profile.user.locator, name


def sign_in(api: Any, user_name: str, password: str = PASSWORD) -> Any:
    return call(
        api, "POST", "/auth/token", body={"grant_type": "password", "username": user_name, "password": password}
    )


def token_body(clock: Any, **overrides: Any) -> dict[str, Any]:
    """An AuthTokenCreateRequest valid for a day from the test clock, carrying only `users.custom`."""
    from datetime import timedelta

    from chalicelib.core.clock import isoformat

    return {
        "name": "api-token",
        "expiresAt": isoformat(clock.now() + timedelta(days=1)),
        "permissions": ["users.custom"],
        "tenants": [],
        **overrides,
    }


def list_length(api: Any, token: str, path: str, count: int = 100) -> int:
    """How many items an offset/count list holds, in a few requests of `count` items (the table is shared
    by the whole session, and a page reads every item before its offset, so paging through is slow)."""

    def probe(offset: int) -> tuple[int, bool]:
        body = ok(call(api, "GET", f"{path}?offset={offset}&count={count}", token))
        return len(body["items"]), body["listCompleted"]

    found, done = probe(0)
    if done:
        return found
    low, high, offset = 0, None, count  # more than low + count items; at most `high` items
    while high is None:
        found, done = probe(offset)
        if done and found:
            return offset + found
        if done:
            high = offset
        else:
            low, offset = offset, offset * 2
    while True:
        middle = (low + high) // 2
        found, done = probe(middle)
        if done and found:
            return middle + found
        if done:
            high = middle
        else:
            low = middle


def user_with_role(role: str, token_permissions: list[str]) -> tuple[str, str]:
    """A user holding the existing role `role`, and a named token of it: (locator, token)."""
    from datetime import timedelta

    from chalicelib.identity import service
    from chalicelib.identity.models import UserFields
    from tests.builders import system_ctx

    ctx = system_ctx()
    profile = service.create_user(
        ctx, UserFields(userName=unique_name(), firstName="Role", lastName="Holder", roles=[role]), enable_user=True
    )
    token = service.create_token(
        ctx,
        profile.user.locator,
        name="holder",
        permissions=token_permissions,
        tenants=[],
        expires_at=ctx.now + timedelta(days=1),
    )
    return profile.user.locator, token


def user_holding(
    roles: list[str],
    tenants: list[str],
    *,
    password: str | None = None,
    service_account: bool = False,
    name: str | None = None,
) -> str:
    from chalicelib.identity import service
    from chalicelib.identity.models import UserFields

    return service.create_user(
        system_ctx(),
        UserFields(
            userName=name or unique_name(),
            firstName="Tar",
            lastName="Get",
            password=password,
            serviceAccount=service_account,
            roles=roles,
            tenants=tenants,
        ),
        enable_user=True,
    ).user.locator
