"""What the tests shorten must behave as the real thing: the emulated DynamoDB answers its data
operations with json.dumps (local/lean_moto.py, `make run` too), and botocore reads the same answers as from
moto's own serializer; it applies plain updates directly and parses each expression once, with moto's
outcome; passwords are hashed with cheap argon2id parameters (cheap_password_hashing), whose
hashes the deployed hasher checks, and the other way round; a copied tenant's objects, put straight into moto's
bucket (tests/support/stored.py put_object), are the objects PutObject stores."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from botocore.parsers import JSONParser

import tests.conftest
from chalicelib.core.ids import new_locator
from local import lean_moto


def _item(pk: str, sk: str, binary: bool) -> dict[str, Any]:
    """Every attribute type, nested too; binary ones only if `binary` (base64 in the wire JSON)."""
    item = {
        "PK": {"S": pk},
        "SK": {"S": sk},
        "text": {"S": "é\u2028x"},
        "empty": {"S": ""},
        "number": {"N": "-12.50"},
        "big": {"N": "9" * 38},
        "flag": {"BOOL": False},
        "nothing": {"NULL": True},
        "strings": {"SS": ["a", "b"]},
        "numbers": {"NS": ["1", "2.5"]},
        "map": {"M": {"list": {"L": [{"N": "1"}, {"M": {"s": {"S": "x"}}}, {"NULL": True}]}}},
    }
    if binary:
        item.update(
            {"binary": {"B": b"\x00\xff"}, "binaries": {"BS": [b"x", b"\x01"]}, "nested": {"M": {"b": {"B": b"\x02"}}}}
        )
    return item


def _calls(table: str, pk: str, binary: bool) -> list[tuple[str, dict[str, Any]]]:
    """One call of each operation of DYNAMODB_DATA_AS_JSON whose answer is the same every time it runs."""
    key = {"PK": {"S": pk}, "SK": {"S": "1"}}
    return [
        ("put_item", {"TableName": table, "Item": _item(pk, "1", binary), "ReturnValues": "ALL_OLD"}),
        ("get_item", {"TableName": table, "Key": key}),
        ("get_item", {"TableName": table, "Key": {"PK": {"S": pk}, "SK": {"S": "missing"}}}),
        ("batch_get_item", {"RequestItems": {table: {"Keys": [key, {"PK": {"S": pk}, "SK": {"S": "2"}}]}}}),
        (
            "query",
            {
                "TableName": table,
                "KeyConditionExpression": "PK = :pk",
                "Limit": 1,
                "ExpressionAttributeValues": {":pk": {"S": pk}},
            },
        ),
        (
            "query",
            {
                "TableName": table,
                "KeyConditionExpression": "PK = :pk",
                "Select": "COUNT",
                "ExpressionAttributeValues": {":pk": {"S": pk}},
            },
        ),
        (
            "update_item",
            {
                "TableName": table,
                "Key": key,
                "UpdateExpression": "SET #n = :n",
                "ExpressionAttributeNames": {"#n": "number"},
                "ExpressionAttributeValues": {":n": {"N": "-12.50"}},
                "ReturnValues": "ALL_NEW",
            },
        ),
    ]


@pytest.mark.parametrize("binary", [False, True], ids=["json writes them", "with binary values in base64"])
def test_botocore_reads_the_same_answers_as_from_motos_serializer(aws, monkeypatch, binary):
    from chalicelib.settings import settings
    from chalicelib.storage import clients

    client, table, pk = clients.dynamodb(), settings().table_name, f"TEST#{new_locator()}"
    for sk in ("1", "2"):
        client.put_item(TableName=table, Item=_item(pk, sk, binary))
    written: list[str] = []

    def dumps(value: Any, **options: Any) -> str:
        body = json.dumps(value, **options)
        written.append(body)
        return body

    def answers() -> list[dict[str, Any]]:
        found = []
        for operation, params in _calls(table, pk, binary):
            answer = getattr(client, operation)(**params)
            answer.pop("ResponseMetadata")
            found.append(answer)
        return found

    shape_walks: list[str] = []
    shape_walk = JSONParser._handle_json_body

    def counted_shape_walk(parser: JSONParser, body: bytes, shape: Any) -> Any:
        shape_walks.append(shape.name)
        return shape_walk(parser, body, shape)

    monkeypatch.setattr(lean_moto, "json", SimpleNamespace(dumps=dumps))
    monkeypatch.setattr(JSONParser, "_handle_json_body", counted_shape_walk)
    through_json = answers()
    json_wrote = len(written)
    assert json_wrote == 7  # every answer, binary values (in base64) too
    assert any(_holds_bytes(answer) for answer in through_json) == binary  # read back as bytes
    assert len(shape_walks) == 7 - json_wrote  # botocore read what json wrote with json.loads alone
    monkeypatch.setattr(lean_moto, "READ_AS_JSON", False)
    assert answers() == through_json  # botocore's own way, walking the output shape
    assert len(shape_walks) == 7 - json_wrote + 7
    monkeypatch.setattr(lean_moto, "DYNAMODB_DATA_AS_JSON", frozenset())
    assert answers() == through_json  # moto's serializer
    assert len(written) == 2 * json_wrote  # none the third time


@pytest.mark.parametrize("write", ["put_item", "transact_write_items"])
def test_an_item_is_refused_past_motos_size_limit_as_moto_refuses_it(aws, write):
    """lean_moto sums an item's size once, not once per attribute added: the limit stays moto's own."""
    from botocore.exceptions import ClientError

    from chalicelib.settings import settings
    from chalicelib.storage import clients

    client, table, pk = clients.dynamodb(), settings().table_name, f"TEST#{new_locator()}"

    def put(sk: str, attribute_bytes: int) -> None:
        item = {
            "PK": {"S": pk},
            "SK": {"S": sk},
            **{f"a{n:03d}": {"S": "x" * (attribute_bytes - 4)} for n in range(100)},
        }
        if write == "put_item":
            client.put_item(TableName=table, Item=item)
        else:
            client.transact_write_items(TransactItems=[{"Put": {"TableName": table, "Item": item}}])

    put("fits", 4_000)  # 100 attributes of 4,000 bytes and the key: 400,000 and some
    with pytest.raises(ClientError) as refused:
        put("too-large", 4_060)  # 406,000 and some
    assert "Item size has exceeded the maximum allowed size" in str(refused.value)
    found = client.query(
        TableName=table, KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": {"S": pk}}
    )["Items"]
    assert [item["SK"]["S"] for item in found] == ["fits"]


@pytest.mark.parametrize("write", ["update_item", "transact_write_items"])
def test_a_query_pages_by_the_sizes_items_have_after_their_updates(aws, write):
    """lean_moto keeps an item's size until an update changes it: a Query stops at 1 MB by today's sizes."""
    from chalicelib.settings import settings
    from chalicelib.storage import clients

    client, table, pk = clients.dynamodb(), settings().table_name, f"TEST#{new_locator()}"
    big = {f"a{n:03d}": {"S": "x" * 3_900} for n in range(100)}  # ~390,000 bytes: two fit in a 1 MB page

    def skeys() -> list[str]:
        page = client.query(
            TableName=table, KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": {"S": pk}}
        )
        return [item["SK"]["S"] for item in page["Items"]]

    def update(sk: str, expression: str, values: dict[str, Any] | None = None) -> None:
        request = {
            "TableName": table,
            "Key": {"PK": {"S": pk}, "SK": {"S": sk}},
            "UpdateExpression": expression,
            **({"ExpressionAttributeValues": values} if values else {}),
        }
        if write == "update_item":
            client.update_item(**request)
        else:
            client.transact_write_items(TransactItems=[{"Update": request}])

    for sk in ("a", "b", "c"):
        client.put_item(TableName=table, Item={"PK": {"S": pk}, "SK": {"S": sk}, **big})
    assert skeys() == ["a", "b"]
    for sk in ("a", "b"):
        update(sk, "REMOVE " + ", ".join(sorted(big)))
    assert skeys() == ["a", "b", "c"]
    for sk in ("a", "b"):
        update(sk, "SET " + ", ".join(f"{name} = :v" for name in sorted(big)), {":v": {"S": "x" * 3_900}})
    assert skeys() == ["a", "b"]


def _holds_bytes(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_holds_bytes(v) for v in value.values())
    if isinstance(value, list | set):
        return any(_holds_bytes(v) for v in value)
    return isinstance(value, bytes)


@pytest.mark.parametrize("operation", sorted(lean_moto.DYNAMODB_DATA_AS_JSON))
def test_every_operation_answered_as_json_is_compared(operation):
    called = {"".join(part.title() for part in name.split("_")) for name, _ in _calls("t", "p", binary=False)}
    assert operation in called


def test_the_deployed_password_hasher_keeps_rfc_9106_parameters():
    from argon2 import profiles

    deployed = tests.conftest.DEPLOYED["password hasher"]()
    assert (deployed.time_cost, deployed.memory_cost, deployed.parallelism) == (
        profiles.RFC_9106_LOW_MEMORY.time_cost,
        profiles.RFC_9106_LOW_MEMORY.memory_cost,
        profiles.RFC_9106_LOW_MEMORY.parallelism,
    )


def test_cheap_and_deployed_hashes_check_with_either_hasher():
    from chalicelib.identity import passwords

    deployed = tests.conftest.DEPLOYED["password hasher"]()
    cheap_hash = passwords.hash_password("correct horse")
    assert cheap_hash.startswith("$argon2id$v=19$m=64,t=1,p=1$")
    assert deployed.verify(cheap_hash, "correct horse")
    deployed_hash = deployed.hash("correct horse")
    assert passwords.verify_password(deployed_hash, "correct horse")
    assert not passwords.verify_password(deployed_hash, "wrong horse")
    assert not passwords.verify_password(None, "correct horse")


_BEFORE = {
    "version": {"N": "3"},
    "status": {"S": "open"},
    "amount": {"N": "12.50"},
    "lines": {"L": [{"S": "a"}]},
    "GSI1PK": {"S": "IDX#1"},
    "GSI1SK": {"S": "1"},
}
_PLAIN_CASES = {
    "set and bump the version": (
        "SET #s0 = :s0, #s1 = :s1, #version = :next",
        "#version = :expected",
        {"#s0": "status", "#s1": "fresh", "#version": "version"},
        {":s0": {"S": "settled"}, ":s1": {"M": {"x": {"N": "1"}}}, ":next": {"N": "4"}, ":expected": {"N": "3"}},
        True,
        True,
    ),
    "set and remove": (
        "SET #s0 = :s0 REMOVE #r0, #r1",
        "attribute_exists(PK)",
        {"#s0": "amount", "#r0": "lines", "#r1": "GSI1PK"},
        {":s0": {"N": "0"}},
        True,
        True,
    ),
    "remove only": ("REMOVE #r0", None, {"#r0": "status"}, None, True, True),
    "a version that moved": (
        "SET #version = :next",
        "#version = :expected",
        {"#version": "version"},
        {":next": {"N": "3"}, ":expected": {"N": "2"}},
        True,
        True,
    ),
    "a missing item, created": ("SET #s0 = :s0", None, {"#s0": "status"}, {":s0": {"S": "new"}}, False, True),
    "a missing item that must exist": (
        "SET #s0 = :s0",
        "attribute_exists(PK)",
        {"#s0": "status"},
        {":s0": {"S": "new"}},
        False,
        True,
    ),
    "an index key": (
        "SET #s0 = :s0, #s1 = :s1",
        None,
        {"#s0": "GSI2PK", "#s1": "GSI2SK"},
        {":s0": {"S": "IDX#2"}, ":s1": {"S": "b"}},
        True,
        True,
    ),
    "an index key of the wrong type": ("SET #s0 = :s0", None, {"#s0": "GSI2PK"}, {":s0": {"N": "2"}}, True, False),
    "an empty index key": ("SET #s0 = :s0", None, {"#s0": "GSI2PK"}, {":s0": {"S": ""}}, True, False),
    "an empty set": ("SET #s0 = :s0", None, {"#s0": "tags"}, {":s0": {"SS": []}}, True, False),
    "the table's key": ("SET #s0 = :s0", None, {"#s0": "SK"}, {":s0": {"S": "other"}}, True, False),
    "the same attribute twice": (
        "SET #s0 = :s0, #s1 = :s1",
        None,
        {"#s0": "status", "#s1": "status"},
        {":s0": {"S": "a"}, ":s1": {"S": "b"}},
        True,
        False,
    ),
    "a nested path": ("SET #s0.#s1 = :s0", None, {"#s0": "fresh", "#s1": "x"}, {":s0": {"S": "a"}}, True, False),
    "a function": ("SET #s0 = if_not_exists(#s0, :s0)", None, {"#s0": "status"}, {":s0": {"S": "a"}}, True, False),
    "an item past the size limit": ("SET #s0 = :s0", None, {"#s0": "blob"}, {":s0": {"S": "x" * 405_000}}, True, False),
}


_CONDITION_FAILS = {"a version that moved", "a missing item that must exist"}


@pytest.mark.parametrize("how", ["update_item", "transact_write_items"])
@pytest.mark.parametrize("case", sorted(_PLAIN_CASES))
def test_a_plain_update_applied_directly_ends_as_motos_own(aws, monkeypatch, how, case):
    """lean_moto applies the plain updates chalicelib/storage writes itself: the item, the answer and the
    error are moto's, and every other shape goes moto's way."""
    from botocore.exceptions import ClientError

    from chalicelib.settings import settings
    from chalicelib.storage import clients

    expression, condition, names, values, exists, plain = _PLAIN_CASES[case]
    client, table = clients.dynamodb(), settings().table_name
    applied_directly = []
    direct = lean_moto.plain_update

    def spied(backend, arguments):
        try:
            item = direct(backend, arguments)
        except Exception:
            applied_directly.append(True)  # refused by moto's own condition, directly
            raise
        applied_directly.append(item is not None)
        return item

    monkeypatch.setattr(lean_moto, "plain_update", spied)

    def run(shortcut: bool) -> tuple[Any, Any, Any]:
        monkeypatch.setattr(lean_moto, "PLAIN_UPDATES", shortcut)
        key = {"PK": {"S": f"TEST#{new_locator()}"}, "SK": {"S": "1"}}
        if exists:
            client.put_item(TableName=table, Item={**key, **_BEFORE})
        request = {
            "TableName": table,
            "Key": key,
            "UpdateExpression": expression,
            "ExpressionAttributeNames": names,
            **({"ExpressionAttributeValues": values} if values else {}),
            **({"ConditionExpression": condition} if condition else {}),
        }
        answer, error = None, None
        try:
            if how == "update_item":
                answer = client.update_item(**request, ReturnValues="ALL_NEW")["Attributes"]
            else:
                client.transact_write_items(TransactItems=[{"Update": request}])
        except ClientError as refused:
            error = (refused.response["Error"]["Code"], refused.response["Error"]["Message"])
        stored = client.get_item(TableName=table, Key=key).get("Item")
        without_key = lambda item: {k: v for k, v in item.items() if k != "PK"} if item else item  # noqa: E731
        return without_key(answer), error, without_key(stored)

    direct_outcome = run(True)
    refused_first = how == "transact_write_items" and case in _CONDITION_FAILS  # moto's transaction checks it first
    assert applied_directly == ([] if refused_first else [plain])
    assert direct_outcome == run(False)


def _tree(node: Any) -> Any:
    """A syntax tree of moto's as nested tuples, to compare one with another."""
    if isinstance(node, list | tuple):
        return [_tree(child) for child in node]
    if hasattr(node, "children"):
        return type(node).__name__, _tree(node.children)
    return repr(node)


