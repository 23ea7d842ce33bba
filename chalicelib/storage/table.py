"""The table gateway: every DynamoDB call goes through here, inside the caller's key scope."""

from __future__ import annotations

import base64
import json
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from chalicelib.core import codes
from chalicelib.core.errors import (
    DomainError,
)
from chalicelib.core.ids import new_locator
from chalicelib.settings import settings
from chalicelib.storage import clients, codec
from chalicelib.storage.keys import Key

INDEXES = ("GSI1", "GSI2", "GSI3")
HASH_KEY_MAX_BYTES = 2048
RANGE_KEY_MAX_BYTES = 1024
"""DynamoDB refuses (ValidationException) any read or write naming a longer key value, so no item has one."""
MAX_TRANSACTION_ITEMS = 100
MAX_WRITE_BYTES = 3_500_000
"""What one chunk of a write in several TransactWriteItems may hold, measured as its request's JSON (DynamoDB
allows 4 MB of items)."""
BATCH_WRITE_ITEMS = 25
BATCH_WRITE_ATTEMPTS = 8
BATCH_WRITE_BACKOFF_SECONDS = 0.05
BATCH_WRITE_MAX_BACKOFF_SECONDS = 1.0
_THROTTLING = {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}

ErrorFactory = Callable[[], DomainError]


class ScopeViolation(Exception):
    """A key outside the caller's tenant: a programming error, never a client error."""


@dataclass
class WriteOp:
    """One action of a TransactWriteItems, with the error its failed condition means."""

    action: str  # Put | Update | Delete | ConditionCheck
    params: dict[str, Any]
    key: Key
    on_condition_failure: ErrorFactory = field(
        default=lambda: codes.CONCURRENT_MODIFICATION("The record was changed by another request; reload it and retry")
    )


def put_new(item: dict[str, Any], on_exists: ErrorFactory | None = None) -> WriteOp:
    return WriteOp(
        "Put",
        {"Item": codec.serialize(item), "ConditionExpression": "attribute_not_exists(PK)"},
        Key(item["PK"], item["SK"]),
        on_exists or (lambda: codes.CONFLICT_ALREADY_EXISTS("The record already exists")),
    )


def put(item: dict[str, Any]) -> WriteOp:
    return WriteOp("Put", {"Item": codec.serialize(item)}, Key(item["PK"], item["SK"]))


def update(
    key: Key,
    changes: dict[str, Any],
    *,
    expected_version: int | None = None,
    remove: Iterable[str] = (),
    must_exist: bool = True,
    on_failure: ErrorFactory | None = None,
) -> WriteOp:
    """SET `changes`, REMOVE `remove`; with `expected_version`, also bump `version` conditionally."""
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    sets = []
    for i, (name, value) in enumerate(changes.items()):
        names[f"#s{i}"] = name
        values[f":s{i}"] = codec.serialize_value(value)
        sets.append(f"#s{i} = :s{i}")
    conditions = ["attribute_exists(PK)"] if must_exist else []
    if expected_version is not None:
        names["#version"] = "version"
        values[":expected"] = codec.serialize_value(expected_version)
        values[":next"] = codec.serialize_value(expected_version + 1)
        sets.append("#version = :next")
        conditions.append("#version = :expected")
    removes = []
    for i, name in enumerate(remove):
        names[f"#r{i}"] = name
        removes.append(f"#r{i}")
    expression = " ".join(
        part
        for part in (
            "SET " + ", ".join(sets) if sets else "",
            "REMOVE " + ", ".join(removes) if removes else "",
        )
        if part
    )
    params: dict[str, Any] = {"Key": codec.serialize(key.as_dict()), "UpdateExpression": expression}
    if names:
        params["ExpressionAttributeNames"] = names
    if values:
        params["ExpressionAttributeValues"] = values
    if conditions:
        params["ConditionExpression"] = " AND ".join(conditions)
    return WriteOp(
        "Update",
        params,
        key,
        on_failure
        or (lambda: codes.CONCURRENT_MODIFICATION("The record was changed by another request; reload it and retry")),
    )


