"""Shared by the sweeps over the whole route table: a configured tenant holding one record of every kind
(built through the API), the real value of every path variable, a valid request for every route (its query
and its body, encoded as the route's contract declares), the route table itself, and callers made through
the API."""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

import simplejson

from chalicelib.core.ids import new_locator
from chalicelib.http.contract import Contract, Encoding, contract_of
from chalicelib.http.endpoint import EndpointSpec
from chalicelib.runtime import due, wiring
from chalicelib.uploads.purposes import Purpose, permissions_for
from tests.api.billing.support import billing_model
from tests.api.migration.support import CREATED_BY, account_request
from tests.api.quotes.support import auto, new_account, vehicle
from tests.builders import system_ctx, unique_name
from tests.support.api import call, ok
from tests.support.configs import (
    BASE_RATES_CSV,
    CITIES_CSV,
    QUOTE_PLUGINS,
    VALUE_BANDS_CSV,
    deployed_tenant,
    package_with_files,
    quotes_model,
    table_zip,
    upload_table,
)

CONSUMING_SUFFIXES = ("/issue", "/accept", "/refuse", "/discard", "/reset", "/revoke", "/credentials")
"""Routes that, when they succeed, use a record up (an issued or discarded quote takes no more changes):
they run after the others, so the others meet the records in their first state."""


def routes(app: Any) -> list[tuple[str, str, Any]]:
    """Every (path, method, route entry) of the app, the record-consuming ones last."""
    table = [(path, method, entry) for path, methods in app.routes.items() for method, entry in methods.items()]
    return sorted(table, key=lambda r: r[1] == "DELETE" or r[0].endswith(CONSUMING_SUFFIXES))


def route_id(route: tuple[str, str, Any]) -> str:
    return f"{route[1]} {route[0]}"


def spec_of(entry: Any) -> EndpointSpec:
    """What the route's @endpoint declares: its permissions, whether it is public, ..."""
    spec: EndpointSpec = entry.view_function.__endpoint__
    return spec


def contract(entry: Any) -> Contract:
    """What the route's view declares: its body (and the body's encoding), its query, its answer."""
    return contract_of(inspect.unwrap(entry.view_function))


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


CONTENT_TYPES: dict[Encoding, str] = {
    "json": "application/json",
    "file": "application/zip",
    "form": "application/x-www-form-urlencoded",
    "text": "text/plain",
    "multipart": "application/json",
}
"""The Content-Type a request body is sent in, by the encoding the route's contract declares (a multipart
route's JSON form)."""
TOKEN_LIFETIME = timedelta(days=3650)


@dataclass
class World:
    """A configured tenant with an account, a draft and an issued quote, the issued policy, a draft change, a
    quick quote, an underwriting flag, contacts, lookup/range/constraint tables and a deployed configuration;
    plus a user, a role and a named token of the builder, outside the tenant. The account's, quote's and
    policy's numbers and the tables' names are this world's only (another world's tenant holds none of them)."""

    tenant: str
    values: dict[str, str] = field(default_factory=dict)
    bodies: dict[str, Any] = field(default_factory=dict)
    """A valid request body by route function name, for every route that takes one: a JSON value, the bytes
    of an upload, the text of a text body, the fields of a form."""
    queries: dict[str, str] = field(default_factory=dict)
    """A valid query string by route function name, for every route whose query has a required field (and a
    few more, where the answer depends on it)."""
    bodies_by_permission: dict[str, dict[str, Any]] = field(default_factory=dict)
    """By route function name, then permission: the valid body for a caller holding that permission alone, where
    the body decides which of the route's permissions it needs (an upload's purpose)."""

    @property
    def tenant_records(self) -> dict[str, str]:
        """The values that belong to the tenant's data (locators, numbers, table names), not to the user
        directory, to the configuration's names or to the public pages."""
        shared = {
            "tenantLocator",
            "users/locator",
            "roles/locator",
            "username",
            "tokenOrName",
            "transactionType",
            "tag",
        }
        return {key: value for key, value in self.values.items() if key not in shared}


@dataclass(frozen=True)
class Request:
    """A route's query and body, the body encoded as the route's contract declares."""

    query: str
    content_type: str
    body: bytes

    def url(self, path: str) -> str:
        return f"{path}?{self.query}" if self.query else path


