"""The comparer of two OpenAPI documents (conformance.py), on small documents: what it must report (also in
answers the platform declares as `*/*`, in free-form objects of ours, where we answer null, and in query
parameters), and the ways of writing one schema it must not mistake for a difference."""

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
THEIR_THING: dict[str, Any] = {
    "type": "object",
    "required": ["locator"],
    "properties": {"locator": {"type": "string"}, "result": ref("Result")},
}
THEIRS = document(ref("Thing"), Thing=THEIR_THING, Result=THEIR_RESULT)


def test_a_nullable_reference_is_compared_with_what_it_names() -> None:
    result = {"type": "object", "required": ["success"], "properties": {"success": {"type": "boolean"}}}
    thing = {
        "type": "object",
        "required": ["locator"],
        "properties": {"locator": {"type": "string"}, "result": nullable(ref("Result"))},
    }
    theirs = document(
        ref("Thing"),
        Result=THEIR_RESULT,
        Thing={
            **THEIR_THING,
            "properties": {**THEIR_THING["properties"], "result": {"allOf": [ref("Result")], "nullable": True}},
        },
    )

    assert found(document(ref("Thing"), Thing=thing, Result=result), theirs) == []
    assert found(document(ref("Thing"), Thing=thing, Result={**result, "required": []}), theirs) == [
        "answer.result.success: required by the platform, optional in ours"
    ]
    assert found(document(ref("Thing"), Thing=thing, Result=result), THEIRS) == [
        "answer.result: we answer null, the platform does not allow it"
    ]


def test_an_optional_field_the_platform_requires_is_reported() -> None:
    thing = {"type": "object", "properties": {"locator": {"type": "string"}}}

    assert found(document(thing), THEIRS) == ["answer.locator: required by the platform, optional in ours"]


def test_an_allof_is_one_schema_of_all_its_parts() -> None:
    base = {"type": "object", "properties": {"locator": {"type": "string"}}}
    theirs = document(
        ref("Thing"),
        Base=base,
        Thing={
            "type": "object",
            "required": ["locator", "size"],
            "allOf": [ref("Base"), {"type": "object", "properties": {"size": {"type": "integer"}}}],
        },
    )
    ours = {
        "type": "object",
        "required": ["locator"],
        "properties": {"locator": {"type": "string"}, "size": {"type": "string"}},
    }

    assert found(document(ours), theirs) == [
        "answer.size: required by the platform, optional in ours",
        "answer.size: the platform's type is integer, ours is string",
    ]


def test_an_enum_of_the_platform_must_be_an_enum_or_a_const_of_its_values() -> None:
    theirs = document({"type": "object", "properties": {"kind": {"type": "string", "enum": ["a", "b"]}}})

    def ours(kind: dict[str, Any]) -> dict[str, Any]:
        return document({"type": "object", "properties": {"kind": kind}})

    assert found(ours({"type": "string", "enum": ["a"]}), theirs) == []
    assert found(ours({"type": "string", "const": "b"}), theirs) == []
    assert found(ours({"type": "string", "const": "c"}), theirs) == [
        "answer.kind: we answer values the platform does not have: ['c']"
    ]
    assert found(ours({"type": "string"}), theirs) == [
        "answer.kind: the platform's values are ['a', 'b'], ours are free"
    ]


def test_an_answer_of_several_shapes_is_compared_by_the_shape_of_the_platforms_type() -> None:
    listed: dict[str, Any] = {"type": "object", "required": ["items"], "properties": {"items": {"type": "array"}}}
    theirs = document(
        ref("List"),
        List={
            **listed,
            "required": ["listCompleted", "items"],
            "properties": {**listed["properties"], "listCompleted": {"type": "boolean"}},
        },
    )
    bare = {"type": "array", "items": {"type": "string"}}

    assert found(document({"anyOf": [ref("List"), bare]}, List=listed), theirs) == [
        "answer.listCompleted: required by the platform, missing in ours"
    ]
    assert found(document({"anyOf": [bare, {"type": "array"}]}), theirs) == [
        "answer: the platform's type is object, ours is one of several shapes"
    ]


def test_a_body_of_several_shapes_is_compared_shape_by_shape_by_its_tag() -> None:
    def shape(action: str, required: list[str], **properties: Any) -> dict[str, Any]:
        return {
            "type": "object",
            "required": ["action", *required],
            "additionalProperties": False,
            "properties": {"action": {"type": "string", "const": action}, **properties},
        }

    theirs = document(
        {"type": "object"},
        body={
            "type": "array",
            "items": {
                "oneOf": [
                    {
                        "type": "object",
                        "required": ["action"],
                        "properties": {"action": {"type": "string", "enum": ["add"]}, "elements": {"type": "array"}},
                    },
                    {
                        "type": "object",
                        "required": ["action"],
                        "properties": {"action": {"type": "string", "enum": ["other"]}},
                    },
                ]
            },
        },
    )
    ours = document(
        {"type": "object"},
        body={
            "type": "array",
            "items": {"oneOf": [ref("Add"), ref("Delete")], "discriminator": {"propertyName": "action"}},
        },
        Add=shape("add", ["elements"], elements={"type": "array"}),
        Delete=shape("delete", []),
    )

    assert found(ours, theirs) == [
        "body[](action: add).elements: we require it, the platform's clients may leave it out",
        "body[]: the platform takes action: other, we refuse it",
    ]


