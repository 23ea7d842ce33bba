"""The OpenAPI 3.1 description of the service, generated from the route table.

Every route's contract is declared once: its permissions, status and error codes on @endpoint, its body,
query and answer in its view's signature (`chalicelib.http.contract`). This module turns those into the
document served at `/openapi.json`; the JSON schemas come from the pydantic models. It runs on the first
request for the document, never at import (cold start): resolving every contract imports every schema.
"""

from __future__ import annotations

import hashlib
import inspect
import re
import typing
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode
from pydantic_core import CoreSchema, core_schema

from chalicelib.apidocs.examples import example_of
from chalicelib.core import errors
from chalicelib.http.contract import UPLOAD_LOCATOR, UPLOAD_LOCATOR_PATTERN, Body, Contract, Upload, contract_of
from chalicelib.http.endpoint import EndpointSpec, error_codes_of
from chalicelib.http.responses import JSON, Binary, ErrorBody, SecretAnswer

TITLE = "PAS: policy administration and billing"
VERSION = "1"
REF_TEMPLATE = "#/components/schemas/{model}"
RESPONSE_REF = "#/components/responses/{name}"
SECURITY_SCHEME = "bearerAuth"
_VARIABLE = re.compile(r"{([^}]+)}")
FILE_SCHEMA = {"type": "string", "contentMediaType": "application/octet-stream"}


@dataclass(frozen=True)
class Operation:
    path: str
    method: str
    view: Callable[..., Any]
    spec: EndpointSpec
    contract: Contract
    content_types: tuple[str, ...]

    @property
    def operation_id(self) -> str:
        head, *rest = self.view.__name__.split("_")
        return head + "".join(word[:1].upper() + word[1:] for word in rest)

    @property
    def tag(self) -> str:
        """The domain: the package of the route module (`chalicelib.accounts.routes` -> accounts)."""
        return str(self.view.__module__.split(".")[-2])


def operations(routes: dict[str, dict[str, Any]]) -> list[Operation]:
    """Every route of the table (path -> method -> Chalice route entry) that goes through @endpoint."""
    found = []
    for path, methods in routes.items():
        for method, entry in methods.items():
            spec = getattr(entry.view_function, "__endpoint__", None)
            if spec is None:
                continue
            view = inspect.unwrap(entry.view_function)
            found.append(Operation(path, method.lower(), view, spec, contract_of(view), tuple(entry.content_types)))
    return sorted(found, key=lambda o: (o.path, o.method))