def request_for(world: World, entry: Any, permission: str | None = None) -> Request:
    """The world's valid request for the route (for a caller holding `permission` alone, when the body decides
    what it needs). A route whose query has a required field, or whose body is required, and for which the
    world has none, fails here, naming the route and what to add to build_world()."""
    declared = contract(entry)
    name, route = entry.view_name, f"{entry.method} {entry.uri_pattern}"
    required = [n for n, f in declared.query.model_fields.items() if f.is_required()] if declared.query else []
    assert not required or name in world.queries, (
        f"{route}: no query with its required {', '.join(required)}; add World.queries[{name!r}] in build_world()"
    )
    query = world.queries.get(name, "")
    if declared.body is None:
        return Request(query, CONTENT_TYPES["json"], b"")
    encoding = declared.body.encoding
    assert name in world.bodies or not declared.body.required, (
        f"{route}: no valid {encoding} body; add World.bodies[{name!r}] in build_world()"
    )
    body = world.bodies_by_permission.get(name, {}).get(permission or "", world.bodies.get(name))
    return Request(query, CONTENT_TYPES[encoding], _encoded(body, encoding))


def _encoded(body: Any, encoding: Encoding) -> bytes:
    if body is None:
        return b""
    if encoding == "file":
        return bytes(body)
    if encoding == "text":
        return str(body).encode()
    if encoding == "form":
        return urlencode(body).encode()
    return simplejson.dumps(body, use_decimal=True).encode()


