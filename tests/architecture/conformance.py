"""Our OpenAPI description against the platform's: for every operation both have (the same method and
path, whatever the path variables are named), every field the platform marks required in its success
answer is in ours, required, with a compatible type and no enum value the platform's clients would not
know, and null nowhere the platform does not allow it. Request bodies and query parameters likewise: what
the platform's clients send must fit ours.

Every JSON answer is compared, whether the platform declares it `application/json` or `*/*` (its document
operations); a `StreamingResponseBody` is a file. A free-form object of ours (a map) where the platform names
required properties is reported like any object: each property it requires is missing. Null is compared
as answered: our description says null only where we answer it (a field left out when it has no value is
optional, not nullable), and the platform's says where it allows it (OpenAPI 3.0 `nullable: true`, or a
3.1 `null` type). A query parameter the platform's clients send must be one of ours, of a compatible type,
and we require none they may leave out.

Both documents are read as a validator reads them: a `$ref` is the schema it names (also inside a nullable
anyOf, which is how ours writes an optional model), an allOf is one schema with every part's properties and
required fields, and a oneOf or anyOf of several shapes is compared shape by shape: an answer of ours with
several shapes by the one of the platform's type, a body of the platform's with several shapes (change
instructions) by the tag that tells them apart (`action: add`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_VARIABLE = re.compile(r"{[^}]+}")
JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object")
JSON_MEDIA = ("application/json", "*/*")
"""The media types of a JSON answer or body: the platform declares some JSON answers as `*/*`."""
FILE_SCHEMAS = ("StreamingResponseBody",)
"""The platform's components that stand for a stream of bytes (a file answer), not a JSON object."""


@dataclass(frozen=True)
class Difference:
    operation: str
    where: str
    problem: str

    def __str__(self) -> str:
        return f"{self.operation} {self.where}: {self.problem}"


def _shape(path: str) -> str:
    return _VARIABLE.sub("{}", path)


def operations(document: dict[str, Any]) -> dict[tuple[str, str], tuple[str, dict[str, Any]]]:
    return {
        (method.upper(), _shape(path)): (path, op)
        for path, methods in document["paths"].items()
        for method, op in methods.items()
        if method in ("get", "post", "put", "patch", "delete")
    }