def test_recursive_schemas_are_compared_once() -> None:
    tree = {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"type": "string"}, "elements": {"type": "array", "items": ref("Tree")}},
    }

    assert found(document(ref("Tree"), Tree=tree), document(ref("Tree"), Tree=tree)) == []


def test_an_answer_the_platform_declares_as_any_media_type_is_compared_and_a_stream_is_a_file() -> None:
    def any_media(schema: dict[str, Any], **components: Any) -> dict[str, Any]:
        theirs = document(schema, **components)
        content = theirs["paths"][PATH]["patch"]["responses"]["200"]["content"]
        content["*/*"] = content.pop("application/json")
        return theirs

    ours = {"type": "object", "properties": {"locator": {"type": "string"}}}

    assert found(document(ours), any_media(ref("Thing"), Thing=THEIR_THING, Result=THEIR_RESULT)) == [
        "answer.locator: required by the platform, optional in ours"
    ]
    assert (
        found(document(ours), any_media(ref("StreamingResponseBody"), StreamingResponseBody={"type": "object"})) == []
    )


def test_a_free_form_object_of_ours_lacks_every_property_the_platform_requires() -> None:
    free_form = {
        "type": "object",
        "required": ["locator", "result"],
        "properties": {"locator": {"type": "string"}, "result": {"type": "object", "additionalProperties": True}},
    }

    assert found(document(free_form), THEIRS) == ["answer.result.success: required by the platform, missing in ours"]


def test_null_is_answered_only_where_the_platform_allows_it() -> None:
    def ours(locator: dict[str, Any], required: list[str]) -> dict[str, Any]:
        return document({"type": "object", "required": required, "properties": {"locator": locator}})

    theirs_nullable = document(
        ref("Thing"), Thing={**THEIR_THING, "properties": {"locator": {"type": "string", "nullable": True}}}
    )
    answered_null = {"anyOf": [{"type": "string"}, {"type": "null"}]}

    assert found(ours(answered_null, ["locator"]), THEIRS) == [
        "answer.locator: we answer null, the platform does not allow it"
    ]
    assert found(ours(answered_null, ["locator"]), theirs_nullable) == []
    assert found(ours({"type": ["string", "null"]}, ["locator"]), THEIRS) == [
        "answer.locator: we answer null, the platform does not allow it"
    ]
    assert found(ours({"type": "string"}, []), THEIRS) == [
        "answer.locator: required by the platform, optional in ours"
    ]  # left out, never null


def test_query_parameters_are_compared_by_name_type_and_whether_they_are_required() -> None:
    def with_query(**parameters: tuple[bool, dict[str, Any]]) -> dict[str, Any]:
        described = document({"type": "object"})
        described["paths"][PATH]["patch"]["parameters"] = [
            {"name": "locator", "in": "path", "required": True, "schema": {"type": "string"}},
            *(
                {"name": name, "in": "query", "required": required, "schema": schema}
                for name, (required, schema) in parameters.items()
            ),
        ]
        return described

    theirs = with_query(
        count=(False, {"type": "integer", "format": "int32"}),
        state=(False, {"type": "array", "items": {"type": "string"}}),
        config=(True, ref("Config")),
    )
    theirs["components"]["schemas"]["Config"] = {
        "type": "object",
        "required": ["products"],
        "properties": {"products": {"type": "object"}},
    }
    as_json = {"type": "string", "contentMediaType": "application/json", "contentSchema": {"type": "object"}}

    assert (
        found(
            with_query(
                count=(False, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
                state=(False, {"type": "array", "items": {"type": "string"}}),
                config=(True, as_json),
                extra=(False, {"type": "boolean"}),
            ),
            theirs,
        )
        == []
    )
    assert found(
        with_query(
            count=(True, {"type": "string"}), config=(True, {"type": "string"}), owner=(True, {"type": "string"})
        ),
        theirs,
    ) == [
        "query.config: the platform's type is object, ours is string",
        "query.count: the platform's type is integer, ours is string",
        "query.state: the platform takes it, we do not",
        "query.count: we require it, the platform's clients may leave it out",
        "query.owner: we require it, the platform's clients may leave it out",
    ]