def document(routes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    ops = operations(routes)
    schemas = _Schemas()
    schemas.add("ErrorBody", ErrorBody, "serialization")
    for op in ops:
        if op.contract.body is not None and op.contract.body.encoding != "file":
            schemas.add(("body", op.operation_id), op.contract.body.annotation, "validation")
        if op.contract.query is not None:
            schemas.add(("query", op.operation_id), op.contract.query, "validation")
        if _has_json_answer(op.contract.response):
            schemas.add(("response", op.operation_id), _answered(op.contract.response), "serialization")
    resolved, components = schemas.generate()

    errors_by_op = {id(op): _error_codes(op) for op in ops}
    shared = _ErrorResponses(errors_by_op.values())
    paths: dict[str, dict[str, Any]] = defaultdict(dict)
    for op in ops:
        paths[op.path][op.method] = _operation(op, resolved, components, shared.refs(errors_by_op[id(op)]))
    tags = sorted({op.tag for op in ops})
    return {
        "openapi": "3.1.0",
        "info": {
            "title": TITLE,
            "version": VERSION,
            "description": (
                "Every operation answers errors in one body (`ErrorBody`); its `code` is stable and listed per "
                "operation (its answers name shared responses, `components/responses`, whose descriptions list "
                "the codes and their meanings). Sign in with `POST /auth/token` (OAuth2 password grant) and send "
                "the token as `Authorization: Bearer <token>`."
            ),
        },
        "tags": [{"name": tag} for tag in tags],
        "paths": dict(paths),
        "components": {
            "schemas": components,
            "responses": shared.components(),
            "securitySchemes": {SECURITY_SCHEME: {"type": "http", "scheme": "bearer"}},
        },
    }


def _operation(
    op: Operation, resolved: dict[Any, dict[str, Any]], components: dict[str, Any], error_responses: dict[str, Any]
) -> dict[str, Any]:
    described: dict[str, Any] = {
        "operationId": op.operation_id,
        "tags": [op.tag],
        "summary": _summary(op),
        "parameters": _parameters(op, resolved, components),
    }
    if op.view.__doc__:
        described["description"] = inspect.cleandoc(op.view.__doc__)
    if op.contract.body is not None:
        described["requestBody"] = _request_body(op, op.contract.body, resolved, components)
    described["responses"] = {str(op.spec.status): _success(op, resolved, components), **error_responses}
    if op.spec.public:
        described["security"] = []
    else:
        group, permissions = _security(op.spec.permissions)
        described["security"] = [{SECURITY_SCHEME: []}]
        described["x-securityGroup"] = group
        described["x-securityPermission"] = permissions
    return described


def _summary(op: Operation) -> str:
    doc = inspect.getdoc(op.view)
    if doc:
        return doc.splitlines()[0].rstrip(".")
    words = op.view.__name__.split("_")
    return " ".join([words[0].capitalize(), *words[1:]])


def _dereferenced(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _parameters(op: Operation, resolved: dict[Any, dict[str, Any]], components: dict[str, Any]) -> list[dict[str, Any]]:
    described = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "schema": {"type": "string", "format": "uuid"} if name == "tenantLocator" else {"type": "string"},
        }
        for name in _VARIABLE.findall(op.path)
    ]
    query = op.contract.query
    if query is not None:
        properties = _dereferenced(resolved[("query", op.operation_id)], components)["properties"]
        for name, field in query.model_fields.items():
            parameter: dict[str, Any] = {
                "name": field.alias or name,
                "in": "query",
                "required": field.is_required(),
                "schema": properties[field.alias or name],
            }
            if field.description:
                parameter["description"] = field.description
            described.append(parameter)
    purpose = op.contract.upload_purpose
    if purpose is not None:
        described.append(
            {
                "name": UPLOAD_LOCATOR,
                "in": "query",
                "required": False,
                "schema": {"type": "string", "pattern": UPLOAD_LOCATOR_PATTERN},
                "description": f"In place of the body (then empty): the file of an upload of purpose "
                f"`{purpose}` made with POST /uploads, for a file over the direct limit "
                "of a request body (10 MB).",
            }
        )
    return described


def _request_body(
    op: Operation, body: Body, resolved: dict[Any, dict[str, Any]], components: dict[str, Any]
) -> dict[str, Any]:
    if body.encoding == "file":
        content = {media: {"schema": _file_schema(media, body.annotation.part)} for media in op.content_types}
        if "application/json" in content:  # a JSON file: described, and given an example, as JSON
            content["application/json"]["example"] = example_of(content["application/json"]["schema"], components)
    else:
        schema = resolved[("body", op.operation_id)]
        content = {"application/json": {"schema": schema, "example": example_of(schema, components)}}
        if body.encoding == "form":
            content["application/x-www-form-urlencoded"] = {"schema": schema}
        elif body.encoding == "text":
            content["text/plain"] = {"schema": {"type": "string"}}
        elif body.encoding == "multipart":
            content["multipart/form-data"] = {"schema": schema}
    # a route that takes `?uploadLocator=` in place of its file takes an empty body then
    return {"required": body.required and op.contract.upload_purpose is None, "content": content}


def _file_schema(media: str, part: str) -> dict[str, Any]:
    if media == "multipart/form-data":
        return {"type": "object", "required": [part], "properties": {part: FILE_SCHEMA}}
    if media == "application/json":  # files of records (schedule items): an array of objects
        return {"type": "array", "items": {"type": "object"}}
    return {"type": "string", "contentMediaType": media}


def _answered(response: Any) -> Any:
    """What the route answers on the wire: a SecretAnswer[X] answers its X."""
    return typing.get_args(response)[0] if typing.get_origin(response) is SecretAnswer else response


def _has_json_answer(response: Any) -> bool:
    return response is not None and response is not type(None) and not _is_file(response)


def _is_file(response: Any) -> bool:
    return isinstance(response, type) and issubclass(response, Binary)


