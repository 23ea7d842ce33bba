"""Every route of the app, called with bad input by a caller who may do anything, on a tenant that holds
real records: never a 5xx, and every 4xx is the error body of DECISIONS.md ("Errors"): `httpStatus` equal
to the status, a `code`, a `message` and the `requestId` of the X-Request-Id header.

Per route, in one test (the records are built once per module): no body; an empty, malformed (`{`),
array (`[]`) and non-UTF-8 body, JSON nested 1,000 deep, a lone surrogate (`"\ud800"`), a number beyond
DynamoDB's range (`1e400`) and a ZIP whose config.json nests 100,000 deep, in each Content-Type it
declares; its declared body model with every field a nested list, null or a long string; for the routes the
records come with a valid JSON body of, that body with one value at a time made wrong-typed, too long, a lone
surrogate, a date at the edge of the calendar or a number DynamoDB cannot store (38 nines included); each
path variable as a 300- and a 2,000-character string, `..%2F`, an unknown ULID and another tenant's
locator; garbage query parameters, and every field of its query model as a long string.

The 415 Chalice gives a Content-Type the route does not declare is in our error body too.
"""

from __future__ import annotations

import copy
import inspect
import io
import json
import re
import zipfile
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import Any, get_origin

import pytest
import simplejson
from pydantic import BaseModel, RootModel

from app import app as chalice_app
from chalicelib.core.ids import new_locator
from chalicelib.http.contract import contract_of
from tests.architecture.support import World, contract, fill, make_world, route_id, routes, variables
from tests.builders import new_tenant, new_user

ROUTES = routes(chalice_app)


def _deep_config_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("config.json", "[" * 100_000 + "]" * 100_000)
    return buffer.getvalue()


LONE_SURROGATE = "\ud800"
MALFORMED_BODIES: list[bytes] = [
    b"",
    b"{",
    b"[]",
    b"\xff\xfe not UTF-8",
    b"[" * 1000 + b"]" * 1000,
    b'{"name": "\\ud800", "userName": "\\ud800"}',
    b'{"x": 1e400}',
    _deep_config_zip(),
]
GARBAGE_QUERIES = ["offset=-1", "count=abc", "resolve=maybe", "date=notadate", "key=&key="]
LONG, LONGER = "x" * 300, "x" * 2000
"""LONGER passes DynamoDB's key size limits once in a key."""
EDGE_DATES = ["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00", "9999-12-01T00:00:00Z", "0001-01-01"]
"""Beyond the calendar in UTC, and a start whose term would end beyond it."""
EDGE_NUMBERS: list[Any] = [10**40, Decimal("1E+999999"), Decimal("1E+400"), "-1e-999999", Decimal("9" * 38)]
"""Numbers DynamoDB cannot store: more than 38 digits, beyond its exponent range (also as text); and 38
nines, which it can, but no amount of money derived from it can."""
DATE_LIKE = re.compile(r"^\d{4}-\d{2}-\d{2}")

HASH_KEYS = {"PK", "GSI1PK", "GSI2PK", "GSI3PK"}
RANGE_KEYS = {"SK", "GSI1SK", "GSI2SK", "GSI3SK"}
HASH_KEY_LIMIT, RANGE_KEY_LIMIT = 2048, 1024


@pytest.fixture(scope="module", autouse=True)
def dynamodb_key_limits(aws) -> Iterator[None]:
    """moto enforces DynamoDB's key size limits only when it stores an item; DynamoDB also answers a
    ValidationException to a GetItem, BatchGetItem, UpdateItem, DeleteItem or Query whose key (or key
    condition) is too large, and to an item whose index key is. This makes moto's client do the same."""
    from botocore.exceptions import ClientError

    from chalicelib.storage import clients

    def check(params: dict[str, Any], model: Any, **_: Any) -> None:
        for name, value, is_hash in _key_values(model.name, params):
            limit = HASH_KEY_LIMIT if is_hash else RANGE_KEY_LIMIT
            if len(value.encode()) > limit:
                raise ClientError(
                    {
                        "Error": {
                            "Code": "ValidationException",
                            "Message": (f"One or more parameter values were invalid: {name} exceeds {limit} bytes"),
                        }
                    },
                    model.name,
                )

    events = clients.dynamodb().meta.events
    events.register("provide-client-params.dynamodb", check)
    yield
    events.unregister("provide-client-params.dynamodb", check)


def _key_values(operation: str, params: dict[str, Any]) -> Iterator[tuple[str, str, bool]]:
    def of(item: dict[str, Any]) -> Iterator[tuple[str, str, bool]]:
        for name, value in item.items():
            if name in HASH_KEYS | RANGE_KEYS and "S" in value:
                yield name, value["S"], name in HASH_KEYS

    if operation in ("GetItem", "DeleteItem", "UpdateItem"):
        yield from of(params["Key"])
    elif operation == "PutItem":
        yield from of(params["Item"])
    elif operation == "BatchGetItem":
        for request in params["RequestItems"].values():
            for key in request["Keys"]:
                yield from of(key)
    elif operation == "BatchWriteItem":
        for requests in params["RequestItems"].values():
            for request in requests:
                yield from of(request.get("PutRequest", {}).get("Item") or request["DeleteRequest"]["Key"])
    elif operation == "TransactWriteItems":
        for action in params["TransactItems"]:
            op = next(iter(action.values()))
            yield from of(op.get("Item") or op["Key"])
    elif operation == "Query":
        names, condition = params.get("ExpressionAttributeNames", {}), params["KeyConditionExpression"]
        for placeholder, value in params.get("ExpressionAttributeValues", {}).items():
            if "S" in value and re.search(rf"{placeholder}\b", condition):
                equal_to = re.search(rf"(#\w+) = {placeholder}\b", condition)
                yield placeholder, value["S"], equal_to is not None and names.get(equal_to.group(1)) in HASH_KEYS


