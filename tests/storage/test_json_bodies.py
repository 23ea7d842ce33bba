"""storage/clients.json_bodies: DynamoDB's item operations get the request botocore would have made (the same
JSON body, method and headers), their parameters still checked where the client checks them."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ParamValidationError

from chalicelib.storage import clients

VALUE = {
    "M": {
        "s": {"S": "text é"},
        "n": {"N": "12.50"},
        "b": {"B": b"\x00\x01binary"},
        "bs": {"BS": [b"a", b"b"]},
        "ss": {"SS": ["x", "y"]},
        "ns": {"NS": ["1", "2"]},
        "l": {"L": [{"NULL": True}, {"BOOL": False}, {"M": {}}]},
    }
}
KEY = {"PK": {"S": "T#1"}, "SK": {"S": "ROOT"}}
REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("GetItem", {"TableName": "t", "Key": KEY, "ConsistentRead": True}),
    (
        "PutItem",
        {
            "TableName": "t",
            "Item": {**KEY, "value": VALUE},
            "ConditionExpression": "attribute_not_exists(PK)",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        },
    ),
    (
        "UpdateItem",
        {
            "TableName": "t",
            "Key": KEY,
            "UpdateExpression": "SET #v = :v ADD #c :one",
            "ExpressionAttributeNames": {"#v": "value", "#c": "count"},
            "ExpressionAttributeValues": {":v": VALUE, ":one": {"N": "1"}},
            "ReturnValues": "UPDATED_NEW",
        },
    ),
    ("DeleteItem", {"TableName": "t", "Key": KEY}),
    (
        "Query",
        {
            "TableName": "t",
            "IndexName": "GSI1",
            "KeyConditionExpression": "PK = :p AND begins_with(SK, :s)",
            "ExpressionAttributeValues": {":p": {"S": "T#1"}, ":s": {"S": "A#"}},
            "ExclusiveStartKey": KEY,
            "Limit": 25,
            "ScanIndexForward": False,
        },
    ),
    ("BatchGetItem", {"RequestItems": {"t": {"Keys": [KEY, KEY], "ConsistentRead": True}}}),
    ("BatchWriteItem", {"RequestItems": {"t": [{"PutRequest": {"Item": KEY}}, {"DeleteRequest": {"Key": KEY}}]}}),
    (
        "TransactWriteItems",
        {
            "TransactItems": [
                {"Put": {"TableName": "t", "Item": {**KEY, "value": VALUE}}},
                {"ConditionCheck": {"TableName": "t", "Key": KEY, "ConditionExpression": "attribute_exists(PK)"}},
                {"Delete": {"TableName": "t", "Key": KEY}},
            ],
            "ClientRequestToken": "token-1",
        },
    ),
    ("TransactGetItems", {"TransactItems": [{"Get": {"TableName": "t", "Key": KEY}}]}),
]


def _client(validation: bool) -> Any:
    return boto3.session.Session(aws_access_key_id="a", aws_secret_access_key="b").client(
        "dynamodb", region_name="us-east-1", config=Config(parameter_validation=validation)
    )


@pytest.mark.parametrize("validation", [False, True])
@pytest.mark.parametrize(("operation", "parameters"), REQUESTS, ids=[name for name, _ in REQUESTS])
def test_the_same_request_as_botocores(operation, parameters, validation):
    client = _client(validation)
    model = client.meta.service_model.operation_model(operation)
    theirs = client._serializer.serialize_to_request(parameters, model)
    clients.json_bodies(client)
    ours = client._serializer.serialize_to_request(parameters, model)

    assert json.loads(ours["body"]) == json.loads(theirs["body"])
    assert {name: value for name, value in ours.items() if name != "body"} == {
        name: value for name, value in theirs.items() if name != "body"
    }


def test_parameters_are_still_checked_where_the_client_checks_them():
    client = _client(True)
    clients.json_bodies(client)
    with pytest.raises(ParamValidationError):
        client._serializer.serialize_to_request(
            {"TableName": "t", "Key": {"PK": {"S": 1}}}, client.meta.service_model.operation_model("GetItem")
        )


def test_another_operation_and_an_unknown_value_take_botocores_way():
    client = _client(False)
    clients.json_bodies(client)
    tables = client._serializer.serialize_to_request(
        {"Limit": 5}, client.meta.service_model.operation_model("ListTables")
    )
    assert json.loads(tables["body"]) == {"Limit": 5}
    strange = client._serializer.serialize_to_request(  # a set: botocore writes it as a list, JSON cannot
        {"TableName": "t", "Item": {**KEY, "tags": {"SS": {"x"}}}}, client.meta.service_model.operation_model("PutItem")
    )
    assert json.loads(strange["body"])["Item"]["tags"] == {"SS": ["x"]}


def test_the_services_client_has_it(tenant):
    assert isinstance(clients.dynamodb()._serializer, clients._JsonBodies)