_EXPRESSION_BEFORE = {
    "count": {"N": "4"},
    "status": {"S": "open"},
    "lines": {"L": [{"S": "a"}, {"S": "b"}]},
    "fresh": {"M": {"x": {"N": "1"}}},
}
_EXPRESSION_CASES = {
    "a counter below its ceiling": (
        "ADD #c :one",
        "attribute_not_exists(#c) OR #c < :below",
        {"#c": "count"},
        {":one": {"N": "1"}, ":below": {"N": "5"}},
    ),
    "a counter at its ceiling": (
        "ADD #c :one",
        "attribute_not_exists(#c) OR #c < :below",
        {"#c": "count"},
        {":one": {"N": "1"}, ":below": {"N": "4"}},
    ),
    "list_append and if_not_exists": (
        "SET #l = list_append(if_not_exists(#l, :empty), :more), #n = :n",
        None,
        {"#l": "lines", "#n": "other"},
        {":empty": {"L": []}, ":more": {"L": [{"S": "c"}]}, ":n": {"N": "2"}},
    ),
    "a nested path where the map exists": (
        "SET #m.#k = :v",
        "attribute_exists(#m)",
        {"#m": "fresh", "#k": "y"},
        {":v": {"S": "z"}},
    ),
    "a list element removed": (
        "REMOVE #l[0] SET #s = :s",
        "#s IN (:s, :t)",
        {"#l": "lines", "#s": "status"},
        {":s": {"S": "open"}, ":t": {"S": "settled"}},
    ),
    "a version that moved": (
        "SET #s = :s",
        "#s = :expected AND size(#l) > :two",
        {"#s": "status", "#l": "lines"},
        {":s": {"S": "x"}, ":expected": {"S": "closed"}, ":two": {"N": "2"}},
    ),
    "a syntax error": ("SET #s = = :s", None, {"#s": "status"}, {":s": {"S": "x"}}),
    "a condition syntax error": ("SET #s = :s", "#s = :s AND", {"#s": "status"}, {":s": {"S": "x"}}),
    "an undeclared name": ("SET #t = :s", None, {"#s": "status"}, {":s": {"S": "x"}}),
    "an undeclared value": ("SET #s = :s", "#s = :nothing", {"#s": "status"}, {":s": {"S": "x"}}),
}


