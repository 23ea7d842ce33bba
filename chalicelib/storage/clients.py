"""boto3 clients, created lazily on first use (cold start stays cheap) and resettable for tests.

Every client comes from one boto3 Session per process: a Session loads botocore's endpoint and service
data once, so the second and third clients cost ~10-70 ms instead of ~80-140 ms. A Session is not
thread-safe (the local stack serves and runs jobs on several threads), so clients are made under a lock;
the clients themselves are thread-safe."""

from __future__ import annotations

import base64
import json
import threading
from typing import Any

from chalicelib.settings import settings

_lock = threading.Lock()
_session: Any = None
_clients: dict[str, Any] = {}


def client(service: str, **options: Any) -> Any:
    """The client of `service`; `options` (botocore Config settings) make a client of their own."""
    name = service + "".join(f" {key}={value}" for key, value in sorted(options.items()))
    made = _clients.get(name)
    if made is None:
        with _lock:
            made = _clients.get(name)
            if made is None:
                made = _clients[name] = _new_client(service, options)
    return made


def _new_client(service: str, options: dict[str, Any]) -> Any:
    global _session
    import boto3  # deferred: importing boto3 costs ~100 ms of cold start
    from botocore.config import Config

    current = settings()
    # Locally and in the tests botocore checks every request against the service model (moto is more
    # lenient than AWS); deployed, AWS checks them itself, and the client-side walk of every request was
    # 15-20 % of an auto-renewal's CPU (benchmarks/README, auto_renewal.py).
    config = Config(
        **{
            "retries": {"max_attempts": 4, "mode": "standard"},
            "connect_timeout": 2,
            "read_timeout": 10,
            "parameter_validation": current.is_local,
            **options,
        }
    )
    if _session is None:
        _session = boto3.session.Session()
    made = _session.client(service, region_name=current.region, endpoint_url=current.aws_endpoint_url, config=config)
    if service == "dynamodb":
        json_bodies(made)
        table_names_read_directly(made)
        attribute_values_read_directly(made)
    return made


JSON_BODIES = frozenset(
    {
        "GetItem",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "Query",
        "Scan",
        "BatchGetItem",
        "BatchWriteItem",
        "TransactGetItems",
        "TransactWriteItems",
    }
)
"""The DynamoDB operations whose request body `json_bodies` writes itself."""


def json_bodies(client: Any) -> None:
    """DynamoDB's item operations (JSON_BODIES) get their request body as `json.dumps` of their parameters,
    not by botocore's walk of the service model over every value (8 ms of a migrated account's 25-30 ms of
    CPU went there, most of it in its final TransactWriteItems). What that walk adds for these operations'
    inputs, base64 for a binary attribute, is done here; a value JSON cannot hold (no such value is sent)
    takes botocore's way. botocore's check of the parameters, where the client makes it (locally), is kept,
    and the rest of the request (method, headers) is botocore's. tests/storage/test_json_bodies.py: the
    same body as botocore's."""
    if not isinstance(client._serializer, _JsonBodies):
        client._serializer = _JsonBodies(client._serializer)


class _JsonBodies:
    def __init__(self, serializer: Any):
        from botocore.validate import ParamValidationDecorator

        self._whole = serializer
        checked = isinstance(serializer, ParamValidationDecorator)
        self._validator = serializer._param_validator if checked else None
        self._plain = serializer._serializer if checked else serializer

    def serialize_to_request(self, parameters: dict[str, Any], operation_model: Any) -> dict[str, Any]:
        if operation_model.name not in JSON_BODIES or operation_model.endpoint:
            return dict(self._whole.serialize_to_request(parameters, operation_model))
        if self._validator is not None:
            from botocore.exceptions import ParamValidationError

            report = self._validator.validate(parameters, operation_model.input_shape)
            if report.has_errors():
                raise ParamValidationError(report=report.generate_report())
        try:
            body = json.dumps(parameters, separators=(",", ":"), default=_base64).encode()
        except TypeError:
            return dict(self._plain.serialize_to_request(parameters, operation_model))
        serialized = dict(self._plain.serialize_to_request({}, operation_model))
        serialized["body"] = body
        return serialized


TRANSACT_WRITE_TABLES = (
    "TransactItems[*].[ConditionCheck.TableName, Put.TableName, Delete.TableName, Update.TableName][]"
)
TRANSACT_GET_TABLES = "TransactItems[*].Get.TableName"
_KINDS_OF_WRITE = ("ConditionCheck", "Put", "Delete", "Update")