def delete(key: Key, *, must_exist: bool = False, on_missing: ErrorFactory | None = None) -> WriteOp:
    params: dict[str, Any] = {"Key": codec.serialize(key.as_dict())}
    if must_exist:
        params["ConditionExpression"] = "attribute_exists(PK)"
    return WriteOp(
        "Delete",
        params,
        key,
        on_missing
        or (lambda: codes.CONCURRENT_MODIFICATION("The record was changed by another request; reload it and retry")),
    )


def check_version(key: Key, expected_version: int, on_failure: ErrorFactory | None = None) -> WriteOp:
    return WriteOp(
        "ConditionCheck",
        {
            "Key": codec.serialize(key.as_dict()),
            "ConditionExpression": "#version = :expected",
            "ExpressionAttributeNames": {"#version": "version"},
            "ExpressionAttributeValues": {":expected": codec.serialize_value(expected_version)},
        },
        key,
        on_failure
        or (lambda: codes.CONCURRENT_MODIFICATION("The record was changed by another request; reload it and retry")),
    )


class TableGateway:
    def __init__(self, table_name: str):
        self.table_name = table_name

    @property
    def _client(self) -> Any:
        return clients.dynamodb()

    # --- reads ---------------------------------------------------------------------------------

    def get(self, scope: str, key: Key, *, consistent: bool = True) -> dict[str, Any] | None:
        _check_key(scope, key)
        if not _storable(key):
            return None
        response = self._call(
            self._client.get_item,
            TableName=self.table_name,
            Key=codec.serialize(key.as_dict()),
            ConsistentRead=consistent,
        )
        item = response.get("Item")
        return codec.deserialize(item) if item else None

    def batch_get(self, scope: str, keys: Iterable[Key]) -> list[dict[str, Any]]:
        """Every existing item among `keys` (order not kept), in as few calls as DynamoDB allows."""
        unique = list(dict.fromkeys(keys))
        for key in unique:
            _check_key(scope, key)
        unique = [key for key in unique if _storable(key)]
        found: list[dict[str, Any]] = []
        for start in range(0, len(unique), 100):
            pending: dict[str, Any] | None = {
                self.table_name: {
                    "Keys": [codec.serialize(k.as_dict()) for k in unique[start : start + 100]],
                    "ConsistentRead": True,
                }
            }
            while pending:
                response = self._call(self._client.batch_get_item, RequestItems=pending)
                found.extend(codec.deserialize(i) for i in response["Responses"].get(self.table_name, []))
                pending = response.get("UnprocessedKeys") or None
        return found

    def query(
        self,
        scope: str,
        pk: str,
        *,
        index: str | None = None,
        sk_prefix: str | None = None,
        sk_from: str | None = None,
        sk_to: str | None = None,
        sk_after: str | None = None,
        forward: bool = True,
        limit: int | None = None,
        start_key: dict[str, Any] | None = None,
        consistent: bool = False,
    ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """One Query call: items plus the LastEvaluatedKey (None at the end). `consistent` reads the
        table strongly consistently (a global secondary index cannot be)."""
        if not pk.startswith(scope):
            raise ScopeViolation(f"query partition {pk!r} is outside scope {scope!r}")
        if index is not None and index not in INDEXES:
            raise ValueError(f"unknown index {index}")
        if index is not None and consistent:
            raise ValueError("a global secondary index has no consistent reads")
        if _too_long(pk, HASH_KEY_MAX_BYTES) or _too_long(sk_prefix, RANGE_KEY_MAX_BYTES):
            return [], None
        pk_name, sk_name = (f"{index}PK", f"{index}SK") if index else ("PK", "SK")
        names = {"#pk": pk_name}
        values = {":pk": {"S": pk}}
        condition = "#pk = :pk"
        if sk_prefix is not None:
            names["#sk"] = sk_name
            values[":prefix"] = {"S": sk_prefix}
            condition += " AND begins_with(#sk, :prefix)"
        elif sk_after is not None and sk_to is not None:
            names["#sk"] = sk_name
            values[":from"] = {"S": sk_after + "\x00"}
            values[":to"] = {"S": sk_to}
            condition += " AND #sk BETWEEN :from AND :to"
        elif sk_after is not None:
            names["#sk"] = sk_name
            values[":after"] = {"S": sk_after}
            condition += " AND #sk > :after"
        elif sk_from is not None and sk_to is not None:
            names["#sk"] = sk_name
            values[":from"] = {"S": sk_from}
            values[":to"] = {"S": sk_to}
            condition += " AND #sk BETWEEN :from AND :to"
        elif sk_from is not None:
            names["#sk"] = sk_name
            values[":from"] = {"S": sk_from}
            condition += " AND #sk >= :from"
        elif sk_to is not None:
            names["#sk"] = sk_name
            values[":to"] = {"S": sk_to}
            condition += " AND #sk <= :to"
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
            "ScanIndexForward": forward,
        }
        if index:
            params["IndexName"] = index
        if limit:
            params["Limit"] = limit
        if start_key:
            params["ExclusiveStartKey"] = start_key
        if consistent:
            params["ConsistentRead"] = True
        response = self._call(self._client.query, **params)
        items = [codec.deserialize(i) for i in response.get("Items", [])]
        return items, response.get("LastEvaluatedKey")

    # --- writes --------------------------------------------------------------------------------

    def write(self, scope: str, op: WriteOp) -> None:
        """A single conditional write outside a transaction (job status moves, guard snapshots).

        A conditional put or update carries a token of its own (`WRITE_TOKEN`): when botocore resends it
        because an attempt's answer was lost, the resend's condition fails against what the first attempt
        wrote, and the item DynamoDB answers with (ALL_OLD) holds our token, so the write is the success it
        was rather than a lost race."""
        _check_op(scope, op)
        method = {
            "Put": self._client.put_item,
            "Update": self._client.update_item,
            "Delete": self._client.delete_item,
        }[op.action]
        params, token = op.params, None
        if op.action in ("Put", "Update") and "ConditionExpression" in params:
            token = new_locator()
            params = {**_with_write_token(op.action, params, token), "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
        try:
            self._call(method, TableName=self.table_name, **params)
        except _ConditionFailed as failed:
            if token is not None and _written_by(failed.item, token):
                return
            raise op.on_condition_failure() from None

    def increment(
        self,
        scope: str,
        key: Key,
        attribute: str,
        *,
        below: int | None = None,
        on_limit: ErrorFactory | None = None,
        by: int = 1,
    ) -> int:
        """One UpdateItem: ADD `by` (1) to a numeric attribute (the item and attribute start at 0), answering
        the new value. With `below`, only while the value before is below it (else `on_limit()`)."""
        _check_key(scope, key)
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "Key": codec.serialize(key.as_dict()),
            "UpdateExpression": "ADD #counter :one",
            "ExpressionAttributeNames": {"#counter": attribute},
            "ExpressionAttributeValues": {":one": {"N": str(by)}},
            "ReturnValues": "UPDATED_NEW",
        }
        if below is not None:
            params["ConditionExpression"] = "attribute_not_exists(#counter) OR #counter < :below"
            params["ExpressionAttributeValues"][":below"] = codec.serialize_value(below)
        # a token, as write() gives its conditional writes: a resend of an increment that was applied (its answer
        # lost) fails on it and answers the value the first attempt left, where ADD would count it twice
        token = new_locator()
        params["UpdateExpression"] = "SET #token = :token ADD #counter :one"
        params["ExpressionAttributeNames"]["#token"] = WRITE_TOKEN
        params["ExpressionAttributeValues"][":token"] = {"S": token}
        once = "(attribute_not_exists(#token) OR #token <> :token)"
        params["ConditionExpression"] = f"{once} AND ({params['ConditionExpression']})" if below is not None else once
        params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        try:
            response = self._call(self._client.update_item, **params)
        except _ConditionFailed as failed:
            if _written_by(failed.item, token):
                return int(codec.deserialize(failed.item or {})[attribute])
            raise (on_limit or (lambda: codes.CONFLICT_LIMIT_REACHED("The counter reached its limit")))() from None
        return int(codec.deserialize(response["Attributes"])[attribute])

    def batch_write(self, scope: str, items: Iterable[dict[str, Any]]) -> None:
        """Unconditional puts, BATCH_WRITE_ITEMS per BatchWriteItem: bulk data (table rows) that a later
        transaction makes reachable, so a retry after a failure repeats harmlessly. Items DynamoDB leaves
        unprocessed are sent again after a jittered exponential backoff; 503 when they keep coming back.
        The keys must be distinct."""
        requests = []
        for item in items:
            op = put(item)
            _check_op(scope, op)
            requests.append({"PutRequest": {"Item": op.params["Item"]}})
        self._batch_send(requests)

    def batch_delete(self, scope: str, keys: Iterable[Key]) -> None:
        """Unconditional deletes, as batch_write sends puts: bulk data no record reaches any more."""
        requests = []
        for key in keys:
            _check_key(scope, key)
            requests.append({"DeleteRequest": {"Key": codec.serialize(key.as_dict())}})
        self._batch_send(requests)

    def _batch_send(self, requests: list[dict[str, Any]]) -> None:
        for start in range(0, len(requests), BATCH_WRITE_ITEMS):
            pending = requests[start : start + BATCH_WRITE_ITEMS]
            for attempt in range(BATCH_WRITE_ATTEMPTS):
                if attempt:
                    ceiling = min(BATCH_WRITE_MAX_BACKOFF_SECONDS, BATCH_WRITE_BACKOFF_SECONDS * 2**attempt)
                    time.sleep(random.uniform(0, ceiling))
                response = self._call(self._client.batch_write_item, RequestItems={self.table_name: pending})
                pending = response.get("UnprocessedItems", {}).get(self.table_name, [])
                if not pending:
                    break
            else:
                raise codes.SERVICE_UNAVAILABLE("The data store is busy; retry shortly")

    def transact(self, scope: str, ops: list[WriteOp]) -> None:
        if not ops:
            return
        if len(ops) > MAX_TRANSACTION_ITEMS:
            raise codes.REQUEST_INVALID(f"One change may touch at most {MAX_TRANSACTION_ITEMS} records")
        # one JSON of the whole write: within an item's limit, so is each action's part of it, and no action
        # needs a size of its own (a renewal's issue writes some 40 actions: 40 encodings were 1 ms of its CPU)
        sized = _json_size([op.params for op in ops]) <= codec.MAX_ITEM_BYTES
        seen: set[Key] = set()
        for op in ops:
            _check_op(scope, op, sized=sized)
            if op.key in seen:
                raise ValueError(f"two actions on the same item {op.key} in one transaction")
            seen.add(op.key)
        items = [{op.action: {"TableName": self.table_name, **op.params}} for op in ops]
        # botocore gives the call a ClientRequestToken (the operation's idempotency token) and resends it with
        # the same token when an attempt's answer is lost, which DynamoDB answers as the success it was
        params: dict[str, Any] = {"TransactItems": items}
        try:
            self._call(self._client.transact_write_items, **params)
        except _Cancelled as cancelled:
            raise _cancellation_error(ops, cancelled.reasons) from None

    # --- error translation ---------------------------------------------------------------------

    def _call(self, method: Callable[..., dict[str, Any]], **params: Any) -> dict[str, Any]:
        from botocore.exceptions import ClientError, HTTPClientError
        from botocore.exceptions import ConnectionError as LostConnection

        try:
            return method(**params)
        except (HTTPClientError, LostConnection):
            # botocore's retries ran out on timeouts or lost connections: a write may or may not have been
            # applied, which only a retry of the whole request (with its idempotency key) can settle
            raise codes.SERVICE_UNAVAILABLE("The data store did not answer in time; retry shortly") from None
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            if code == "ValidationException" and "Item size" in error.response.get("Error", {}).get("Message", ""):
                raise _too_large("The record would be larger than DynamoDB stores") from None
            if code == "ConditionalCheckFailedException":
                raise _ConditionFailed(error.response.get("Item")) from None
            if code == "TransactionCanceledException":
                raise _Cancelled(error.response.get("CancellationReasons") or []) from None
            if code in _THROTTLING or code == "TransactionInProgressException":
                raise codes.SERVICE_UNAVAILABLE("The data store is busy; retry shortly") from None
            raise