@pytest.mark.parametrize("how", ["update_item", "transact_write_items"])
@pytest.mark.parametrize("case", sorted(_EXPRESSION_CASES))
def test_expressions_parsed_once_update_and_refuse_as_motos_own(aws, monkeypatch, how, case):
    """lean_moto parses an UpdateExpression once per text and a ConditionExpression once per text, names and
    values: each update (the first, which parses, and the next, which finds it parsed) ends as moto's own,
    and what moto later does with a tree it found parsed leaves that tree as it was."""
    from botocore.exceptions import ClientError
    from moto.dynamodb.comparisons import ConditionExpressionParser
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser

    from chalicelib.settings import settings
    from chalicelib.storage import clients

    expression, condition, names, values = _EXPRESSION_CASES[case]
    client, table = clients.dynamodb(), settings().table_name

    def run(parse_once: bool) -> tuple[Any, Any, Any]:
        monkeypatch.setattr(lean_moto, "PARSE_ONCE", parse_once)
        key = {"PK": {"S": f"TEST#{new_locator()}"}, "SK": {"S": "1"}}
        client.put_item(TableName=table, Item={**key, **_EXPRESSION_BEFORE})
        request = {
            "TableName": table,
            "Key": key,
            "UpdateExpression": expression,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
            **({"ConditionExpression": condition} if condition else {}),
        }
        answer, error = None, None
        try:
            if how == "update_item":
                answer = client.update_item(**request, ReturnValues="ALL_NEW")["Attributes"]
            else:
                client.transact_write_items(TransactItems=[{"Update": request}])
        except ClientError as refused:
            error = (refused.response["Error"]["Code"], refused.response["Error"]["Message"])
        except (ValueError, KeyError) as failed:  # moto raises some of its errors instead of answering them
            error = (type(failed).__name__, str(failed))
        stored = client.get_item(TableName=table, Key=key)["Item"]
        return (
            ({k: v for k, v in answer.items() if k != "PK"} if answer else answer),
            error,
            {k: v for k, v in stored.items() if k != "PK"},
        )

    motos = run(False)
    assert run(True) == motos  # parsed here
    assert run(True) == motos  # found parsed
    try:
        parsed = UpdateExpressionParser.make(expression)
    except Exception:  # noqa: BLE001 - a syntax error is parsed again each time, and refused again
        return
    assert parsed is UpdateExpressionParser.make(expression)
    monkeypatch.setattr(lean_moto, "PARSE_ONCE", False)
    assert _tree(parsed) == _tree(UpdateExpressionParser.make(expression))  # as fresh after the updates
    if condition and case not in ("a condition syntax error", "an undeclared value"):
        monkeypatch.setattr(lean_moto, "PARSE_ONCE", True)
        tree = ConditionExpressionParser(condition, names, values).parse()
        assert ConditionExpressionParser(condition, dict(names), json.loads(json.dumps(values))).parse() is tree
        other = {**values, next(iter(values)): {"S": "another value"}}
        assert ConditionExpressionParser(condition, names, other).parse() is not tree  # values are its key too


