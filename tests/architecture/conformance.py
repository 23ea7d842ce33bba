"""Our OpenAPI description against the platform's: for every operation both have (the same method and
path, whatever the path variables are named), every field the platform marks required in its success
answer is in ours, required, with a compatible type and no enum value the platform's clients would not
know. Request bodies likewise: what the platform's clients send must fit ours.

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
    return {(method.upper(), _shape(path)): (path, op)
            for path, methods in document["paths"].items() for method, op in methods.items()
            if method in ("get", "post", "put", "patch", "delete")}


def common_operations(ours: dict[str, Any], theirs: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted(operations(ours).keys() & operations(theirs).keys())


def differences(ours: dict[str, Any], theirs: dict[str, Any]) -> list[Difference]:
    our_ops, their_ops = operations(ours), operations(theirs)
    found: list[Difference] = []
    for key in common_operations(ours, theirs):
        name = f"{key[0]} {our_ops[key][0]}"
        our_op, their_op = our_ops[key][1], their_ops[key][1]
        their_answer, our_answer = _success_schema(their_op), _success_schema(our_op)
        if their_answer is not None:
            if our_answer is None:
                found.append(Difference(name, "answer", "the platform answers JSON, we answer none"))
            else:
                comparison = _Comparison(theirs, ours, name)
                comparison.answer(their_answer, our_answer, "answer", set())
                found.extend(comparison.found)
        their_body, our_body = _body_schema(their_op), _body_schema(our_op)
        if their_body is not None and our_body is not None:
            comparison = _Comparison(theirs, ours, name)
            comparison.request(their_body, our_body, "body", set())
            found.extend(comparison.found)
    return found


def _success_schema(op: dict[str, Any]) -> dict[str, Any] | None:
    for status, response in sorted(op.get("responses", {}).items()):
        if status.startswith("2"):
            schema = response.get("content", {}).get("application/json", {}).get("schema")
            return schema if schema else None
    return None


def _body_schema(op: dict[str, Any]) -> dict[str, Any] | None:
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
    return body.get("schema") or None


class _Comparison:
    def __init__(self, theirs: dict[str, Any], ours: dict[str, Any], operation: str):
        self.theirs, self.ours, self.operation = theirs, ours, operation
        self.found: list[Difference] = []

    def _report(self, where: str, problem: str) -> None:
        self.found.append(Difference(self.operation, where, problem))

    def answer(self, their: dict[str, Any], our: dict[str, Any], where: str, seen: set[tuple[str, str]]) -> None:
        """What we answer must be what a platform client parses."""
        unwrapped = self._unwrapped(their, our, seen)
        if unwrapped is None:
            return
        their, our, seen = unwrapped
        our_shapes = _members(our, self.ours)
        if our_shapes:
            # An answer of several shapes (a list or, with `extended=false`, a bare array): the shape of
            # the platform's type is what its clients get; the others answer options its definition
            # leaves out.
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
                if name not in our_properties and not _is_map(our):
                    self._report(f"{where}.{name}", "required by the platform, missing in ours")
                elif name not in our.get("required", []) and not _is_map(our):
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

    def _unwrapped(self, their: dict[str, Any], our: dict[str, Any], seen: set[tuple[str, str]]
                   ) -> tuple[dict[str, Any], dict[str, Any], set[tuple[str, str]]] | None:
        """Both schemas unwrapped, and `seen` with the pair of components they name; None when that pair is
        being compared already (a recursive schema)."""
        (their_name, their), (our_name, our) = _unwrapped(their, self.theirs), _unwrapped(our, self.ours)
        if their_name and our_name:
            if (their_name, our_name) in seen:
                return None
            seen = seen | {(their_name, our_name)}
        return their, our, seen

    def _tagged_requests(self, their_shapes: list[dict[str, Any]], our_shapes: list[dict[str, Any]], where: str,
                         seen: set[tuple[str, str]]) -> None:
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

    def _maps(self, their: dict[str, Any], our: dict[str, Any], where: str, seen: set[tuple[str, str]],
              compare: Any) -> None:
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
        return _merged([{k: v for k, v in schema.items() if k != "allOf"},
                        *(_unwrapped(part, document)[1] for part in schema["allOf"])])
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


def _is_map(schema: dict[str, Any]) -> bool:
    return "properties" not in schema and schema.get("additionalProperties") not in (None, False)


def report(found: list[Difference]) -> Iterator[str]:
    for difference in found:
        yield str(difference)