class _ConditionFailed(Exception):
    def __init__(self, item: dict[str, Any] | None):
        super().__init__("condition failed")
        self.item = item
        """The item as it is (DynamoDB's ALL_OLD), when the call asked for it and the item exists."""


WRITE_TOKEN = "writeToken"
"""The attribute in which a single conditional write leaves its token (TableGateway.write)."""


def _with_write_token(action: str, params: dict[str, Any], token: str) -> dict[str, Any]:
    if action == "Put":
        return {**params, "Item": {**params["Item"], WRITE_TOKEN: {"S": token}}}
    expression = params["UpdateExpression"]
    setting = "SET #writeToken = :writeToken"
    return {
        **params,
        "UpdateExpression": setting + ", " + expression[4:]
        if expression.startswith("SET ")
        else f"{setting} {expression}",
        "ExpressionAttributeNames": {**params.get("ExpressionAttributeNames", {}), "#writeToken": WRITE_TOKEN},
        "ExpressionAttributeValues": {**params.get("ExpressionAttributeValues", {}), ":writeToken": {"S": token}},
    }


def _written_by(item: dict[str, Any] | None, token: str) -> bool:
    return (item or {}).get(WRITE_TOKEN) == {"S": token}


class _Cancelled(Exception):
    def __init__(self, reasons: list[dict[str, Any]]):
        super().__init__("transaction cancelled")
        self.reasons = reasons