def _success(op: Operation, resolved: dict[Any, dict[str, Any]], components: dict[str, Any]) -> dict[str, Any]:
    response = op.contract.response
    if _is_file(response):
        media = cast(type[Binary], response).media_type
        if media == JSON:  # a JSON document built once (the description itself): an object, whatever it holds
            return {"description": "The document", "content": {JSON: {"schema": {"type": "object"}, "example": {}}}}
        return {
            "description": "The file",
            "content": {media: {"schema": {"type": "string", "contentMediaType": media}}},
        }
    if not _has_json_answer(response):
        return {"description": "Done; no body"}
    schema = resolved[("response", op.operation_id)]
    return {
        "description": "OK",
        "content": {"application/json": {"schema": schema, "example": example_of(schema, components)}},
    }


ErrorSet = tuple[int, tuple[errors.ErrorCode, ...]]
"""An answer's status and the codes a route may answer with it, sorted by code."""


def _error_codes(op: Operation) -> list[ErrorSet]:
    by_status: dict[int, list[errors.ErrorCode]] = defaultdict(list)
    for code in error_codes_of(op.spec, op.contract, "{tenantLocator}" in op.path, op.method, "{" in op.path):
        by_status[code.status].append(code)
    return [(status, tuple(sorted(codes, key=lambda c: c.code))) for status, codes in sorted(by_status.items())]


class _ErrorResponses:
    """Every error answer as one shared response (`components/responses`) per status and set of codes,
    which each operation names: most routes answer the same 401, 403, 405, 413, 415 and 503, so describing
    them in every operation made two thirds of the document. The set most routes answer with a status is
    `Error{status}`; another set of that status is `Error{status}-{digest of its codes}`. A response's
    description lists its codes with their meanings, and its schema is the error body with that status and
    those codes only (what the fuzzing test checks each answer against)."""

    def __init__(self, sets: Iterable[list[ErrorSet]]):
        counted: dict[ErrorSet, int] = defaultdict(int)
        for operation_sets in sets:
            for found in operation_sets:
                counted[found] += 1
        most: dict[int, tuple[int, ErrorSet]] = {}
        for found, count in sorted(counted.items(), key=lambda item: _codes_key(item[0])):
            if found[0] not in most or count > most[found[0]][0]:
                most[found[0]] = (count, found)
        commonest = {found for _, found in most.values()}
        self._names = {
            found: f"Error{found[0]}"
            if found in commonest
            else f"Error{found[0]}-{hashlib.sha256(_codes_key(found)[1].encode()).hexdigest()[:8]}"
            for found in counted
        }

    def refs(self, sets: list[ErrorSet]) -> dict[str, Any]:
        return {str(status): {"$ref": RESPONSE_REF.format(name=self._names[(status, codes)])} for status, codes in sets}

    def components(self) -> dict[str, Any]:
        return {name: _error_response(*found) for found, name in sorted(self._names.items(), key=lambda i: i[1])}


def _codes_key(found: ErrorSet) -> tuple[int, str]:
    return found[0], " ".join(code.code for code in found[1])


def _error_response(status: int, codes: tuple[errors.ErrorCode, ...]) -> dict[str, Any]:
    return {
        "description": "\n".join(f"- `{c.code}`: {c.meaning}" for c in codes),
        "content": {
            "application/json": {
                "schema": {
                    "allOf": [{"$ref": REF_TEMPLATE.format(model="ErrorBody")}],
                    "properties": {"httpStatus": {"const": status}, "code": {"enum": [c.code for c in codes]}},
                }
            }
        },
    }


def _security(permissions: Iterable[str]) -> tuple[str, list[str]]:
    """x-securityGroup and x-securityPermission as the platform's definition spells them: the group of
    the first permission, and the actions (`group.action` of another group is given whole)."""
    permissions = list(permissions)
    group = permissions[0].split(".", 1)[0]
    actions = [p.split(".", 1)[1] if p.startswith(group + ".") else p for p in permissions]
    return group, actions


class _ResponseSchema(GenerateJsonSchema):
    """Answers leave out the fields that are None (`exclude_none`): such a field is never required, and never
    null; every other field is required, whether it has a default or not. A response that answers some of its
    fields as null when empty (their names in its `NULLS`, kept by its serializer: priceable.schemas.WithNulls)
    has them required and nullable, and is described by its fields, not as the free-form object its
    serializer returns. Decimals travel as JSON numbers both ways (simplejson), never as the strings pydantic
    would write."""

    def decimal_schema(self, schema: core_schema.DecimalSchema) -> dict[str, Any]:
        return {"type": "number"}

    def generate_inner(self, schema: Any) -> Any:
        if self.mode == "serialization" and schema.get("type") == "model" and _nulls(schema["cls"]):
            schema = {key: value for key, value in schema.items() if key != "serialization"}
        return super().generate_inner(schema)

    def model_schema(self, schema: core_schema.ModelSchema) -> dict[str, Any]:
        described = super().model_schema(schema)
        if self.mode == "serialization":
            _answered_nulls(described, schema["cls"])
        return described

    def field_is_required(self, field: Any, total: bool) -> bool:
        """An answer has every field that is not None, a field with a default too."""
        if self.mode == "serialization":
            return not _nullable(field["schema"])
        return super().field_is_required(field, total)


