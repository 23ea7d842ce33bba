"""`GET /openapi.json`: the OpenAPI 3.1 description of every route the app serves, generated from the
route table (no token needed); valid by openapi-spec-validator, with every $ref resolving; each operation
with its id, tag, security, request and answer schemas and the error codes it may answer."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

from openapi_spec_validator import validate

from tests.conftest import ROOT

ERROR_STATUSES = {"400", "401", "403", "404", "405", "409", "413", "415", "429", "503"}


def _answer(document: dict, answer: dict) -> dict:
    """An operation's answer, its shared response when it names one (`components/responses`)."""
    if "$ref" in answer:
        prefix, name = answer["$ref"].rsplit("/", 1)
        assert prefix == "#/components/responses"
        return document["components"]["responses"][name]
    return answer


def _document(api) -> dict:
    answer = api.http.get("/openapi.json")
    assert (answer.status_code, answer.headers["Content-Type"]) == (200, "application/json")
    return json.loads(answer.body)


def test_the_description_is_valid_openapi_3_1_and_needs_no_token(api):
    document = _document(api)
    assert document["openapi"] == "3.1.0"
    validate(document)  # the 3.1 schema, and every $ref resolves


def test_every_route_of_the_app_is_described(app, api):
    described = {(path, method.upper()) for path, methods in _document(api)["paths"].items() for method in methods}
    served = {(path, method) for path, methods in app.routes.items() for method in methods}
    assert described == served


def test_every_operation_says_who_may_call_it_what_it_takes_and_what_it_answers(app, api):
    document = _document(api)
    ids, problems = set(), []
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            name = f"{method.upper()} {path}"
            ids.add(operation["operationId"])
            if not operation.get("tags") or not operation.get("summary"):
                problems.append(f"{name}: no tag or summary")
            view = inspect.unwrap(app.routes[path][method.upper()].view_function)
            spec = app.routes[path][method.upper()].view_function.__endpoint__
            if not spec.public:
                if (
                    operation["security"] != [{"bearerAuth": []}]
                    or not operation.get("x-securityGroup")
                    or not operation.get("x-securityPermission")
                ):
                    problems.append(f"{name}: no bearer security or platform security extensions")
            success = [status for status in operation["responses"] if status.startswith("2")]
            if len(success) != 1:
                problems.append(f"{name}: {success} success answers")
            elif (
                inspect.signature(view).return_annotation not in (None, "None")
                and "content" not in operation["responses"][success[0]]
            ):
                problems.append(f"{name}: its answer has no schema")
            for status in set(operation["responses"]) - set(success):
                answer = _answer(document, operation["responses"][status])
                codes = answer["content"]["application/json"]["schema"]["properties"]["code"]
                if status not in ERROR_STATUSES or not codes["enum"]:
                    problems.append(f"{name}: answer {status} without error codes")
            if "body" in inspect.signature(view).parameters and "requestBody" not in operation:
                problems.append(f"{name}: takes a body it does not describe")
    assert not problems, "\n".join(problems)
    assert len(ids) == sum(len(methods) for methods in document["paths"].values())  # unique operationIds


def test_an_operation_lists_the_codes_its_route_declares(api):
    document = _document(api)
    operation = document["paths"]["/policy/{tenantLocator}/transactions/{locator}/issue"]["patch"]
    answer = _answer(document, operation["responses"]["409"])
    conflicts = answer["content"]["application/json"]["schema"]["properties"]["code"]["enum"]
    assert {"transaction.stale_base", "transaction.invalid_state", "conflict.concurrent_modification"} <= set(conflicts)
    assert "`transaction.stale_base`: The transaction's base is no longer the policy's head" in answer["description"]


def test_error_answers_are_shared_responses_each_described_once(app, api):
    """Every error answer names a shared response, one per status and set of codes; the set most routes
    answer with a status is `Error{status}`. Each operation's codes are still exactly its route's."""
    from chalicelib.http.contract import contract_of
    from chalicelib.http.endpoint import error_codes_of

    document = _document(api)
    shared = document["components"]["responses"]
    assert shared["Error401"]["content"]["application/json"]["schema"]["properties"]["code"]["enum"] == [
        "auth.token_expired",
        "auth.token_invalid",
        "auth.token_missing",
        "auth.token_revoked",
    ]
    assert "- `auth.token_missing`: " in shared["Error401"]["description"]
    named, problems = set(), []
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            entry = app.routes[path][method.upper()]
            declared = {
                (code.status, code.code)
                for code in error_codes_of(
                    entry.view_function.__endpoint__,
                    contract_of(inspect.unwrap(entry.view_function)),
                    "{tenantLocator}" in path,
                    method,
                    "{" in path,
                )
            }
            described = set()
            for status, answer in operation["responses"].items():
                if status.startswith("2"):
                    continue
                if set(answer) != {"$ref"}:
                    problems.append(f"{method.upper()} {path} {status}: not a shared response")
                    continue
                named.add(answer["$ref"])
                codes = _answer(document, answer)["content"]["application/json"]["schema"]["properties"]["code"]
                described |= {(int(status), code) for code in codes["enum"]}
            if described != declared:
                problems.append(f"{method.upper()} {path}: describes {sorted(described ^ declared)} wrongly")
    assert not problems, "\n".join(problems[:10])
    assert named == {f"#/components/responses/{name}" for name in shared}  # none unused
    bodies = [json.dumps(answer, sort_keys=True) for answer in shared.values()]
    assert len(set(bodies)) == len(bodies)  # none twice


