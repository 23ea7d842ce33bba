"""Shared by the sweeps over the whole route table: a configured tenant holding one record of every kind
(built through the API), the real value of every path variable, and the route table itself."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from chalicelib.core.ids import new_locator
from tests.api.quotes.support import auto, new_account, vehicle
from tests.builders import unique_name
from tests.support.api import call, ok
from tests.support.configs import CITIES_CSV, quotes_tenant, upload_constraint_table

CONSUMING_SUFFIXES = ("/issue", "/accept", "/refuse", "/discard", "/reset", "/revoke", "/credentials")
"""Routes that, when they succeed, use a record up (an issued or discarded quote takes no more changes):
they run after the others, so the others meet the records in their first state."""


def routes(app: Any) -> list[tuple[str, str, Any]]:
    """Every (path, method, route entry) of the app, the record-consuming ones last."""
    table = [(path, method, entry) for path, methods in app.routes.items() for method, entry in methods.items()]
    return sorted(table, key=lambda r: r[1] == "DELETE" or r[0].endswith(CONSUMING_SUFFIXES))


def route_id(route: tuple[str, str, Any]) -> str:
    return f"{route[1]} {route[0]}"


def variables(path: str) -> list[str]:
    return [part[1:-1] for part in path.split("/") if part.startswith("{")]


def value_key(path: str, variable: str) -> str:
    """What a path variable names: `{locator}` and `{name}` by the collection before them, a contact by the
    record that holds it, every other variable by its own name."""
    parts = path.split("/")
    if variable == "contactLocator":
        return parts[parts.index("{locator}") - 1] + "/contacts"
    if variable in ("locator", "name"):
        return parts[parts.index("{" + variable + "}") - 1] + "/" + variable
    return variable


def fill(path: str, values: dict[str, str], **overrides: str) -> str:
    """`path` with every variable replaced by its real value, or by `overrides[variable]`."""
    filled = path
    for variable in variables(path):
        if variable in overrides:
            value = overrides[variable]
        else:
            key = value_key(path, variable)
            assert key in values, f"{path}: no real value for {{{variable}}} ({key}); add one in build_world()"
            value = values[key]
        filled = filled.replace("{" + variable + "}", value, 1)
    return filled


@dataclass
class World:
    """A configured tenant with an account, a draft and an issued quote, the issued policy, a quick quote,
    an underwriting flag, contacts, lookup/range/constraint tables and a deployed configuration; plus a
    user, a role and a named token of the caller, outside the tenant."""

    tenant: str
    values: dict[str, str] = field(default_factory=dict)
    bodies: dict[str, Any] = field(default_factory=dict)
    """A valid request body by route function name, for the routes whose bodies carry typed values."""

    @property
    def tenant_records(self) -> dict[str, str]:
        """The values that belong to the tenant's data (locators and numbers), not to the user directory
        or to the configuration's names."""
        shared = {"tenantLocator", "users/locator", "roles/locator", "username", "tokenOrName", "tables/name",
                  "rangeTables/name", "constraints/name"}
        return {key: value for key, value in self.values.items() if key not in shared}


def make_world(app: Any, token: str) -> World:
    """build_world() for a module-scoped fixture: those run before the per-test clock and job queue are
    wired, so this wires the same ones (the clock at the conftest instant) for the time it builds."""
    from chalice.test import Client

    from chalicelib.core.clock import FixedClock
    from chalicelib.runtime import wiring
    from chalicelib.runtime.jobs import InlineJobQueue
    from tests.conftest import ROOT

    jobs = InlineJobQueue()
    wiring.override(clock=FixedClock(datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)), job_queue=jobs)
    try:
        with Client(app, stage_name="test", project_dir=str(ROOT)) as client:
            world = build_world(client, token)
        jobs.drain()
        return world
    finally:
        wiring.reset()