def table_names_read_directly(client: Any) -> None:
    """The table names of a transaction, which botocore's endpoint rules take as a parameter (ResourceArnList,
    for endpoints by account), are read from the request directly, not by botocore's JMESPath interpreter:
    its walk of `TransactItems[*].[ConditionCheck.TableName, Put.TableName, ...][]` visited some 700 nodes
    for each of a renewal's 40-action writes, two thirds of botocore's endpoint resolution (0.5-1 ms of a
    renewal's CPU; benchmarks/README "Issue 28 at stop 45"). The same list: the names in order, absent
    ones left out. A request of any other shape (an action that is not a map, a name that is not text) and
    every other path take botocore's way; tests/storage/test_endpoint_parameters.py compares the two."""
    resolver: Any = getattr(client, "_ruleset_resolver", None)
    botocores = getattr(resolver, "_resolve_param_as_operation_context_param", None)
    if botocores is None or getattr(botocores, "reads_directly", False):
        return

    def resolved(param_name: str, operation_model: Any, call_args: dict[str, Any]) -> Any:
        parameters = operation_model.operation_context_parameters
        path = parameters[param_name]["path"] if param_name in parameters else None
        if path == TRANSACT_WRITE_TABLES:
            names = _transact_tables(call_args, _KINDS_OF_WRITE)
        elif path == TRANSACT_GET_TABLES:
            names = _transact_tables(call_args, ("Get",))
        else:
            names = None
        return botocores(param_name, operation_model, call_args) if names is None else names

    resolved.reads_directly = True  # type: ignore[attr-defined]
    resolver._resolve_param_as_operation_context_param = resolved


def _transact_tables(call_args: dict[str, Any], kinds: tuple[str, ...]) -> list[str] | None:
    """The table names of `TransactItems`, as the JMESPath projection finds them; None (botocore's way) for
    anything but a list of maps whose actions are maps with text names."""
    items = call_args.get("TransactItems")
    if type(items) is not list:
        return None
    names = []
    for item in items:
        if type(item) is not dict:
            return None
        for kind in kinds:
            action = item.get(kind)
            if action is None:
                continue
            if type(action) is not dict:
                return None
            name = action.get("TableName")
            if name is None:
                continue
            if type(name) is not str:
                return None
            names.append(name)
    return names


def attribute_values_read_directly(client: Any) -> None:
    """DynamoDB's answers are parsed as botocore parses them, but each attribute value (the `AttributeValue`
    shape: most of a Query's answer) by one function instead of botocore's generic walk of the service model
    (a structure of ten members looked up for each value, a method dispatched by type for each node): a
    renewal's Query answers some 1,300 values a day. A value of any shape but DynamoDB's own (one type, its
    value not null) takes botocore's way; tests/storage/test_json_answers.py compares the two."""
    endpoint: Any = getattr(client, "_endpoint", None)
    factory = getattr(endpoint, "_response_parser_factory", None)
    if factory is None or isinstance(factory, _AttributeValueParsers):
        return
    endpoint._response_parser_factory = _AttributeValueParsers(factory)


class _AttributeValueParsers:
    def __init__(self, factory: Any):
        self._factory = factory

    def create_parser(self, protocol_name: str) -> Any:
        from botocore.parsers import JSONParser

        parser = self._factory.create_parser(protocol_name)
        if type(parser) is JSONParser:
            _read_attribute_values_directly(parser)
        return parser


def _read_attribute_values_directly(parser: Any) -> None:
    """botocore's JSON parser `parser`, its walk taking `value` for each AttributeValue: what botocore's
    `_handle_structure` makes of it (the value's one member, parsed by its type: a blob decoded, a map's or
    list's values in turn, anything else as sent; a member not sent or null left out)."""
    botocores = parser._parse_shape
    blob = parser._blob_parser

    def value(shape: Any, node: Any) -> Any:
        if type(node) is dict and len(node) == 1:
            for tag, raw in node.items():
                if raw is None:
                    break
                if tag in _AS_SENT:
                    return {tag: raw}
                if tag == "M" and type(raw) is dict:
                    return {tag: {name: None if inner is None else value(shape, inner) for name, inner in raw.items()}}
                if tag == "L" and type(raw) is list:
                    return {tag: [None if inner is None else value(shape, inner) for inner in raw]}
                if tag == "B":
                    return {tag: blob(raw)}
                if tag in _SETS and type(raw) is list:
                    return {tag: list(raw)}
                if tag == "BS" and type(raw) is list:
                    return {tag: [None if inner is None else blob(inner) for inner in raw]}
        return botocores(shape, node)

    def parse_shape(shape: Any, node: Any) -> Any:
        return value(shape, node) if shape.name == "AttributeValue" else botocores(shape, node)

    parser._parse_shape = parse_shape


_AS_SENT = frozenset({"S", "N", "NULL", "BOOL"})
"""The attribute value types botocore's JSON parser gives as they were sent."""
_SETS = frozenset({"SS", "NS"})


def _base64(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(type(value).__name__)


def dynamodb() -> Any:
    current = settings()
    if current.aws_unsigned and current.is_local and current.aws_endpoint_url is None:
        from botocore import UNSIGNED

        return client("dynamodb", signature_version=UNSIGNED)
    return client("dynamodb")


def s3() -> Any:
    return client("s3")


def s3_presigner() -> Any:
    """The S3 client that signs upload URLs: Signature Version 4, which signs the headers a client must send
    (Content-Length, the checksum); botocore would presign with version 2 in us-east-1."""
    return client("s3", signature_version="s3v4")


def sqs() -> Any:
    return client("sqs")


def reset() -> None:
    """Drop every client and the session, so the next call builds them against the current environment."""
    global _session
    with _lock:
        _clients.clear()
        _session = None