def _cancellation_error(ops: list[WriteOp], reasons: list[dict[str, Any]]) -> DomainError:
    for op, reason in zip(ops, reasons):
        if reason.get("Code") == "ConditionalCheckFailed":
            return op.on_condition_failure()
        if reason.get("Code") == "ValidationError" and "Item size" in (reason.get("Message") or ""):
            return _too_large("The record would be larger than DynamoDB stores")
    if any(r.get("Code") in _THROTTLING for r in reasons):
        return codes.SERVICE_UNAVAILABLE("The data store is busy; retry shortly")
    return codes.CONCURRENT_MODIFICATION("The record was changed by another request; reload it and retry")


def _check_key(scope: str, key: Key) -> None:
    if not key.pk.startswith(scope):
        raise ScopeViolation(f"key {key.pk!r} is outside scope {scope!r}")


def _too_long(value: str | None, limit: int) -> bool:
    return value is not None and len(value.encode("utf-8")) > limit


def _storable(key: Key) -> bool:
    return not (_too_long(key.pk, HASH_KEY_MAX_BYTES) or _too_long(key.sk, RANGE_KEY_MAX_BYTES))


_INDEX_KEYS = tuple(
    (f"{index}{part}", limit)
    for index in INDEXES
    for part, limit in (("PK", HASH_KEY_MAX_BYTES), ("SK", RANGE_KEY_MAX_BYTES))
)
"""The index key attributes an item may carry, each with the longest value DynamoDB takes."""
_INDEX_PARTITIONS = tuple(f"{index}PK" for index in INDEXES)
_INDEX_PARTITION_NAMES = frozenset(_INDEX_PARTITIONS)


