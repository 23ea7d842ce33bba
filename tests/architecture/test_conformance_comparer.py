"""The comparer of two OpenAPI documents (conformance.py), on small documents: what it must report, and the
ways of writing one schema it must not mistake for a difference."""
from __future__ import annotations

from typing import Any

from tests.architecture import conformance

PATH = "/things/{locator}"


def document(answer: dict[str, Any], *, body: dict[str, Any] | None = None, **components: Any) -> dict[str, Any]:
    """A document of one operation, PATCH /things/{locator}, answering `answer` (and taking `body`)."""
    operation: dict[str, Any] = {"responses": {"200": {"content": {"application/json": {"schema": answer}}}}}
    if body is not None:
        operation["requestBody"] = {"content": {"application/json": {"schema": body}}}
    return {"paths": {PATH: {"patch": operation}}, "components": {"schemas": components}}


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}], "default": None}


def found(ours: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    return [f"{d.where}: {d.problem}" for d in conformance.differences(ours, theirs)]


THEIR_RESULT = {"type": "object", "required": ["success"], "properties": {"success": {"type": "boolean"}}}
THEIR_THING = {"type": "object", "required": ["locator"],
               "properties": {"locator": {"type": "string"}, "result": ref("Result")}}
THEIRS = document(ref("Thing"), Thing=THEIR_THING, Result=THEIR_RESULT)


def test_a_nullable_reference_is_compared_with_what_it_names() -> None:
    result = {"type": "object", "required": ["success"], "properties": {"success": {"type": "boolean"}}}
    thing = {"type": "object", "required": ["locator"],
             "properties": {"locator": {"type": "string"}, "result": nullable(ref("Result"))}}

    assert found(document(ref("Thing"), Thing=thing, Result=result), THEIRS) == []
    assert found(document(ref("Thing"), Thing=thing, Result={**result, "required": []}), THEIRS) == [
        "answer.result.success: required by the platform, optional in ours"]


def test_an_optional_field_the_platform_requires_is_reported() -> None:
    thing = {"type": "object", "properties": {"locator": nullable({"type": "string"})}}

    assert found(document(thing), THEIRS) == ["answer.locator: required by the platform, optional in ours"]


def test_an_allof_is_one_schema_of_all_its_parts() -> None:
    base = {"type": "object", "properties": {"locator": {"type": "string"}}}
    theirs = document(ref("Thing"), Base=base, Thing={
        "type": "object", "required": ["locator", "size"],
        "allOf": [ref("Base"), {"type": "object", "properties": {"size": {"type": "integer"}}}]})
    ours = {"type": "object", "required": ["locator"], "properties": {"locator": {"type": "string"},
                                                                      "size": {"type": "string"}}}

    assert found(document(ours), theirs) == ["answer.size: required by the platform, optional in ours",
                                              "answer.size: the platform's type is integer, ours is string"]


def test_an_enum_of_the_platform_must_be_an_enum_or_a_const_of_its_values() -> None:
    theirs = document({"type": "object", "properties": {"kind": {"type": "string", "enum": ["a", "b"]}}})

    def ours(kind: dict[str, Any]) -> dict[str, Any]:
        return document({"type": "object", "properties": {"kind": kind}})

    assert found(ours({"type": "string", "enum": ["a"]}), theirs) == []
    assert found(ours({"type": "string", "const": "b"}), theirs) == []
    assert found(ours({"type": "string", "const": "c"}), theirs) == [
        "answer.kind: we answer values the platform does not have: ['c']"]
    assert found(ours({"type": "string"}), theirs) == [
        "answer.kind: the platform's values are ['a', 'b'], ours are free"]


def test_an_answer_of_several_shapes_is_compared_by_the_shape_of_the_platforms_type() -> None:
    listed = {"type": "object", "required": ["items"], "properties": {"items": {"type": "array"}}}
    theirs = document(ref("List"), List={**listed, "required": ["listCompleted", "items"],
                                         "properties": {**listed["properties"], "listCompleted": {"type": "boolean"}}})
    bare = {"type": "array", "items": {"type": "string"}}

    assert found(document({"anyOf": [ref("List"), bare]}, List=listed), theirs) == [
        "answer.listCompleted: required by the platform, missing in ours"]
    assert found(document({"anyOf": [bare, {"type": "array"}]}), theirs) == [
        "answer: the platform's type is object, ours is one of several shapes"]


def test_a_body_of_several_shapes_is_compared_shape_by_shape_by_its_tag() -> None:
    def shape(action: str, required: list[str], **properties: Any) -> dict[str, Any]:
        return {"type": "object", "required": ["action", *required], "additionalProperties": False,
                "properties": {"action": {"type": "string", "const": action}, **properties}}

    theirs = document({"type": "object"}, body={"type": "array", "items": {"oneOf": [
        {"type": "object", "required": ["action"], "properties": {"action": {"type": "string", "enum": ["add"]},
                                                                  "elements": {"type": "array"}}},
        {"type": "object", "required": ["action"], "properties": {"action": {"type": "string", "enum": ["other"]}}},
    ]}})
    ours = document({"type": "object"}, body={"type": "array", "items": {
        "oneOf": [ref("Add"), ref("Delete")], "discriminator": {"propertyName": "action"}}},
        Add=shape("add", ["elements"], elements={"type": "array"}), Delete=shape("delete", []))

    assert found(ours, theirs) == [
        "body[](action: add).elements: we require it, the platform's clients may leave it out",
        "body[]: the platform takes action: other, we refuse it"]


def test_recursive_schemas_are_compared_once() -> None:
    tree = {"type": "object", "required": ["type"], "properties": {"type": {"type": "string"},
                                                                   "elements": {"type": "array", "items": ref("Tree")}}}

    assert found(document(ref("Tree"), Tree=tree), document(ref("Tree"), Tree=tree)) == []
