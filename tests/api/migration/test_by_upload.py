"""A migration started from an upload (`?uploadLocator=`, DECISIONS.md "Uploads"): the request file is checked
(size, SHA-256) before it is read and used once; another tenant's upload, a wrong purpose or a bad file is a 4xx
that starts nothing."""

from __future__ import annotations

import inspect
import json

from chalicelib.http.contract import UPLOAD_LOCATOR, contract_of
from chalicelib.settings import settings
from chalicelib.uploads.purposes import Purpose
from tests.api.migration.support import account_request, fetch, migrations
from tests.api.uploads.support import by_reference, intent, put, uploaded
from tests.support.api import assert_error, call, ok
from tests.support.configs import configured_tenant


def _start(api, token, tenant, locator):
    return by_reference(api, "POST", migrations(tenant), token, locator, content_type="application/json")


def test_a_migration_started_by_upload_and_the_uploads_that_start_nothing(api, admin_token, tenant, jobs):
    content = json.dumps([account_request("SRC-U1"), account_request("SRC-U2")], default=str).encode()
    locator = uploaded(api, admin_token, "migration", content, tenant)
    started = ok(_start(api, admin_token, tenant, locator))
    assert (started["migrationState"], started["totalAccounts"]) == ("submitted", 2)
    assert_error(_start(api, admin_token, tenant, locator), 409, "upload.already_used")
    jobs.drain()
    assert fetch(api, admin_token, tenant, started["locator"])["completedAccounts"] == 2

    other = configured_tenant(api, admin_token)
    theirs = uploaded(api, admin_token, "migration", content, other)
    assert_error(_start(api, admin_token, tenant, theirs), 404, "upload.not_found")
    a_table = uploaded(api, admin_token, "table", content, tenant)
    assert_error(_start(api, admin_token, tenant, a_table), 400, "upload.wrong_purpose")
    swapped = ok(intent(api, admin_token, "migration", content, tenant))
    put(swapped, content.replace(b"SRC-U1", b"SRC-X1"))  # as long, another SHA-256
    assert_error(_start(api, admin_token, tenant, swapped["uploadLocator"]), 409, "upload.checksum_mismatch")
    bad = uploaded(api, admin_token, "migration", b'[{"accountData": {}}]', tenant)
    failed = assert_error(_start(api, admin_token, tenant, bad), 400, "request.invalid")
    assert "accountData" in json.dumps(failed)
    assert_error(call(api, "POST", migrations(tenant, "?uploadLocator=x"), admin_token, []), 400, "request.invalid")
    listed = ok(call(api, "GET", f"/policy/{tenant}/accounts/list?count=100", admin_token))["items"]
    assert len(listed) == 2  # SRC-U1 and SRC-U2 alone


def test_a_json_body_over_the_direct_limit_is_told_to_go_by_upload(api, admin_token, tenant):
    raw = b"[" + b" " * settings().max_json_body_bytes + b"]"
    refused = assert_error(
        call(api, "POST", migrations(tenant), admin_token, raw=raw, headers={"Content-Type": "application/json"}),
        413,
        "request.too_large",
    )
    assert "POST /uploads (purpose migration)" in refused["message"] and "?uploadLocator=" in refused["message"]


def test_every_route_that_takes_an_upload_reference_names_its_purpose(app):
    """What the 413 of a body over the direct limit names (http/endpoint.py): a route taking `?uploadLocator=`
    in its query or in place of its file body always has an upload purpose to name."""
    taking = {}
    for path, methods in app.routes.items():
        for method, entry in methods.items():
            contract = contract_of(inspect.unwrap(entry.view_function))
            by_query = contract.query is not None and UPLOAD_LOCATOR in contract.query.model_fields
            if by_query or contract.upload_purpose is not None:
                taking[f"{method} {path}"] = contract.referenced_upload_purpose
    assert taking["POST /migration/{tenantLocator}/migrations"] == "migration"
    assert taking["POST /config/createTenant"] == "configuration"
    assert set(taking.values()) <= set(Purpose)