def _check_op(scope: str, op: WriteOp, *, sized: bool = False) -> None:
    """The op's keys are in `scope` and storable, and what it writes fits in an item (`sized`: the caller has
    found its whole write within an item's limit, so this op is too)."""
    _check_key(scope, op.key)
    params = op.params
    item = params.get("Item", {})
    if not sized:
        _check_size(op, item)
    if not _storable(op.key):
        raise codes.REQUEST_VALUE_TOO_LONG("A value is too long to be stored")
    if item:
        for name, limit in _INDEX_KEYS:
            value = item.get(name)
            if value is not None and _too_long(value.get("S"), limit):
                raise codes.REQUEST_VALUE_TOO_LONG("A value is too long to be stored")
    partition_values = [item.get(name, {}).get("S") for name in _INDEX_PARTITIONS] if item else []
    names = params.get("ExpressionAttributeNames")
    if names:
        values = params.get("ExpressionAttributeValues", {})
        partition_values += [
            values.get(":" + placeholder[1:], {}).get("S")
            for placeholder, name in names.items()
            if name in _INDEX_PARTITION_NAMES
        ]
    for value in partition_values:
        if value is not None and not value.startswith(scope):
            raise ScopeViolation(f"index partition {value!r} is outside scope {scope!r}")


def _check_size(op: WriteOp, item: dict[str, Any]) -> None:
    """413 `record.too_large` for a put whose item, or an update whose key and values, DynamoDB would refuse as
    larger than an item holds. An update counts only what it sets: one that makes an item too large with what
    the item keeps besides is refused by DynamoDB, which `_call` answers the same way."""
    if op.action not in ("Put", "Update") or _json_size(op.params) <= codec.MAX_ITEM_BYTES:
        return  # the JSON of what it sends is never shorter than what DynamoDB counts: it fits (one C call)
    if op.action == "Put":
        size = codec.item_size(item)
    else:
        names = op.params.get("ExpressionAttributeNames", {})
        values = op.params.get("ExpressionAttributeValues", {})
        size = codec.item_size(op.params["Key"]) + sum(
            len(names.get("#" + placeholder[1:], "").encode("utf-8")) + codec.item_size({"": value})
            for placeholder, value in values.items()
            if placeholder.startswith(":s")
        )
    if size > codec.MAX_ITEM_BYTES:
        entity = item.get("entity", {}).get("S", "record")
        raise _too_large(f"The {entity} would take {size:,} bytes stored")