@pytest.fixture(scope="module")
def caller(app) -> str:
    """A bearer token holding every permission on every tenant."""
    return new_user(["*.*"], ["any"])[1]


@pytest.fixture(scope="module")
def world(app, caller) -> World:
    return make_world(app, caller)


@pytest.fixture(scope="module")
def other_tenant(app) -> str:
    """A tenant with nothing deployed and nothing in it."""
    return new_tenant()


def _fields(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def wrong_bodies(view: Any) -> list[Any]:
    """For the route's declared body model: every field a nested list, every field null, every field a
    long string; `{"x": [[1]]}` when the route declares no model body."""
    body = contract_of(inspect.unwrap(view)).body
    model = body.annotation if body is not None else None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return [{"x": [[1]]}]
    if issubclass(model, RootModel):
        return [[[[1]]] if get_origin(model.model_fields["root"].annotation) is list else {"x": [[1]]}]
    return [{name: value for name in _fields(model)} for value in ([[1]], None, LONGER)]


def wrong_queries(view: Any) -> list[str]:
    """The fixed garbage, plus every field of the route's declared query model at once as a long string."""
    query = contract_of(inspect.unwrap(view)).query
    extra = ["&".join(f"{name}={text}" for name in _fields(query)) for text in (LONG, LONGER)] if query else []
    return GARBAGE_QUERIES + [q for q in extra if q]


def _replacements(value: Any) -> list[Any]:
    found: list[Any] = [[[1]], None]
    if isinstance(value, bool):
        return found
    if isinstance(value, (int, Decimal)) or (isinstance(value, str) and _is_number(value)):
        return found + EDGE_NUMBERS
    if isinstance(value, str) and DATE_LIKE.match(value):
        return found + EDGE_DATES
    return found + [LONGER, LONE_SURROGATE] if isinstance(value, str) else found


def _is_number(text: str) -> bool:
    try:
        return Decimal(text).is_finite()
    except InvalidOperation:
        return False


def leaf_mutations(body: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, copy of `body` with the value at path replaced) for every leaf and every out-of-range or
    wrong-typed replacement of it."""
    if not isinstance(body, (dict, list)):
        for replacement in _replacements(body):
            yield path, replacement
        return
    for key, child in body.items() if isinstance(body, dict) else enumerate(body):
        for leaf, replaced in leaf_mutations(child, f"{path}.{key}".lstrip(".")):
            changed = copy.copy(body)
            changed[key] = replaced
            yield leaf, changed


def _problem(response: Any) -> str | None:
    """Why the answer breaks the contract, or None."""
    status = response.status_code
    if status >= 500:
        return f"{status}: {response.body[:300]!r}"
    if status < 400:
        return None
    try:
        body = json.loads(response.body)
    except ValueError:
        return f"{status} without a JSON body: {response.body[:200]!r}"
    if not isinstance(body, dict) or body.get("httpStatus") != status:
        return f"{status} with httpStatus {body.get('httpStatus') if isinstance(body, dict) else body!r}"
    for name in ("code", "message", "requestId"):
        if not isinstance(body.get(name), str) or not body[name]:
            return f"{status} without {name}: {body}"
    if body["requestId"] != response.headers.get("X-Request-Id"):
        return f"{status}: requestId {body['requestId']} is not the X-Request-Id header"
    return None


def _at(body: Any, path: str) -> Any:
    for part in path.split("."):
        body = body[int(part)] if isinstance(body, list) else body[part]
    return body


@pytest.mark.parametrize("route", ROUTES, ids=[route_id(r) for r in ROUTES])
def test_bad_input_never_answers_a_server_error(api, caller, world, other_tenant, route):
    path, method, entry = route
    real = fill(path, world.values)
    types = entry.content_types or ["application/json"]
    calls: list[tuple[str, str, dict[str, str], bytes]] = [(real, "no Content-Type, no body", {}, b"")]
    for content_type in types:
        for body in [*MALFORMED_BODIES, *(json.dumps(b).encode() for b in wrong_bodies(entry.view_function))]:
            calls.append((real, f"{content_type} {body[:60]!r}", {"Content-Type": content_type}, body))
    declared = contract(entry).body
    valid = world.bodies.get(entry.view_name, {}) if declared is not None and declared.encoding == "json" else {}
    for leaf, body in leaf_mutations(valid):
        calls.append(
            (
                real,
                f"{leaf} = {simplejson.dumps(_at(body, leaf), use_decimal=True)[:40]}",
                {"Content-Type": types[0]},
                simplejson.dumps(body, use_decimal=True).encode(),
            )
        )
    for variable in variables(path):
        garbage = [LONG, LONGER, "..%2F", new_locator(), other_tenant]
        for value in garbage:
            calls.append(
                (
                    fill(path, world.values, **{variable: value}),
                    f"{{{variable}}}={value[:20]}",
                    {"Content-Type": types[0]},
                    b"",
                )
            )
    for query in wrong_queries(entry.view_function):
        calls.append((f"{real}?{query}", f"?{query[:60]}", {"Content-Type": types[0]}, b""))

    problems = []
    for url, label, headers, body in calls:
        response = api.http.request(
            method, url, body=body, headers={"Authorization": f"Bearer {caller}", "Accept": "*/*", **headers}
        )
        problem = _problem(response)
        if problem:
            problems.append(f"{label}: {problem}")
    assert not problems, f"{method} {path}\n" + "\n".join(problems)
