"""Who may call the twelve table endpoints: 401 without credentials, 403 without the permission, 404 for
another tenant's tables. Without access to the tenant: tests/architecture/test_tenant_isolation.py, over
every route."""

from __future__ import annotations

import pytest

from tests.api.tables.support import BANDS, RATES_V1, VEHICLES, ZIP, create, csv_zip, headers, tables_tenant
from tests.builders import new_user
from tests.support.api import assert_error, ok

UPLOADS = {"tables": RATES_V1, "rangeTables": BANDS, "constraints": VEHICLES}
STATIC = {"tables": "Rates", "rangeTables": "AgeBands", "constraints": "Vehicles"}
INSTANCE = {"tables": "RatesA", "rangeTables": "BandsA", "constraints": "VehiclesA"}
RECORD_QUERY = {"tables": "key=CA&key=18", "rangeTables": "key=CA&boundValue=20", "constraints": "key=Ford"}
GROUP = {"tables": "tables", "rangeTables": "tables", "constraints": "constraints"}


def endpoints(tenant: str) -> list[tuple[str, str, str, bytes | None]]:
    """(permission, method, path, upload body) of all twelve endpoints, against tenant's tables."""
    found = []
    for path, text in UPLOADS.items():
        base, group = f"/resource/{tenant}/{path}", GROUP[path]
        found += [
            (f"{group}.upload", "POST", f"{base}?name={INSTANCE[path]}2&staticName={STATIC[path]}", csv_zip(text)),
            (f"{group}.upload", "PATCH", f"{base}/{INSTANCE[path]}", csv_zip(text)),
            (f"{group}.read", "GET", f"{base}/{INSTANCE[path]}", None),
            (f"{group}.read", "GET", f"{base}/{STATIC[path]}/record?{RECORD_QUERY[path]}", None),
        ]
    return found


def call(api, method: str, path: str, body: bytes | None, token: str | None):
    accept = ZIP if method == "GET" and not path.split("?")[0].endswith("record") else "application/json"
    send = headers(token, ZIP if body is not None else None, accept)
    return getattr(api.http, method.lower())(path, headers=send, **({"body": body} if body is not None else {}))


@pytest.fixture
def stocked(api, admin_token):
    """A tenant holding one table of each kind."""
    tenant = tables_tenant(api, admin_token)
    for path, text in UPLOADS.items():
        kind = {"tables": "table", "rangeTables": "rangeTable", "constraints": "constraintTable"}[path]
        ok(create(api, admin_token, tenant, kind, INSTANCE[path], STATIC[path], text))
    return tenant


def test_every_endpoint_is_reachable_with_its_permission(api, stocked):
    for permission, method, path, body in endpoints(stocked):
        _, token = new_user([permission], [stocked])
        response = call(api, method, path, body, token)
        assert response.status_code == 200, (method, path, response.body)


def test_without_credentials_every_endpoint_answers_401(api, stocked):
    for _, method, path, body in endpoints(stocked):
        assert_error(call(api, method, path, body, None), 401, "auth.token_missing")


def test_the_other_groups_permission_answers_403(api, stocked):
    _, reader_of_everything_else = new_user(["accounts.read"], [stocked])
    for _permission, method, path, body in endpoints(stocked):
        assert_error(call(api, method, path, body, reader_of_everything_else), 403, "auth.permission_denied")
    _, lookup_only = new_user(["tables.read"], [stocked])
    assert_error(
        call(api, "POST", f"/resource/{stocked}/tables?name=X&staticName=Rates", csv_zip(RATES_V1), lookup_only),
        403,
        "auth.permission_denied",
    )
    assert_error(
        call(api, "GET", f"/resource/{stocked}/constraints/Vehicles/record", None, lookup_only),
        403,
        "auth.permission_denied",
    )


def test_another_tenants_tables_are_not_found(api, admin_token, stocked):
    other = tables_tenant(api, admin_token)
    for _, method, path, body in endpoints(other):
        if method == "POST":
            continue  # creating in the other tenant is allowed: the names are its own
        response = call(api, method, path, body, admin_token)
        assert response.status_code == 404, (method, path, response.body)