def _json_size(attributes: Any) -> int:
    """The length of the attributes' JSON: at least `codec.item_size` of them (each name and string is
    quoted, a non-ASCII character escaped to 6 or 12 characters for its 2 to 4 bytes, a number written
    in full, a binary in base64, a map or list and each element more than its 3 and 1 bytes)."""
    return len(json.dumps(attributes, default=_as_sent))


def _too_large(what: str) -> DomainError:
    return codes.RECORD_TOO_LARGE(
        f"{what}; one record holds at most {codec.MAX_ITEM_BYTES:,} bytes (DynamoDB's "
        "400 KB item limit): send less data"
    )


@lru_cache(maxsize=1)
def _gateway(table_name: str) -> TableGateway:
    return TableGateway(table_name)


def gateway() -> TableGateway:
    return _gateway(settings().table_name)


def chunked(
    groups: Sequence[Sequence[WriteOp]], max_items: int, max_bytes: int, size: Callable[[WriteOp], int]
) -> list[list[WriteOp]]:
    """The groups' operations in key order (of each group's first), packed in order into as few chunks
    as hold at most `max_items` operations and `max_bytes` (by `size`) each, never splitting a group.
    Deterministic: the same groups give the same chunks."""
    chunks: list[list[WriteOp]] = []
    current: list[WriteOp] = []
    used = 0
    for group in sorted(groups, key=lambda ops: (ops[0].key.pk, ops[0].key.sk)):
        weight = sum(size(op) for op in group)
        if len(group) > max_items or weight > max_bytes:
            raise ValueError(f"a group of {len(group)} operations ({weight} bytes) fits in no chunk")
        if current and (len(current) + len(group) > max_items or used + weight > max_bytes):
            chunks.append(current)
            current, used = [], 0
        current.extend(group)
        used += weight
    if current:
        chunks.append(current)
    return chunks


def request_size(op: WriteOp) -> int:
    """What an operation adds to a TransactWriteItems request, in bytes of JSON (above its items' size)."""
    return len(json.dumps(op.params, default=_as_sent))


def _as_sent(value: Any) -> str:
    """A value JSON does not hold as the request carries it: a binary attribute (a codec.Document) in base64."""
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return str(value)