def send(api: Any, method: str, url: str, token: str, request: Request) -> Any:
    return api.http.request(
        method,
        url,
        body=request.body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": request.content_type, "Accept": "*/*"},
    )


@dataclass(frozen=True)
class Caller:
    locator: str
    token: str


def new_caller(
    api: Any, admin: str, permissions: Iterable[str], tenants: list[str], token_tenants: list[str] | None = None
) -> Caller:
    """A service account holding `permissions` (through a role of its own) on `tenants`, and a named token of it
    carrying exactly `permissions` (so not the `users.custom` every user holds, unless asked) on `token_tenants`
    (default: `tenants`). Made through the API by `admin`, who must hold all of it (the outranking rules)."""
    held = sorted(permissions)
    role = ok(
        call(
            api,
            "POST",
            "/auth/roles",
            admin,
            {"name": f"role-{new_locator().lower()}", "description": "a sweep's caller", "permissions": held},
        )
    )
    user = ok(
        call(
            api,
            "POST",
            "/auth/users",
            admin,
            {
                "userName": unique_name("caller"),
                "firstName": "Sweep",
                "lastName": "Caller",
                "serviceAccount": True,
                "roles": [role["name"]],
                "tenants": tenants,
            },
        )
    )["locator"]
    token = ok(
        call(
            api,
            "POST",
            f"/auth/users/{user}/tokens",
            admin,
            {
                "name": "sweep",
                "expiresAt": (datetime.now(timezone.utc) + TOKEN_LIFETIME).isoformat(),
                "permissions": held,
                "tenants": tenants if token_tenants is None else token_tenants,
            },
        )
    )
    return Caller(user, token)


@contextmanager
def module_client(app: Any) -> Iterator[Any]:
    """A test client for a module-scoped fixture: those run before the per-test clock and job queue are wired,
    so this wires the same ones (the clock at the conftest instant) while it is open, and runs the jobs its
    requests queued when it closes."""
    from chalice.test import Client

    from chalicelib.core.clock import FixedClock
    from chalicelib.runtime import wiring
    from chalicelib.runtime.jobs import InlineJobQueue
    from tests.conftest import ROOT

    jobs = InlineJobQueue()
    wiring.override(clock=FixedClock(datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)), job_queue=jobs)
    try:
        with Client(app, stage_name="test", project_dir=str(ROOT)) as client:
            yield client
        jobs.drain()
    finally:
        wiring.reset()


def _upload_body(purpose: str, tenant: str | None) -> dict[str, Any]:
    """POST /uploads of a small file for `purpose`, for `tenant` (None: for no tenant)."""
    return {"purpose": purpose, "size": 10, "sha256": "0" * 64, **({"tenantLocator": tenant} if tenant else {})}


def make_world(app: Any, token: str) -> World:
    """build_world() for a module-scoped fixture (module_client)."""
    with module_client(app) as client:
        return build_world(client, token)


def build_world(api: Any, token: str) -> World:
    """Every record through the API, by `token` (holding every permission on every tenant; a builder builds one
    world (its named token's name is the world's own: a module's world is built again in a process where xdist's
    worksteal took the module's tests apart, and a user holds a token name once)."""
    suffix = new_locator()
    model = billing_model("FullPay")
    model["schedules"] = {"Equipment": {"resetOnRenewal": False, "data": {"serial": {"type": "string"}}}}
    model["exposures"]["Vehicle"]["schedule"] = "Equipment"
    package_bytes = package_with_files(model, {"plugins/python/auto.py": QUOTE_PLUGINS.encode()})
    tenant = deployed_tenant(api, token, package_bytes)
    tables = {
        "tables": ("BaseRates", BASE_RATES_CSV),
        "rangeTables": ("ValueBands", VALUE_BANDS_CSV),
        "constraints": ("Cities", CITIES_CSV),
    }
    for collection, (static_name, csv_text) in tables.items():
        upload_table(api, token, tenant, collection, f"{static_name}{suffix}", csv_text, static_name=static_name)
    base = f"/policy/{tenant}"

    account = new_account(api, token, tenant)
    ok(call(api, "PATCH", f"{base}/accounts/{account}/validate", token))
    account_number = ok(call(api, "POST", f"{base}/accounts/{account}/number/set?accountNumber=A-{suffix}", token))[
        "accountNumber"
    ]
    contact = new_locator()
    ok(
        call(
            api, "POST", f"{base}/accounts/{account}/contacts", token, {"contactLocator": contact, "roles": ["primary"]}
        )
    )

    draft = ok(call(api, "POST", f"{base}/quotes", token, auto(account)))["locator"]
    flag = ok(call(api, "POST", f"{base}/quotes/{draft}/underwritingFlags/info", token, {"note": "look"}))
    to_issue = ok(call(api, "POST", f"{base}/quotes", token, auto(account)))["locator"]
    ok(call(api, "POST", f"{base}/quotes/{to_issue}/number/set?quoteNumber=Q-{suffix}", token))
    ok(call(api, "POST", f"{base}/quotes/{to_issue}/reservedPolicyNumber/set?reservedPolicyNumber=P-{suffix}", token))
    issued = ok(call(api, "PATCH", f"{base}/quotes/{to_issue}/issue", token))
    policy = ok(call(api, "GET", f"{base}/policies/{issued['policyLocator']}", token))
    migration = ok(
        call(api, "POST", f"/migration/{tenant}/migrations/accounts/{account}", token, {"defaultCreatedBy": CREATED_BY})
    )["locator"]  # records for the world's account: none
    wiring.job_queue().drain()  # type: ignore[attr-defined]  # billing: the invoice of the full-pay plan; migration
    billing = f"/billing/{tenant}"
    invoice = ok(call(api, "GET", f"{billing}/invoices/accounts/{account}/list", token))["items"][0]
    invoice = ok(
        call(api, "POST", f"{billing}/invoices/{invoice['locator']}/number/set?invoiceNumber=I-{suffix}", token)
    )
    installment = ok(call(api, "GET", f"{billing}/installments/policies/{policy['locator']}/list", token))["items"][0]
    payment_body = {
        "accountLocator": account,
        "type": "Check",
        "amount": 10,
        "data": {},
        "targets": [{"containerType": "invoice", "containerLocator": invoice["locator"]}],
    }
    payment = ok(call(api, "POST", f"{billing}/payments", token, payment_body))
    ok(call(api, "POST", f"{billing}/payments/{payment['locator']}/number/set?paymentNumber=P-{suffix}", token))
    early_body = {
        "ignoreHolds": False,
        "installmentLocators": [],
        "accountLocator": account,
        "invoiceThroughTime": "2026-02-01T05:00:00Z",
    }
    early = ok(call(api, "POST", f"{billing}/invoices/earlyInvoicing", token, early_body))
    ok(
        call(
            api,
            "PATCH",
            f"{base}/policies/{policy['locator']}/delinquencyPlan",
            token,
            {"delinquencyPlanName": "Lenient"},
        )
    )
    due.run_step(system_ctx().for_tenant(tenant), datetime(2026, 2, 2, tzinfo=timezone.utc))  # the invoice falls due
    delinquency = ok(call(api, "GET", f"{billing}/delinquencies/accounts/{account}/list", token))["items"][0]
    reminder = ok(call(api, "GET", f"{billing}/delinquencies/{delinquency['locator']}/events/list", token))["items"][0]
    billing_hold = ok(
        call(api, "POST", f"{billing}/holds", token, {"accountLocator": account, "targetType": "delinquency"})
    )
    quote_hold: dict[str, Any] = {
        "referenceType": "quote",
        "referenceLocator": draft,
        "quoteHoldScope": {"quoteState": "priced"},
    }
    entity_hold = ok(call(api, "PUT", f"{base}/holds", token, quote_hold))  # a draft: it holds nothing
    write_off_body = {
        "accountLocator": account,
        "targets": [{"containerType": "invoice", "containerLocator": invoice["locator"], "amount": 1}],
    }
    write_off = ok(call(api, "POST", f"{billing}/writeOffs", token, write_off_body))
    distribution_body = {"accountLocator": account, "amount": 1, "sources": [], "targets": []}
    distribution = ok(call(api, "POST", f"{billing}/creditDistributions", token, distribution_body))
    disbursement_body = {
        "accountLocator": account,
        "type": "Refund",
        "amount": 1,
        "data": {},
        "sources": [],
        "useDefaultFinancialInstrument": False,
    }
    disbursement = ok(call(api, "POST", f"{billing}/disbursements", token, disbursement_body))
    anonymizing = {"references": {"account": [account]}}  # restricted (a pending policy): the job changes nothing
    anonymization = ok(call(api, "POST", f"/compliance/{tenant}/anonymize", token, anonymizing))[0]
    stateless = {
        "accountLocator": account,
        "productName": "PersonalAuto",
        "termStartTime": "2026-02-01T05:00:00Z",
        "termEndTime": "2027-02-01T05:00:00Z",
        "charges": [{"chargeType": "premium", "amount": "100.00"}],
    }
    ok(
        call(
            api,
            "POST",
            f"{base}/policies/{policy['locator']}/contacts",
            token,
            {"contactLocator": contact, "roles": ["primary"]},
        )
    )
    change = [{"action": "params", "effectiveTime": "2026-08-01T04:00:00Z"}]
    draft_change = ok(call(api, "PATCH", f"{base}/policies/{policy['locator']}/change", token, change))
    quick = ok(
        call(api, "POST", f"{base}/quickquotes", token, {k: v for k, v in auto("").items() if k != "accountLocator"})
    )["locator"]
    equipment = ok(call(api, "GET", f"{base}/quotes/{draft}", token))["element"]["elements"][0]["staticLocator"]
    schedule = f"{base}/quotes/{draft}/schedules/{equipment}"
    ok(call(api, "PUT", schedule, token, [{"data": {"serial": "S1"}}, {"data": {"serial": "S2"}}]))
    scheduled = ok(call(api, "GET", schedule, token))["items"]
    deserialize_job = ok(
        call(
            api,
            "POST",
            f"{schedule}/deserialize?params=%7B%7D",
            token,
            raw=b"serial\nS3\n",
            headers={"Content-Type": "text/csv"},
        )
    )["jobLocator"]
    attached = ok(
        call(
            api,
            "POST",
            f"/document/{tenant}/documents/attach?referenceType=quote&referenceLocator="
            f"{to_issue}&name=Proposal&documentFormat=txt",
            token,
            raw=b"a proposal",
            headers={"Content-Type": "text/plain"},
        )
    )

    created = call(
        api,
        "POST",
        f"{base}/accounts/{account}/contacts",
        token,
        {"contactLocator": new_locator(), "roles": ["billing"]},
    )
    event = ok(call(api, "GET", f"/event/{tenant}/events/request/{created.headers['X-Request-Id']}", token))[0]
    version = ok(call(api, "GET", f"/config/{tenant}/deployments", token))["metadata"]["latestVersion"]
    paging_token = ok(call(api, "GET", f"/event/{tenant}/events/list?pageSize=2", token))["pagingToken"]

    user_name = unique_name()
    user = ok(
        call(
            api,
            "POST",
            "/auth/users",
            token,
            {"userName": user_name, "firstName": "Throw", "lastName": "Away", "tenants": [tenant]},
        )
    )["locator"]
    role = ok(
        call(
            api,
            "POST",
            "/auth/roles",
            token,
            {"name": f"role-{new_locator().lower()}", "description": "spare", "permissions": ["accounts.read"]},
        )
    )
    token_name = f"spare-{suffix.lower()}"
    expires = (datetime.now(timezone.utc) + timedelta(days=1)).isoformat()
    ok(
        call(
            api,
            "POST",
            "/auth/users/tokens",
            token,
            {"name": token_name, "expiresAt": expires, "permissions": ["accounts.read"], "tenants": [tenant]},
        )
    )

    flags = flag["flags"]
    person = {
        "type": "PersonAccount",
        "data": {
            "firstName": "Ada",
            "lastName": "Lovelace",
            "email": "ada@example.com",
            "birthDate": "1990-12-10",
            "income": "1000.50",
            "dependents": 2,
            "smoker": False,
            "lastContact": "2026-01-02T03:04:05Z",
            "address": {"line1": "12 St James's Square", "city": "London", "postcode": "12345"},
        },
        "preferences": {"installmentPreferences": {"installmentWeights": [1], "cadence": "monthly"}},
    }
    quote = auto(
        account,
        data={"channel": "web", "drivers": [{"name": "Ada", "licensed": "2010-05-01"}]},
        expirationTime="2026-01-31T05:00:00Z",
    )  # no end: the product's term sets it
    quote_changes = {
        "startTime": "2026-02-01T05:00:00Z",
        "endTime": "2027-02-01T05:00:00Z",
        "expirationTime": "2026-01-31T05:00:00Z",
        "invoiceFeeAmount": 5,
        "setData": {"channel": "agent"},
        "preferences": person["preferences"],
    }
    token_request = {"name": "probe", "expiresAt": expires, "permissions": ["accounts.read"], "tenants": [tenant]}
    flag_changes = {"addFlags": [{"level": "info", "note": "look again"}], "clearFlags": []}
    transaction = policy["issuedTransactionLocator"]
    levels = ("approve", "block", "decline", "reject", "info")
    bodies: dict[str, Any] = {
        "create_own_token": token_request,
        "create_user_token": token_request,
        "anonymize_data": anonymizing,
        "create_user": {
            "userName": unique_name("created"),
            "firstName": "New",
            "lastName": "User",
            "tenants": [tenant],
        },
        "update_user": {"firstName": "Throw", "lastName": "Away", "tenants": [tenant]},
        "reset_user_password": "a-long-and-unusual-passphrase-42",
        "update_user_roles": {"addRoles": [role["name"]], "removeRoles": []},
        "update_user_tenants": {"addTenants": [tenant], "removeTenants": []},
        "create_role": {
            "name": f"role-{new_locator().lower()}",
            "description": "created",
            "permissions": ["accounts.read"],
        },
        "update_role": {
            "name": role["name"],
            "description": "changed",
            "version": role["version"],
            "addPermissions": ["accounts.list"],
            "removePermissions": [],
        },
        **{
            name: package_bytes
            for name in (
                "create_tenant_from_package",
                "validate_configuration",
                "format_configuration",
                "deploy_configuration",
                "validate_tenant_configuration",
            )
        },
        **{
            f"{verb}_{kind}_table": table_zip(static_name, csv_text)
            for verb in ("create", "replace")
            for kind, (static_name, csv_text) in zip(("lookup", "range", "constraint"), tables.values())
        },
        "create_account": person,
        "replace_account": person,
        "update_account": {"setData": {"income": "20.25", "lastContact": "2026-01-03T00:00:00Z"}},
        "update_account_billing_level": {"billingLevel": "account"},
        "add_account_contact": {"contactLocator": contact, "roles": ["billing"]},
        "update_account_contact": {"addRoles": ["billing"], "removeRoles": []},
        "evaluate_account_constraints": {account: {"email": "ada@example.com"}},
        "update_policy_billing_level": {"billingLevel": "account"},
        "update_policy_delinquency_plan": {"delinquencyPlanName": "Lenient"},
        "update_policy_jurisdiction": {"jurisdiction": "CA"},
        "add_policy_static_data": {},
        "replace_policy_static_data": {},
        "update_policy_static_data": {"setData": {}},
        "add_policy_contact": {"contactLocator": contact, "roles": ["billing"]},
        "update_policy_contact": {"addRoles": ["billing"], "removeRoles": []},
        "create_quote": quote,
        "preview_quote_validation": quote,
        "preview_quote_price": quote,
        "update_quote": quote_changes,
        "add_quote_elements": [vehicle()],
        "remove_quote_elements": [],
        "update_quote_underwriting_flags": flag_changes,
        **{f"add_quote_{level}_flag": {"note": "look"} for level in levels},
        "add_quote_static_data": {},
        "replace_quote_static_data": {},
        "update_quote_static_data": {"setData": {}},
        "evaluate_quote_constraints": {},
        "evaluate_quick_quote_constraints": {},
        "create_quick_quote": {k: v for k, v in quote.items() if k != "accountLocator"},
        "update_quick_quote": {k: v for k, v in quote_changes.items() if k in ("startTime", "endTime", "setData")},
        **{
            name: change
            for name in (
                "change_policy",
                "renew_policy",
                "reinstate_policy",
                "create_policy_transaction",
                "preview_transaction_validation",
                "preview_transaction_price",
                "preview_transaction_underwriting",
            )
        },
        "cancel_policy": change[0],
        "reverse_policy_change": {
            "baseLocator": transaction,
            "toTransaction": transaction,
            "reverseTransactions": [transaction],
        },
        "evaluate_transaction_constraints": {},
        "create_payment": payment_body,
        "update_payment": {"amount": 11},
        "request_early_invoicing": early_body,
        "update_invoice": {"autopayTime": "2026-02-01T05:00:00Z", "suppressAutopay": True},
        "add_transaction_change_instruction": change[0],
        "update_transaction_change_instruction": change[0],
        "add_transaction_elements": [],
        "remove_transaction_elements": [],
        "update_transaction_elements": {"locator": policy["latestSegmentLocator"]},
        "update_transaction_underwriting_flags": flag_changes,
        **{f"add_transaction_{level}_flag": {"note": "look"} for level in levels},
        "advance_clock": {"to": "2030-01-01T00:00:00Z"},  # the world's tenant has no test clock: 409
        **{f"add_{kind}_schedule_items": [{"data": {"serial": "S4"}}] for kind in ("quote", "transaction")},
        **{
            f"{verb}_{kind}_schedule{suffix}": b"serial\nS5\n"
            for kind in ("quote", "transaction")
            for verb, suffix in (("upload", "_items"), ("deserialize", ""))
        },
        **{
            f"update_{kind}_schedule_items": [
                {"locator": scheduled[0]["locator"], "setData": {"serial": "S6"}, "removeData": {}}
            ]
            for kind in ("quote", "transaction")
        },
        **{f"delete_{kind}_schedule_items": [scheduled[1]["locator"]] for kind in ("quote", "transaction")},
        "attach_document": b"a letter",
        "replace_document": b"a new letter",
        "create_hold": {"accountLocator": account, "targetType": "invoicing"},
        "update_hold": {"targetType": "invoicing"},
        "update_delinquency": {"graceEndAt": "2026-03-15T05:00:00Z"},
        "update_delinquency_event": {"triggerTime": "2026-03-01T05:00:00Z"},
        "create_entity_hold": quote_hold,
        "create_write_off": write_off_body,
        "reverse_write_off": {"amount": Decimal("0.50")},
        "create_credit_distribution": distribution_body,
        "reverse_credit_distribution": {"reversalType": "test"},
        "create_disbursement": disbursement_body,
        "update_installments": {"installmentLocators": [installment["locator"]], "dueTime": "2026-02-01T05:00:00Z"},
        "update_entity_hold": {
            **quote_hold,
            "description": "",
            "holdStaticData": False,
            "policyHoldScope": None,
            "referenceUpdate": False,
        },
        "create_upload": _upload_body("configuration", tenant),
        "start_migration": [account_request(f"W-{suffix}")],
        "start_account_migration": {"defaultCreatedBy": CREATED_BY},
        "patch_migration": {"accountLocator": account, "defaultCreatedBy": CREATED_BY},
    }
    bodies_by_permission = {
        "create_upload": {  # an upload needs the permission of its purpose's operation
            permission: _upload_body(purpose, tenant if for_tenant else None)
            for purpose in Purpose
            for for_tenant in (True, False)
            for permission in permissions_for(purpose, for_tenant) or ()
        }
    }
    queries = {
        **{
            f"create_{kind}_table": urlencode({"name": f"{static_name}New{suffix}", "staticName": static_name})
            for kind, (static_name, _) in zip(("lookup", "range", "constraint"), tables.values())
        },
        "fetch_table_record": "key=web&byStaticName=false",
        "fetch_range_table_record": "key=auto&boundValue=3&byStaticName=false",
        "fetch_constraint_record": "key=CA&byStaticName=false",
        "fetch_deployment_diff": urlencode({"config": simplejson.dumps(quotes_model())}),
        "list_events": urlencode({"pagingToken": paging_token}),
        "set_account_number": "accountNumber=N-1",
        "set_policy_number": "policyNumber=N-1",
        "set_quote_number": "quoteNumber=N-1",
        "set_quote_reserved_policy_number": "reservedPolicyNumber=N-1",
        "fetch_policy_snapshot": "date=2026-06-01T00:00:00Z",
        "list_payments": urlencode({"accountLocator": account}),
        "set_invoice_number": "invoiceNumber=N-1",
        "list_credits": urlencode({"accountLocator": account}),
        "preview_stateless_invoices": urlencode({"quotePreviewRequest": simplejson.dumps(stateless)}),
        **{f"deserialize_{kind}_schedule": urlencode({"params": "{}"}) for kind in ("quote", "transaction")},
        "attach_document": urlencode(
            {"referenceType": "quote", "referenceLocator": to_issue, "name": "Letter", "documentFormat": "txt"}
        ),
        "render_document": urlencode({"referenceType": "quote", "referenceLocator": to_issue}),
        "set_payment_number": "paymentNumber=N-2",
        **{
            view: urlencode({"references": simplejson.dumps(anonymizing["references"])})
            for view in ("preview_anonymization", "get_anonymization_references")
        },
        "fetch_anonymization_jobs": urlencode({"jobLocators": anonymization["jobLocator"]}),
    }
    return World(
        tenant=tenant,
        bodies=bodies,
        queries=queries,
        bodies_by_permission=bodies_by_permission,
        values={
            "tenantLocator": tenant,
            "tag": "accounts",
            "accounts/locator": account,
            "accountNumber": account_number,
            "accounts/contacts": contact,
            "quotes/locator": draft,
            "quoteNumber": issued["quoteNumber"],
            "flagLocator": flags[-1]["locator"],
            "quickquotes/locator": quick,
            "policies/locator": policy["locator"],
            "policyLocator": policy["locator"],
            "policyNumber": policy["policyNumber"],
            "policies/contacts": contact,
            "terms/locator": policy["latestTermLocator"],
            "transactions/locator": transaction,
            "segmentLocator": policy["latestSegmentLocator"],
            "transactionType": "renewal",
            "instructionLocator": draft_change["changeInstructions"][0]["locator"],
            "events/locator": event["locator"],
            "request/locator": created.headers["X-Request-Id"],
            "version": version,
            "pagingToken": paging_token,
            **{f"{collection}/name": f"{static_name}{suffix}" for collection, (static_name, _) in tables.items()},
            "installmentLatticeLocator": installment["installmentLatticeLocator"],
            "installmentLocator": installment["locator"],
            "quoteLocator": to_issue,
            "transactionLocator": transaction,
            "accountLocator": account,
            "refLocator": account,
            "invoices/locator": invoice["locator"],
            "invoiceNumber": invoice["invoiceNumber"],
            "payments/locator": payment["locator"],
            "jobLocator": early["jobLocator"],
            "invoicesLifecycle/locator": invoice["locator"],
            "staticElementLocator": equipment,
            "deserializeJobs/locator": deserialize_job,
            "writeOffs/locator": write_off["locator"],
            "creditDistributions/locator": distribution["locator"],
            "disbursements/locator": disbursement["locator"],
            "users/locator": user,
            "username": user_name,
            "roles/locator": role["locator"],
            "tokenOrName": token_name,
            "documents/locator": attached["locator"],
            "quote/locator": to_issue,
            "transaction/locator": transaction,
            "segment/locator": policy["latestSegmentLocator"],
            "termLocator": policy["latestTermLocator"],
            "delinquencies/locator": delinquency["locator"],
            "delinquencyLocator": delinquency["locator"],
            "delinquencyEventLocator": reminder["locator"],
            "invoiceLocator": invoice["locator"],
            "holds/locator": billing_hold["locator"],
            "holdLocator": entity_hold["locator"],
            "paymentNumber": f"P-{suffix}",
            "migrationLocator": migration,
        },
    )
