"""storage/clients.table_names_read_directly: the table names of a transaction, which botocore's endpoint rules
take (ResourceArnList), are what botocore's JMESPath search finds, and the endpoint resolved is the same."""

from __future__ import annotations

from typing import Any

import boto3
import jmespath  # type: ignore[import-untyped]
import pytest
from botocore.config import Config

from chalicelib.storage import clients

KEY = {"PK": {"S": "T#1"}, "SK": {"S": "ROOT"}}
WRITES: list[Any] = [
    [],
    [{"Put": {"TableName": "t", "Item": KEY}}],
    [
        {"Put": {"TableName": "a", "Item": KEY}},
        {"ConditionCheck": {"TableName": "b", "Key": KEY, "ConditionExpression": "attribute_exists(PK)"}},
        {"Delete": {"TableName": "c", "Key": KEY}},
        {"Update": {"TableName": "a", "Key": KEY, "UpdateExpression": "SET #a = :a"}},
    ],
    [{"Put": {"TableName": "t"}, "Delete": {"TableName": "u"}, "Update": {"TableName": "v"}}],  # more than one
    [{"Put": {"Item": KEY}}, {"Update": {"TableName": ""}}, {}],  # no name, an empty one, no action
    [{"Put": {"TableName": None}}, {"Delete": None}],  # nulls: left out
    [{"Put": {"TableName": "arn:aws:dynamodb:us-east-1:123456789012:table/t"}}],
    # shapes botocore's way reads (the fast way declines them): not a list, not a map, a name not text
    None,
    "text",
    {"Put": {"TableName": "t"}},
    [None, {"Put": {"TableName": "t"}}],
    [["Put"], {"Put": {"TableName": "t"}}],
    [{"Put": ["t"]}],
    [{"Put": {"TableName": 5}}],
    [{"Put": {"TableName": ["t", "u"]}}],
    [{"Put": "t"}],
]
GETS: list[Any] = [
    [],
    [{"Get": {"TableName": "t", "Key": KEY}}, {"Get": {"TableName": "u", "Key": KEY}}],
    [{"Get": {"Key": KEY}}, {"Get": None}, {}],
    None,
    [None],
    [{"Get": "t"}],
    [{"Get": {"TableName": 1}}],
]


def _client(endpoint_url: str | None = None) -> Any:
    return boto3.session.Session(region_name="us-east-1").client(
        "dynamodb",
        aws_access_key_id="k",
        aws_secret_access_key="s",
        endpoint_url=endpoint_url,
        config=Config(parameter_validation=False),
    )


@pytest.mark.parametrize(
    ("operation", "items"),
    [("TransactWriteItems", items) for items in WRITES] + [("TransactGetItems", items) for items in GETS],
)
def test_the_table_names_are_what_jmespath_finds(operation, items):
    client = _client()
    model = client.meta.service_model.operation_model(operation)
    resolver = client._ruleset_resolver
    arguments = {} if items is None else {"TransactItems": items}
    theirs = resolver._resolve_param_as_operation_context_param("ResourceArnList", model, arguments)
    assert theirs == jmespath.search(model.operation_context_parameters["ResourceArnList"]["path"], arguments)
    clients.table_names_read_directly(client)
    ours = client._ruleset_resolver._resolve_param_as_operation_context_param("ResourceArnList", model, arguments)
    assert ours == theirs
    assert type(ours) is type(theirs)


@pytest.mark.parametrize("endpoint_url", [None, "http://localhost:8000"])
@pytest.mark.parametrize(
    ("operation", "arguments"),
    [
        ("TransactWriteItems", {"TransactItems": WRITES[2]}),
        ("TransactWriteItems", {"TransactItems": WRITES[6]}),  # a table's ARN: an endpoint of its account
        ("TransactGetItems", {"TransactItems": GETS[1]}),
        ("BatchGetItem", {"RequestItems": {"t": {"Keys": [KEY]}}}),  # another path: botocore's way
        ("ImportTable", {"TableCreationParameters": {"TableName": "t"}}),
        ("GetItem", {"TableName": "t", "Key": KEY}),
    ],
)
def test_the_endpoint_is_the_same(endpoint_url, operation, arguments):
    client = _client(endpoint_url)
    model = client.meta.service_model.operation_model(operation)
    resolver = client._ruleset_resolver
    theirs = resolver.construct_endpoint(model, arguments, {})
    clients.table_names_read_directly(client)
    clients.table_names_read_directly(client)  # twice: once in place
    assert client._ruleset_resolver.construct_endpoint(model, arguments, {}) == theirs


def test_the_services_client_has_it(tenant):
    resolved = clients.dynamodb()._ruleset_resolver._resolve_param_as_operation_context_param
    assert getattr(resolved, "reads_directly", False)