def build_world(api: Any, token: str) -> World:
    tenant = quotes_tenant(api, token)
    upload_constraint_table(api, token, tenant, "Cities", CITIES_CSV)
    base = f"/policy/{tenant}"

    account = new_account(api, token, tenant)
    account_number = ok(call(api, "PATCH", f"{base}/accounts/{account}/validate", token))["accountNumber"]
    contact = new_locator()
    ok(call(api, "POST", f"{base}/accounts/{account}/contacts", token, {"contactLocator": contact,
                                                                         "roles": ["primary"]}))

    draft = ok(call(api, "POST", f"{base}/quotes", token, auto(account)))["locator"]
    flag = ok(call(api, "POST", f"{base}/quotes/{draft}/underwritingFlags/info", token, {"note": "look"}))
    to_issue = ok(call(api, "POST", f"{base}/quotes", token, auto(account)))["locator"]
    issued = ok(call(api, "PATCH", f"{base}/quotes/{to_issue}/issue", token))
    policy = ok(call(api, "GET", f"{base}/policies/{issued['policyLocator']}", token))
    ok(call(api, "POST", f"{base}/policies/{policy['locator']}/contacts", token, {"contactLocator": contact,
                                                                                   "roles": ["primary"]}))
    change = [{"action": "params", "effectiveTime": "2026-08-01T04:00:00Z"}]
    draft_change = ok(call(api, "PATCH", f"{base}/policies/{policy['locator']}/change", token, change))
    quick = ok(call(api, "POST", f"{base}/quickquotes", token,
                    {k: v for k, v in auto("").items() if k != "accountLocator"}))["locator"]

    created = call(api, "POST", f"{base}/accounts/{account}/contacts", token,
                   {"contactLocator": new_locator(), "roles": ["billing"]})
    event = ok(call(api, "GET", f"/event/{tenant}/events/request/{created.headers['X-Request-Id']}", token))[0]
    version = ok(call(api, "GET", f"/config/{tenant}/deployments", token))["metadata"]["latestVersion"]
    paging_token = ok(call(api, "GET", f"/event/{tenant}/events/list?pageSize=2", token))["pagingToken"]

    user_name = unique_name()
    user = ok(call(api, "POST", "/auth/users", token, {"userName": user_name, "firstName": "Throw", "lastName": "Away",
                                                       "tenants": [tenant]}))["locator"]
    role = ok(call(api, "POST", "/auth/roles", token, {"name": f"role-{new_locator().lower()}", "description": "spare",
                                                       "permissions": ["accounts.read"]}))["locator"]
    token_name = "spare"
    expires = (datetime.now(timezone.utc) + timedelta(days=1)).isoformat()
    ok(call(api, "POST", "/auth/users/tokens", token, {"name": token_name, "expiresAt": expires,
                                                       "permissions": ["accounts.read"], "tenants": [tenant]}))

    flags = flag["flags"]
    person = {"type": "PersonAccount", "data": {
        "firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com", "birthDate": "1990-12-10",
        "income": "1000.50", "dependents": 2, "smoker": False, "lastContact": "2026-01-02T03:04:05Z",
        "address": {"line1": "12 St James's Square", "city": "London", "postcode": "12345"}},
        "preferences": {"installmentPreferences": {"installmentWeights": [1], "cadence": "monthly"}}}
    quote = auto(account, data={"channel": "web", "drivers": [{"name": "Ada", "licensed": "2010-05-01"}]},
                 expirationTime="2026-01-31T05:00:00Z")  # no end: the product's term sets it
    quote_changes = {"startTime": "2026-02-01T05:00:00Z", "endTime": "2027-02-01T05:00:00Z",
                     "expirationTime": "2026-01-31T05:00:00Z", "invoiceFeeAmount": 5, "setData": {"channel": "agent"},
                     "preferences": person["preferences"]}
    bodies = {
        "create_account": person, "replace_account": person,
        "update_account": {"setData": {"income": "20.25", "lastContact": "2026-01-03T00:00:00Z"}},
        "create_quote": quote, "preview_quote_validation": quote, "preview_quote_price": quote,
        "update_quote": quote_changes, "add_quote_elements": [vehicle()],
        "create_quick_quote": {k: v for k, v in quote.items() if k != "accountLocator"},
        "update_quick_quote": {k: v for k, v in quote_changes.items() if k in ("startTime", "endTime", "setData")},
        "create_own_token": {"name": "probe", "expiresAt": expires, "permissions": ["accounts.read"],
                             "tenants": [tenant]},
        **{name: change for name in ("change_policy", "renew_policy", "reinstate_policy", "create_policy_transaction",
                                     "preview_transaction_validation", "preview_transaction_price",
                                     "preview_transaction_underwriting")},
        "cancel_policy": change[0], "add_transaction_change_instruction": change[0],
        "update_transaction_change_instruction": change[0],
    }
    return World(tenant=tenant, bodies=bodies, values={
        "tenantLocator": tenant,
        "accounts/locator": account, "accountNumber": account_number, "accounts/contacts": contact,
        "quotes/locator": draft, "quoteNumber": issued["quoteNumber"], "flagLocator": flags[-1]["locator"],
        "quickquotes/locator": quick,
        "policies/locator": policy["locator"], "policyLocator": policy["locator"],
        "policyNumber": policy["policyNumber"], "policies/contacts": contact,
        "terms/locator": policy["latestTermLocator"], "transactions/locator": policy["issuedTransactionLocator"],
        "segmentLocator": policy["latestSegmentLocator"],
        "transactionType": "renewal", "instructionLocator": draft_change["changeInstructions"][0]["locator"],
        "events/locator": event["locator"], "request/locator": created.headers["X-Request-Id"],
        "version": version, "pagingToken": paging_token,
        "tables/name": "BaseRates", "rangeTables/name": "ValueBands", "constraints/name": "Cities",
        "users/locator": user, "username": user_name, "roles/locator": role, "tokenOrName": token_name,
        "asset": "swagger-ui.css",
    })