def _page_through(client: Any, request: dict[str, Any]) -> list[dict[str, Any]]:
    pages, start = [], None
    while True:
        page = client.query(**request, **({"ExclusiveStartKey": start} if start else {}))
        page.pop("ResponseMetadata")
        pages.append(page)
        start = page.get("LastEvaluatedKey")
        if start is None:
            return pages


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"ScanIndexForward": False},
        {"Limit": 7},
        {"Limit": 7, "ScanIndexForward": False},
        {"Limit": 5, "Select": "COUNT"},
        {"Limit": 4, "ProjectionExpression": "SK, #n", "ExpressionAttributeNames": {"#n": "n"}},
        {"Limit": 6, "FilterExpression": "#n > :three", "ExpressionAttributeNames": {"#n": "n"}},
        {"Limit": 3, "KeyConditionExpression": "PK = :pk AND begins_with(SK, :b)"},
        {"Limit": 3, "KeyConditionExpression": "PK = :pk AND SK BETWEEN :b AND :c", "ScanIndexForward": False},
        {"Limit": 4, "IndexName": "GSI1", "KeyConditionExpression": "GSI1PK = :pk"},
        {"Limit": 4, "IndexName": "GSI1", "KeyConditionExpression": "GSI1PK = :pk", "ScanIndexForward": False},
    ],
    ids=lambda query: ", ".join(f"{k}={v}" for k, v in query.items() if k != "ExpressionAttributeNames") or "all",
)
def test_a_lean_query_pages_as_motos_own_and_leaves_the_items_as_they_were(aws, monkeypatch, query):
    """lean_moto's Query copies no item and skips to the ExclusiveStartKey by bisection: every page is moto's
    own, and no answer changes the stored items (a projection, a filter)."""
    from chalicelib.settings import settings
    from chalicelib.storage import clients

    client, table, pk = clients.dynamodb(), settings().table_name, f"TEST#{new_locator()}"
    sort_keys = ["a", "b", "b#1", "b#10", "b#2", "B", "c", "é", "z" * 40, "\u4e2d", "a#", "0", "9", "b#", "ba"]
    for number, sk in enumerate(sort_keys):
        client.put_item(
            TableName=table,
            Item={
                "PK": {"S": pk},
                "SK": {"S": sk},
                "n": {"N": str(number % 6)},
                "GSI1PK": {"S": pk},
                "GSI1SK": {"S": str(number % 4)},
                "big": {"L": [{"M": {"x": {"S": sk * 3}}}]},
            },
        )
    stored = _page_through(
        client,
        {
            "TableName": table,
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": {":pk": {"S": pk}},
            "ConsistentRead": True,
        },
    )
    values = {":pk": {"S": pk}, ":b": {"S": "b"}, ":c": {"S": "b#2"}, ":three": {"N": "3"}}
    condition = query.get("KeyConditionExpression", "PK = :pk")
    request = {
        "TableName": table,
        "KeyConditionExpression": condition,
        **query,
        "ExpressionAttributeValues": {
            name: value
            for name, value in values.items()
            if name in condition or name in query.get("FilterExpression", "")
        },
    }

    lean = _page_through(client, request)
    monkeypatch.setattr(lean_moto, "LEAN_QUERIES", False)
    assert lean == _page_through(client, request)
    assert len(lean) > 1 or "Limit" not in query
    assert (
        _page_through(
            client,
            {
                "TableName": table,
                "KeyConditionExpression": "PK = :pk",
                "ExpressionAttributeValues": {":pk": {"S": pk}},
                "ConsistentRead": True,
            },
        )
        == stored
    )


