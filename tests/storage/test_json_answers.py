"""storage/clients.attribute_values_read_directly: DynamoDB's answers parse as botocore's own parser parses them
(every attribute value, nested or not, binaries decoded, odd shapes botocore's way), on the client's endpoint."""

from __future__ import annotations

import base64
import json
from typing import Any

import boto3
import botocore.session
import pytest
from botocore.config import Config
from botocore.parsers import JSONParser

from chalicelib.storage import clients

B64 = base64.b64encode(b"\x00\x01binary").decode()
VALUE: dict[str, Any] = {
    "M": {
        "s": {"S": "text é"},
        "n": {"N": "12.50"},
        "b": {"B": B64},
        "bs": {"BS": [B64, B64]},
        "ss": {"SS": ["x", "y"]},
        "ns": {"NS": ["1", "2"]},
        "l": {"L": [{"NULL": True}, {"BOOL": False}, {"M": {}}, {"L": [{"B": B64}]}]},
    }
}
ODD: list[Any] = [
    {"S": "a", "N": "1"},  # two members
    {"X": "unknown"},
    {"S": None},
    {},
    {"__type": "x"},
    {"SS": "not a list"},
    {"M": ["not a map"]},
    {"L": {"not": "a list"}},
    {"BS": [None, B64]},
    {"L": [None, {"S": "x"}]},
    {"M": {"null": None, "s": {"S": "x"}}},
]
ITEM = {"PK": {"S": "T#1"}, "SK": {"S": "ROOT"}, "value": VALUE, **{f"odd{n}": odd for n, odd in enumerate(ODD)}}
ANSWERS: list[tuple[str, dict[str, Any]]] = [
    ("GetItem", {"Item": ITEM, "ConsumedCapacity": {"TableName": "t", "CapacityUnits": 1.5}}),
    ("GetItem", {}),
    ("Query", {"Items": [ITEM, ITEM], "Count": 2, "ScannedCount": 2, "LastEvaluatedKey": {"PK": {"S": "x"}}}),
    ("Query", {"Items": [None, ITEM], "Count": 2}),
    ("UpdateItem", {"Attributes": ITEM}),
    ("BatchGetItem", {"Responses": {"t": [ITEM]}, "UnprocessedKeys": {"t": {"Keys": [{"PK": {"B": B64}}]}}}),
    ("TransactGetItems", {"Responses": [{"Item": ITEM}, {}]}),
    ("BatchWriteItem", {"UnprocessedItems": {"t": [{"PutRequest": {"Item": ITEM}}]}}),
    (
        "TransactWriteItems",
        {"ItemCollectionMetrics": {"t": [{"ItemCollectionKey": ITEM, "SizeEstimateRangeGB": [1.0]}]}},
    ),
]
ERRORS: list[tuple[str, dict[str, Any]]] = [
    (
        "TransactWriteItems",
        {
            "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
            "message": "cancelled",
            "CancellationReasons": [{"Code": "ConditionalCheckFailed", "Item": ITEM}, {"Code": "None"}],
        },
    ),
    (
        "PutItem",
        {"__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException", "message": "x", "Item": ITEM},
    ),
]


def _response(body: dict[str, Any], status: int = 200) -> dict[str, Any]:
    return {
        "status_code": status,
        "headers": {"x-amzn-RequestId": "r1", "Content-Type": "application/x-amz-json-1.0"},
        "body": json.dumps(body).encode(),
        "context": {},
    }


def _outcome(parser: Any, response: dict[str, Any], shape: Any) -> Any:
    """What the parser answers, or the kind of error it raises (botocore fails on some shapes: so must we)."""
    try:
        return parser.parse(response, shape)
    except Exception as error:  # noqa: BLE001 - the comparison is the point
        return type(error).__name__


def _parsers() -> tuple[JSONParser, Any]:
    factory = clients._AttributeValueParsers(botocore.session.get_session().get_component("response_parser_factory"))
    return JSONParser(), factory.create_parser("json")


@pytest.mark.parametrize(("operation", "body"), ANSWERS)
def test_an_answer_parses_as_botocores(operation: str, body: dict[str, Any]) -> None:
    shape = botocore.session.get_session().get_service_model("dynamodb").operation_model(operation).output_shape
    botocores, ours = _parsers()
    assert _outcome(ours, _response(body), shape) == _outcome(botocores, _response(body), shape)
    clean = json.loads(json.dumps(body).replace('"odd', '"_odd'))  # the odd values alone fail botocore too
    for name in list(ITEM):
        if name.startswith("odd"):
            for item in _items(clean):
                item.pop("_" + name, None)
    parsed = _outcome(ours, _response(clean), shape)
    assert isinstance(parsed, dict)
    assert parsed == _outcome(botocores, _response(clean), shape)


@pytest.mark.parametrize(("operation", "body"), ERRORS)
def test_an_error_and_its_items_parse_as_botocores(operation: str, body: dict[str, Any]) -> None:
    model = botocore.session.get_session().get_service_model("dynamodb")
    error = model.shape_for(body["__type"].rsplit("#", 1)[1])
    botocores, ours = _parsers()
    output = model.operation_model(operation).output_shape
    for shape in (error, output):
        assert _outcome(ours, _response(body, 400), shape) == _outcome(botocores, _response(body, 400), shape)


def _items(node: Any) -> list[dict[str, Any]]:
    """The maps in `node` that hold a key starting "_odd" (the items, wherever the answer has them)."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if any(key.startswith("_odd") for key in node):
            found.append(node)
        for inner in node.values():
            found += _items(inner)
    elif isinstance(node, list):
        for inner in node:
            found += _items(inner)
    return found


def test_the_values_read_directly_are_decoded() -> None:
    shape = botocore.session.get_session().get_service_model("dynamodb").operation_model("GetItem").output_shape
    _, ours = _parsers()
    parsed = ours.parse(_response({"Item": {"v": VALUE}}), shape)["Item"]["v"]["M"]
    assert parsed["b"] == {"B": b"\x00\x01binary"}
    assert parsed["l"]["L"][3] == {"L": [{"B": b"\x00\x01binary"}]}


def test_the_service_clients_endpoint_parses_this_way(monkeypatch: pytest.MonkeyPatch) -> None:
    made = boto3.session.Session().client("dynamodb", region_name="us-east-1", config=Config())
    clients.attribute_values_read_directly(made)
    clients.attribute_values_read_directly(made)  # once is enough: the second call changes nothing
    factory = made._endpoint._response_parser_factory
    assert isinstance(factory, clients._AttributeValueParsers)
    assert not isinstance(factory._factory, clients._AttributeValueParsers)
    parser = factory.create_parser("json")
    assert parser._parse_shape.__qualname__.startswith("_read_attribute_values_directly")


@pytest.mark.parametrize("odd", ODD)
def test_an_odd_value_parses_as_botocore_parses_it(odd: Any) -> None:
    shape = botocore.session.get_session().get_service_model("dynamodb").operation_model("GetItem").output_shape
    botocores, ours = _parsers()
    for item in ({"v": odd}, {"v": {"M": {"inner": odd}}}, {"v": {"L": [odd]}}):
        body = {"Item": item}
        assert _outcome(ours, _response(body), shape) == _outcome(botocores, _response(body), shape)