def _nulls(cls: type[BaseModel]) -> tuple[str, ...]:
    return tuple(getattr(cls, "NULLS", ()))


def _answered_nulls(described: dict[str, Any], cls: type[BaseModel]) -> None:
    """The model's answer as sent: its NULLS fields required (null when empty), its other fields without
    the null they are left out for."""
    nulls = {cls.model_fields[name].serialization_alias or name for name in _nulls(cls)}
    required = described.setdefault("required", [])
    for name, property_schema in described.get("properties", {}).items():
        if name in nulls:
            if name not in required:
                required.append(name)
        elif name not in required:
            described["properties"][name] = _without_null(property_schema)
    if not required:
        del described["required"]


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    options = schema.get("anyOf")
    if options is None or {"type": "null"} not in options:
        return schema
    rest = [option for option in options if option != {"type": "null"}]
    plain = {key: value for key, value in schema.items() if key != "anyOf" and not (key == "default" and value is None)}
    return {**plain, **rest[0]} if len(rest) == 1 else {**plain, "anyOf": rest}


def _nullable(schema: CoreSchema) -> bool:
    kind = schema["type"]
    if kind == "nullable":
        return True
    if kind in ("default", "function-after", "function-before", "function-wrap"):
        inner = schema.get("schema")
        return inner is not None and _nullable(inner)
    return False


class _Schemas:
    """Every annotation the document needs a schema of, generated together so the models they share
    become one component each."""

    def __init__(self) -> None:
        self._inputs: list[tuple[Any, JsonSchemaMode, CoreSchema]] = []

    def add(self, key: Any, annotation: Any, mode: JsonSchemaMode) -> None:
        self._inputs.append((key, mode, _core_schema(annotation)))

    def generate(self) -> tuple[dict[Any, dict[str, Any]], dict[str, Any]]:
        generator = _ResponseSchema(ref_template=REF_TEMPLATE)
        by_key, definitions = generator.generate_definitions(self._inputs)
        resolved = {key: dict(schema) for (key, _), schema in by_key.items()}
        return resolved, dict(sorted(definitions.items()))


def _core_schema(annotation: Any) -> CoreSchema:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation.__pydantic_core_schema__
    if isinstance(annotation, type) and issubclass(annotation, Upload):
        return core_schema.bytes_schema()
    return TypeAdapter(annotation).core_schema


def sections(whole: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The document cut by tag (domain): each part is a document of its own, with the operations of one
    tag and the components they name (transitively), for the docs page. Swagger UI takes seconds a megabyte
    to read an OpenAPI 3.1 document (its 3.1 resolver), so the page reads one domain at a time."""
    parts: dict[str, dict[str, Any]] = {}
    for tag in (entry["name"] for entry in whole["tags"]):
        paths = {
            path: tagged
            for path, methods in whole["paths"].items()
            if (tagged := {method: op for method, op in methods.items() if op["tags"] == [tag]})
        }
        components: dict[str, Any] = {
            "schemas": {},
            "responses": {},
            "securitySchemes": whole["components"]["securitySchemes"],
        }
        pending, seen = _refs(paths), set()
        while pending:
            ref = pending.pop()
            if ref in seen:
                continue
            seen.add(ref)
            _, _, kind, name = ref.split("/")
            components[kind][name] = whole["components"][kind][name]
            pending |= _refs(components[kind][name])
        components = {kind: dict(sorted(named.items())) for kind, named in components.items()}
        parts[tag] = {**whole, "tags": [{"name": tag}], "paths": paths, "components": components}
    return parts


def _refs(value: Any) -> set[str]:
    if isinstance(value, dict):
        found = {value["$ref"]} if isinstance(value.get("$ref"), str) else set()
        for inner in value.values():
            found |= _refs(inner)
        return found
    if isinstance(value, list):
        return set().union(*(_refs(inner) for inner in value))
    return set()