def _requests(table: str, pk: str, binary: bool) -> list[tuple[str, dict[str, Any]]]:
    """A call of each operation of DYNAMODB_REQUESTS_AS_JSON, with every attribute type (binary ones too if
    `binary`), keys, conditions, names and values."""
    key = {"PK": {"S": pk}, "SK": {"S": "1"}}
    other = {"PK": {"S": pk}, "SK": {"S": "2"}}
    names, values = {"#n": "number", "#f": "flag"}, {":n": {"N": "-12.50"}, ":f": {"BOOL": False}}
    return [
        (
            "put_item",
            {
                "TableName": table,
                "Item": _item(pk, "1", binary),
                "ReturnValues": "ALL_OLD",
                "ConditionExpression": "attribute_not_exists(PK)",
            },
        ),
        (
            "batch_write_item",
            {
                "RequestItems": {
                    table: [
                        {"PutRequest": {"Item": _item(pk, "2", binary)}},
                        {"PutRequest": {"Item": _item(pk, "3", binary)}},
                        {"DeleteRequest": {"Key": {**key, "SK": {"S": "3"}}}},
                    ]
                }
            },
        ),
        (
            "get_item",
            {
                "TableName": table,
                "Key": key,
                "ConsistentRead": True,
                "ProjectionExpression": "#n, #f",
                "ExpressionAttributeNames": names,
            },
        ),
        ("batch_get_item", {"RequestItems": {table: {"Keys": [key, other], "ConsistentRead": True}}}),
        (
            "query",
            {
                "TableName": table,
                "KeyConditionExpression": "PK = :pk AND SK > :low",
                "Limit": 1,
                "ExclusiveStartKey": key,
                "ScanIndexForward": True,
                "FilterExpression": "#f = :f",
                "ExpressionAttributeNames": {"#f": "flag"},
                "ExpressionAttributeValues": {":pk": {"S": pk}, ":low": {"S": "0"}, ":f": {"BOOL": False}},
            },
        ),
        (
            "update_item",
            {
                "TableName": table,
                "Key": key,
                "UpdateExpression": "SET #n = :n, #f = :f",
                "ConditionExpression": "attribute_exists(PK)",
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": values,
                "ReturnValues": "UPDATED_NEW",
            },
        ),
        (
            "transact_write_items",
            {
                "TransactItems": [
                    {"Put": {"TableName": table, "Item": _item(pk, "4", binary)}},
                    {
                        "Update": {
                            "TableName": table,
                            "Key": other,
                            "UpdateExpression": "ADD #c :one",
                            "ExpressionAttributeNames": {"#c": "count"},
                            "ExpressionAttributeValues": {":one": {"N": "1"}},
                        }
                    },
                    {
                        "ConditionCheck": {
                            "TableName": table,
                            "Key": key,
                            "ConditionExpression": "#n = :n",
                            "ExpressionAttributeNames": {"#n": "number"},
                            "ExpressionAttributeValues": {":n": {"N": "-12.50"}},
                        }
                    },
                ]
            },
        ),
        (
            "transact_get_items",
            {"TransactItems": [{"Get": {"TableName": table, "Key": key}}, {"Get": {"TableName": table, "Key": other}}]},
        ),
        ("delete_item", {"TableName": table, "Key": other, "ReturnValues": "ALL_OLD"}),
    ]