def common_operations(ours: dict[str, Any], theirs: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted(operations(ours).keys() & operations(theirs).keys())


def differences(ours: dict[str, Any], theirs: dict[str, Any]) -> list[Difference]:
    our_ops, their_ops = operations(ours), operations(theirs)
    found: list[Difference] = []
    for key in common_operations(ours, theirs):
        name = f"{key[0]} {our_ops[key][0]}"
        our_op, their_op = our_ops[key][1], their_ops[key][1]
        comparison = _Comparison(theirs, ours, name)
        their_answer, our_answer = _success_schema(their_op), _success_schema(our_op)
        if their_answer is not None:
            if our_answer is None:
                comparison.found.append(Difference(name, "answer", "the platform answers JSON, we answer none"))
            else:
                comparison.answer(their_answer, our_answer, "answer", set())
        their_body, our_body = _body_schema(their_op), _body_schema(our_op)
        if their_body is not None and our_body is not None:
            comparison.request(their_body, our_body, "body", set())
        comparison.query(_query_parameters(their_op), _query_parameters(our_op))
        found.extend(comparison.found)
    return found


def compared_operations(ours: dict[str, Any], theirs: dict[str, Any]) -> list[tuple[str, str]]:
    """The operations both have where the platform answers JSON, takes a JSON body or takes query
    parameters: those `differences` compares."""
    their_ops = operations(theirs)
    return [
        key
        for key in common_operations(ours, theirs)
        if _success_schema(their_ops[key][1]) is not None
        or _body_schema(their_ops[key][1]) is not None
        or _query_parameters(their_ops[key][1])
    ]


def _success_schema(op: dict[str, Any]) -> dict[str, Any] | None:
    """The schema of the JSON answer of the operation's success; None when it answers none or a file."""
    for status, response in sorted(op.get("responses", {}).items()):
        if status.startswith("2"):
            schema = _json_schema(response.get("content", {}))
            if schema is None or schema.get("$ref", "").rsplit("/", 1)[-1] in FILE_SCHEMAS:
                return None
            return schema
    return None


def _body_schema(op: dict[str, Any]) -> dict[str, Any] | None:
    return _json_schema(op.get("requestBody", {}).get("content", {}))


def _json_schema(content: dict[str, Any]) -> dict[str, Any] | None:
    for media in JSON_MEDIA:
        schema = content.get(media, {}).get("schema")
        if schema:
            return dict(schema)
    return None


def _query_parameters(op: dict[str, Any]) -> dict[str, tuple[bool, dict[str, Any]]]:
    """Name -> (required, schema) of each query parameter. A parameter that carries an object (the
    platform's `config`, `quotePreviewRequest`, `params`) is named as the spec names it; ours carries it as
    JSON (`contentSchema`), which is compared as the object."""
    found: dict[str, tuple[bool, dict[str, Any]]] = {}
    for parameter in op.get("parameters", []):
        if parameter.get("in") == "query":
            schema = parameter.get("schema", {})
            found[parameter["name"]] = (bool(parameter.get("required")), schema.get("contentSchema", schema))
    return found


class _Comparison:
    def __init__(self, theirs: dict[str, Any], ours: dict[str, Any], operation: str):
        self.theirs, self.ours, self.operation = theirs, ours, operation
        self.found: list[Difference] = []

    def _report(self, where: str, problem: str) -> None:
        self.found.append(Difference(self.operation, where, problem))

    def answer(self, their: dict[str, Any], our: dict[str, Any], where: str, seen: set[tuple[str, str]]) -> None:
        """What we answer must be what a platform client parses."""
        if _allows_null(our, self.ours) and not _allows_null(their, self.theirs):
            self._report(where, "we answer null, the platform does not allow it")
        unwrapped = self._unwrapped(their, our, seen)
        if unwrapped is None:
            return
        their, our, seen = unwrapped
        our_shapes = _members(our, self.ours)
        if our_shapes:
            # An answer of several shapes (one for each option a request may choose): the shape of the
            # platform's type is what its clients get; the others answer options its definition leaves out.
            fitting = [shape for shape in our_shapes if _type(shape) == _type(their)]
            if len(fitting) != 1:
                self._report(where, f"the platform's type is {_type(their)}, ours is one of several shapes")
                return
            our = fitting[0]
        if not self._types_fit(their, our, where):
            return
        if their.get("enum") is not None:
            extra = sorted(set(_values(our) or []) - set(their["enum"]))
            if _values(our) is None:
                self._report(where, f"the platform's values are {their['enum']}, ours are free")
            elif extra:
                self._report(where, f"we answer values the platform does not have: {extra}")
        if _type(their) == "object":
            our_properties = our.get("properties", {})
            for name in their.get("required", []):
                if name not in our_properties:
                    self._report(f"{where}.{name}", "required by the platform, missing in ours")
                elif name not in our.get("required", []):
                    self._report(f"{where}.{name}", "required by the platform, optional in ours")
            for name, their_property in their.get("properties", {}).items():
                if name in our_properties:
                    self.answer(their_property, our_properties[name], f"{where}.{name}", seen)
            self._maps(their, our, where, seen, self.answer)
        elif _type(their) == "array" and "items" in their and "items" in our:
            self.answer(their["items"], our["items"], f"{where}[]", seen)

    def request(self, their: dict[str, Any], our: dict[str, Any], where: str, seen: set[tuple[str, str]]) -> None:
        """What a platform client sends must fit ours: no field we require that it may leave out."""
        unwrapped = self._unwrapped(their, our, seen)
        if unwrapped is None:
            return
        their, our, seen = unwrapped
        their_shapes = _members(their, self.theirs)
        if their_shapes:
            self._tagged_requests(their_shapes, _members(our, self.ours) or [our], where, seen)
            return
        if not self._types_fit(their, our, where):
            return
        if _type(their) == "object":
            their_properties = their.get("properties", {})
            for name in our.get("required", []):
                if name not in their.get("required", []):
                    self._report(f"{where}.{name}", "we require it, the platform's clients may leave it out")
            for name, their_property in their_properties.items():
                if name in our.get("properties", {}):
                    self.request(their_property, our["properties"][name], f"{where}.{name}", seen)
                elif our.get("additionalProperties") is False:
                    self._report(f"{where}.{name}", "the platform takes it, we refuse it")
        elif _type(their) == "array" and "items" in their and "items" in our:
            self.request(their["items"], our["items"], f"{where}[]", seen)

    def query(self, their: dict[str, tuple[bool, dict[str, Any]]], our: dict[str, tuple[bool, dict[str, Any]]]) -> None:
        """The query parameters a platform client sends must be ours, of a fitting type; we require none it
        may leave out."""
        for name, (_, their_schema) in sorted(their.items()):
            if name not in our:
                self._report(f"query.{name}", "the platform takes it, we do not")
            else:
                self.request(their_schema, our[name][1], f"query.{name}", set())
        for name, (our_required, _) in sorted(our.items()):
            if our_required and not their.get(name, (False, {}))[0]:
                self._report(f"query.{name}", "we require it, the platform's clients may leave it out")

    def _unwrapped(
        self, their: dict[str, Any], our: dict[str, Any], seen: set[tuple[str, str]]
    ) -> tuple[dict[str, Any], dict[str, Any], set[tuple[str, str]]] | None:
        """Both schemas unwrapped, and `seen` with the pair of components they name; None when that pair is
        being compared already (a recursive schema)."""
        (their_name, their), (our_name, our) = _unwrapped(their, self.theirs), _unwrapped(our, self.ours)
        if their_name and our_name:
            if (their_name, our_name) in seen:
                return None
            seen = seen | {(their_name, our_name)}
        return their, our, seen

    def _tagged_requests(
        self,
        their_shapes: list[dict[str, Any]],
        our_shapes: list[dict[str, Any]],
        where: str,
        seen: set[tuple[str, str]],
    ) -> None:
        """A body of several shapes told apart by a tag (`action: add`, ...): each shape a platform client
        sends must fit our shape of the same tag."""
        ours_by_tag = {_tag(shape, self.ours): shape for shape in our_shapes}
        for their_shape in their_shapes:
            tag = _tag(their_shape, self.theirs)
            if tag is None:
                self._report(where, "the platform's body is one of several shapes without a tag")
            elif tag not in ours_by_tag:
                self._report(where, f"the platform takes {tag[0]}: {tag[1]}, we refuse it")
            else:
                self.request(their_shape, ours_by_tag[tag], f"{where}({tag[0]}: {tag[1]})", seen)

    def _maps(
        self, their: dict[str, Any], our: dict[str, Any], where: str, seen: set[tuple[str, str]], compare: Any
    ) -> None:
        their_values, our_values = their.get("additionalProperties"), our.get("additionalProperties")
        if isinstance(their_values, dict) and isinstance(our_values, dict) and their_values and our_values:
            compare(their_values, our_values, f"{where}{{}}", seen)

    def _types_fit(self, their: dict[str, Any], our: dict[str, Any], where: str) -> bool:
        their_type, our_type = _type(their), _type(our)
        if their_type is None or our_type is None or their_type == our_type:
            return True
        if {their_type, our_type} == {"integer", "number"}:
            return True
        self._report(where, f"the platform's type is {their_type}, ours is {our_type}")
        return False


def _unwrapped(schema: dict[str, Any], document: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The schema a value must fit, its references followed, its `null` alternatives taken off (a nullable
    `$ref` is an anyOf of the reference and null) and its allOf merged, with the name of the last
    component it named."""
    name = ""
    while True:
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[1]
            schema = document["components"]["schemas"][name]
            continue
        plain = _plain(schema, document)
        if plain is schema:
            return name, schema
        schema = plain


def _plain(schema: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    for combiner in ("anyOf", "oneOf"):
        options = [option for option in schema.get(combiner, []) if option.get("type") != "null"]
        if len(options) == 1:
            return {**{k: v for k, v in schema.items() if k != combiner}, **options[0]}
    if "allOf" in schema:
        return _merged(
            [
                {k: v for k, v in schema.items() if k != "allOf"},
                *(_unwrapped(part, document)[1] for part in schema["allOf"]),
            ]
        )
    return schema


def _merged(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The one schema of an allOf: every part's properties and required fields."""
    merged: dict[str, Any] = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for part in parts:
        merged.update({k: v for k, v in part.items() if k not in ("properties", "required")})
        properties.update(part.get("properties", {}))
        required += [name for name in part.get("required", []) if name not in required]
    return {**merged, "properties": properties, "required": required}


def _members(schema: dict[str, Any], document: dict[str, Any]) -> list[dict[str, Any]]:
    """The shapes of a schema that is one of several (anyOf, oneOf), unwrapped; none for other schemas."""
    for combiner in ("anyOf", "oneOf"):
        options = [option for option in schema.get(combiner, []) if option.get("type") != "null"]
        if len(options) > 1:
            return [_unwrapped(option, document)[1] for option in options]
    return []


def _tag(schema: dict[str, Any], document: dict[str, Any]) -> tuple[str, Any] | None:
    """The property that tells this shape from the others of its union: one with a single value."""
    for name, property_schema in schema.get("properties", {}).items():
        values = _values(_unwrapped(property_schema, document)[1])
        if values is not None and len(values) == 1:
            return name, values[0]
    return None


def _values(schema: dict[str, Any]) -> list[Any] | None:
    """The values an enum or a const allows; None when any value of its type is allowed."""
    if "const" in schema:
        return [schema["const"]]
    enum = schema.get("enum")
    return list(enum) if enum is not None else None


def _type(schema: dict[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind is None and ("properties" in schema or "additionalProperties" in schema):
        return "object"
    return kind if kind in JSON_TYPES else None


def _allows_null(schema: dict[str, Any], document: dict[str, Any]) -> bool:
    """Whether a value of the schema may be null: a `null` type or alternative (3.1), `nullable` (3.0), or
    a reference to a schema that allows it."""
    seen: set[str] = set()
    while "$ref" in schema and schema["$ref"] not in seen:
        seen.add(schema["$ref"])
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    kind = schema.get("type")
    if schema.get("nullable") is True or kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_allows_null(option, document) for combiner in ("anyOf", "oneOf") for option in schema.get(combiner, []))


def report(found: list[Difference]) -> Iterator[str]:
    for difference in found:
        yield str(difference)