def test_answers_leave_out_what_is_none_so_such_fields_are_not_required(api):
    account = _document(api)["components"]["schemas"]["AccountResponse"]
    assert {"locator", "accountState", "data", "createdAt"} <= set(account["required"])
    assert not {"timezone", "preferences", "validationResult"} & set(account["required"])


def test_a_field_left_out_when_none_is_never_null_and_one_answered_as_null_says_so(api):
    """Null is described where it is answered: never for a field left out when it has no value; always for
    one a response keeps as null (WithNulls), which is then required, and described by its fields."""
    schemas = _document(api)["components"]["schemas"]
    account = schemas["AccountResponse"]["properties"]
    assert account["timezone"] == {"title": "Timezone", "type": "string"}
    flag = schemas["UnderwritingFlagResponse"]
    assert {"locator", "level", "referenceType", "clearedBy", "clearedTime", "taskCreationResponse"} <= set(
        flag["required"]
    )
    assert flag["properties"]["clearedBy"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert flag["properties"]["taskCreationResponse"]["anyOf"] == [
        {"$ref": "#/components/schemas/TaskCreationResponse"},
        {"type": "null"},
    ]
    assert "elementLocator" not in flag["required"]
    assert flag["properties"]["elementLocator"] == {"title": "Elementlocator", "type": "string"}
    hold = schemas["EntityHoldResponse"]
    assert {"quoteHoldScope", "policyHoldScope", "holdStaticData"} <= set(hold["required"])
    assert hold["properties"]["validationResult"] == {"$ref": "#/components/schemas/ValidationResult"}


def test_the_description_is_built_on_first_request_not_at_import():
    """Cold start: importing the app builds no document (and imports no schema module)."""
    probe = "import sys, app; print('chalicelib.apidocs.openapi' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_every_json_body_and_answer_has_an_example_that_fits_its_schema(api):
    from jsonschema import Draft202012Validator

    document = _document(api)
    problems = []
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            media = [operation.get("requestBody", {}).get("content", {}).get("application/json")]
            media += [
                answer.get("content", {}).get("application/json")
                for status, answer in operation["responses"].items()
                if status.startswith("2")
            ]
            for described in filter(None, media):
                if "example" not in described:
                    problems.append(f"{method.upper()} {path}: no example")
                    continue
                schema = {**described["schema"], "components": document["components"]}  # its $refs resolve here
                errors = [error.message for error in Draft202012Validator(schema).iter_errors(described["example"])]
                if errors:
                    problems.append(f"{method.upper()} {path}: example does not fit: {errors[0][:120]}")
    assert not problems, "\n".join(problems)


def test_the_docs_page_reads_one_domain_at_a_time_and_together_they_are_the_whole(api):
    """`/docs/openapi/{tag}`: a valid document of one tag's operations, with the components they name and no
    other; every operation is in exactly one, as the whole description has it."""
    whole = _document(api)
    tags = [tag["name"] for tag in whole["tags"]]
    seen: dict[tuple[str, str], dict] = {}
    for tag in tags:
        answer = api.http.get(f"/docs/openapi/{tag}")
        assert (answer.status_code, answer.headers["Content-Type"]) == (200, "application/json"), tag
        section = json.loads(answer.body)
        if tag == "billing":  # the largest; the others are made alike, and their $refs are checked below
            validate(section)
        assert section["tags"] == [{"name": tag}] and section["info"] == whole["info"]
        for path, methods in section["paths"].items():
            for method, operation in methods.items():
                assert operation["tags"] == [tag] and (path, method) not in seen
                seen[(path, method)] = operation
        named = _refs(section["paths"])
        for kind in ("schemas", "responses"):
            for name, component in section["components"][kind].items():
                assert component == whole["components"][kind][name]
                named |= _refs(component)
        assert {
            f"#/components/{kind}/{name}" for kind in ("schemas", "responses") for name in section["components"][kind]
        } == named  # what it names, no more
    assert seen == {
        (path, method): operation for path, methods in whole["paths"].items() for method, operation in methods.items()
    }
    unknown = api.http.get("/docs/openapi/nothing")
    assert (unknown.status_code, json.loads(unknown.body)["code"]) == (404, "route.not_found")


def _refs(value) -> set[str]:
    if isinstance(value, dict):
        return ({value["$ref"]} if "$ref" in value else set()).union(*(_refs(inner) for inner in value.values()))
    if isinstance(value, list):
        return set().union(*(_refs(inner) for inner in value))
    return set()