@pytest.mark.parametrize("binary", [False, True], ids=["json reads them", "with binary values too"])
def test_requests_read_as_json_and_results_walked_read_and_write_as_motos_own(aws, monkeypatch, binary):
    """lean_moto reads a DynamoDB request with json.loads and turns a result into the wire form by a walk of its
    own: on every request and result of a call of each operation, the same as moto's parser and dynamo_to_dict."""
    from moto.core.responses import BaseResponse
    from moto.dynamodb import responses as dynamodb_responses
    from moto.dynamodb.models.utilities import dynamo_to_dict

    from chalicelib.settings import settings
    from chalicelib.storage import clients

    client, table, pk = clients.dynamodb(), settings().table_name, f"TEST#{new_locator()}"
    read_as_json, walked, differing = [], [], []
    reads, walks = lean_moto.request_as_json, dynamodb_responses.dynamo_to_dict

    def read(handler: Any, request: Any) -> Any:
        parsed = reads(handler, request)
        if parsed is not None:
            BaseResponse.parse_parameters(handler, request)
            read_as_json.append(handler._get_action())
            if handler.params != parsed:
                differing.append((handler._get_action(), handler.params, parsed))
        return parsed

    def walk(result: Any) -> Any:
        found = walks(result)
        walked.append(result)
        if found != dynamo_to_dict(result):
            differing.append(("result", dynamo_to_dict(result), found))
        return found

    monkeypatch.setattr(lean_moto, "request_as_json", read)
    monkeypatch.setattr(dynamodb_responses, "dynamo_to_dict", walk)
    calls = _requests(table, pk, binary)
    for operation, params in calls:
        getattr(client, operation)(**params)
    assert differing == []
    operations = {"".join(part.title() for part in name.split("_")) for name, _ in calls}
    assert operations == lean_moto.DYNAMODB_REQUESTS_AS_JSON
    assert set(read_as_json) == operations  # binary values (in base64) too
    assert len(walked) >= 5  # GetItem, BatchGetItem, Query, UpdateItem and TransactGetItems answer data at least


_KEY_STATE_APART = {"name", "last_modified", "_time_progressed", "lock", "_value_buffer", "_version_id", "value"}
"""What two objects put one after the other differ in by nature (their key, times, version, buffer and its lock;
`value`, the body, is compared on its own)."""


def _stored_state(backend: Any, key: str) -> dict[str, Any]:
    from chalicelib.settings import settings

    stored = backend.get_object(settings().bucket_name, key)
    etag = stored.etag  # computed once and kept: PutObject's answer asked for it
    state = {name: value for name, value in vars(stored).items() if name not in _KEY_STATE_APART}
    state["acl"] = repr(stored.acl)
    state["_metadata"] = dict(stored._metadata)
    return {**state, "body": stored.value, "etag": etag, "tags": backend.get_object_tagging(stored)}


def _read_back(s3: Any, bucket: str, key: str) -> dict[str, Any]:
    apart = {"ResponseMetadata", "LastModified", "Body", "VersionId"}
    head = s3.head_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
    got = s3.get_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
    return {
        "head": {name: value for name, value in head.items() if name not in apart},
        "get": {name: value for name, value in got.items() if name not in apart},
        "body": got["Body"].read(),
    }


@pytest.mark.parametrize(
    ("body", "changed", "content_type", "metadata"),
    [
        (b"name,value\nA,1\n", b"name,value\nB,2\nC,3\n", "text/csv", {}),
        (b"PK\x03\x04\x00\xff" * 40, b"\x00\x01binary" * 7, "application/zip", {"sha256": "abc", "Name": "x"}),
    ],
    ids=["text", "binary with metadata"],
)
def test_an_object_put_straight_into_motos_bucket_is_the_one_its_put_object_stores(
    aws, body, changed, content_type, metadata
):
    """tests/support/stored.py put_object (a copied tenant's objects, tests/support/snapshots.py): the shape of a
    PutObject taken from the object it stored, a body put with it is the object PutObject stores for that body, as
    moto holds it and as botocore reads it back (head and get, checksums asked for)."""
    from chalicelib.settings import settings
    from chalicelib.storage import clients
    from tests.support.stored import in_process_bucket, put_object, put_shape

    s3, bucket, backend, prefix = clients.s3(), settings().bucket_name, in_process_bucket(), f"shortcut/{new_locator()}"
    assert backend is not None
    s3.put_object(Bucket=bucket, Key=f"{prefix}/template", Body=body, ContentType=content_type, Metadata=metadata)
    shape = put_shape(backend, f"{prefix}/template")
    for content in (body, changed):
        s3.put_object(
            Bucket=bucket, Key=f"{prefix}/by-request", Body=content, ContentType=content_type, Metadata=metadata
        )
        put_object(backend, f"{prefix}/straight", content, shape)

        assert _stored_state(backend, f"{prefix}/straight") == _stored_state(backend, f"{prefix}/by-request")
        assert _read_back(s3, bucket, f"{prefix}/straight") == _read_back(s3, bucket, f"{prefix}/by-request")
