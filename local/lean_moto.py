"""moto's DynamoDB at a cost that follows the request, not the table: for the tests and for `make run`.

moto 5 deep-copies every table a TransactWriteItems touches (its rollback copy), and every Query sorts
and walks the whole table, so one write on a table of 30,000 items takes seconds. Within
`lean_dynamodb()`:
- a transaction backs up only the items it touches and puts those back when it fails;
- a Query on the table reads only its partition, and a Query on a global secondary index only the items
  of its index partition, found in a directory that every write keeps up to date;
- every change of an item is reported to `on_item_change(table, hash_key, range_key)`;
- a table's stream records nothing. Nothing reads it (the deployed template enables it for consumers to
  come; no function of the stack consumes it), and moto kept a record of every write, a JSON copy of the
  item's old and new images, for as long as the process ran: memory that only grew, and a third of the
  cost of a bulk write. The stream is still declared, so DescribeTable answers as deployed;
- an item built from a request checks its size once, not once per attribute (moto's LimitedSizeDict sums
  every attribute already set on each one added: quadratic in the attributes, a sixth of the CPU of a
  test's DynamoDB for the policy and billing records): an item over 405,000 bytes is refused all the same;
- an item's size is kept from that check until an update changes the item (moto sums it again, attribute
  by attribute, twice for every item a Query returns and once for each of a BatchGetItem: a tenth of the
  CPU of the billing ledger test);
- an UpdateItem (alone or in a transaction) of the one shape chalicelib/storage writes, `SET #a = :a, ...
  REMOVE #b, ...` of top-level attributes that are no key of the table or an index, with a condition, is
  applied directly: moto parses the expression, deep-copies it and walks it ten times (a fifth of the CPU
  of the billing tests). The condition is moto's own; any other shape, a key attribute, an empty value or
  an item that would grow past the limit takes moto's way (tests/architecture/test_test_shortcuts.py
  compares the two on each case);
- the names of a responses class's methods, which moto lists with inspect.getmembers on every request,
  are listed once per class;
- the answers of the operations in DYNAMODB_DATA_AS_JSON are written with json.dumps. moto writes every
  answer by walking its result through the operation's output shape, member by member and attribute by
  attribute (two thirds of a GetItem's CPU in the tests, seconds for a Query of a large policy), while
  these results are already in the wire format: json writes the same answer, a binary value in base64 as
  DynamoDB's wire JSON holds it (tests/architecture/test_test_shortcuts.py compares them). Anything json
  cannot write (an error) and every other operation take moto's way. Such an answer says so in a header
  (WRITTEN_AS_JSON, with BINARY_INSIDE when it holds a binary value), and botocore reads it with json.loads
  alone: its parser walks every answer through the output shape too, to turn base64 into bytes and text into
  datetimes, and these answers hold no datetime; one with a binary value has each `{"B": text}` and
  `{"BS": [text]}` turned into bytes by json's object hook, as the shape walk turns them (half the CPU of a
  Query of rich items in the tests; test_test_shortcuts compares it with botocore's way).
- an UpdateExpression is parsed once per text: moto parses it into a syntax tree on every UpdateItem and
  on every Update of a transaction, and again when it applies it (a quarter of the CPU of a
  TransactWriteItems in moto); the same text gives the same tree, which moto only reads, or deep-copies
  before it changes it;
- a ConditionExpression is parsed once per text, names and values: moto parses it once to validate a
  transaction and again for every write it checks. The tree it parses to is moto's own and only read
  (tests/architecture/test_test_shortcuts.py compares both with moto's way, and the tree with a fresh one);
- a Query does not deep-copy the items it found before it answers them: moto copies them so that a
  projection cannot change the stored items, but a projection builds new items, and the answer is written
  from the items at once (a fifth of a large partition's Query). The candidates are sorted by their keys'
  values cast once (moto casts both keys of every comparison), so moto's own sort only confirms the order,
  and a page of a partition that starts after an ExclusiveStartKey skips the items before it by bisection,
  with moto's own test, instead of moto's walk past each one (moto paged a partition of 100,000 items in
  minutes). test_test_shortcuts compares the pages with moto's;
- a request of the operations in DYNAMODB_REQUESTS_AS_JSON is read with json.loads: moto reads every
  request by walking it through the operation's input shape, member by member and attribute by attribute
  (a fifth of a BatchWriteItem's CPU), to turn base64 into bytes and keep the shape's members, while
  botocore wrote it from that same shape. One that holds a binary value (an element tree stored as one
  document, storage/codec.py) has its base64 turned into bytes by json's object hook, as moto's parser
  turns it. Any other operation takes moto's way;
- a result is turned into the wire form by a walk that knows DynamoType, not moto's dynamo_to_dict, which
  asks each node in turn whether it is a datetime, a DynamoType or has to_json (a tenth of a Query's
  CPU); a binary value is its bytes, as dynamo_to_dict gives them; anything else goes moto's way
  (test_test_shortcuts compares both with moto's on every request and result of a set of calls);
moto still filters, sorts and pages the candidates itself, so results are what moto would answer.

And one thing of DynamoDB's that moto lacks (`idempotent_transactions`): a TransactWriteItems with a
`ClientRequestToken` that succeeded answers success again, without applying anything, when the same token
comes back with the same items within ten minutes (a retry of a call whose answer was lost), and
`IdempotentParameterMismatchException` when it comes back with other items.
"""

from __future__ import annotations

import base64
import copy
import functools
import hashlib
import inspect
import json
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

from botocore.parsers import JSONParser
from moto.core import responses as core_responses
from moto.dynamodb import responses as dynamodb_responses
from moto.dynamodb.comparisons import ConditionExpressionParser, create_condition_expression_parser
from moto.dynamodb.exceptions import ConditionalCheckFailed, DynamodbException, ItemSizeTooLarge
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models import table as moto_table
from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict
from moto.dynamodb.models.table import StreamShard, Table
from moto.dynamodb.models.utilities import bytesize
from moto.dynamodb.parsing.expressions import UpdateExpressionParser
from moto.dynamodb.responses import DynamoHandler, DynamoResult

ItemKey = tuple[DynamoType, DynamoType | None]
MOST_ITEM_BYTES = 405_000
"""moto's limit (LimitedSizeDict): between DynamoDB's 400 KB and the 409 KB to 410 KB it measured."""
ItemChange = Callable[[Table, DynamoType, DynamoType | None], None]

_DIRECTORY_ATTRIBUTE = "_lean_index_directory"
_SIZE_ATTRIBUTE = "_lean_size"
_PLAIN_UPDATE = re.compile(
    r"(?:SET (?P<sets>#\w+ = :\w+(?:, #\w+ = :\w+)*))?"
    r"(?: ?REMOVE (?P<removes>#\w+(?:, #\w+)*))?"
)
PLAIN_UPDATES = True
"""Whether plain updates skip moto's expression machinery (the comparison test turns it off for moto's answer)."""
DYNAMODB_DATA_AS_JSON = frozenset({"GetItem", "BatchGetItem", "Query", "PutItem", "UpdateItem"})
WRITTEN_AS_JSON = "x-lean-moto-json"
"""The header of an answer json.dumps wrote (no datetime): botocore may read it with json.loads."""
BINARY_INSIDE = "binary"
"""WRITTEN_AS_JSON's value when the answer holds a binary value (in base64): read with `_binary_hook`."""
READ_AS_JSON = True
"""Whether botocore reads such answers with json.loads alone (the comparison test turns it off for botocore's way)."""
PARSE_ONCE = True
"""Whether update and condition expressions are parsed once (the comparison test turns it off for moto's way)."""
LEAN_QUERIES = True
"""Whether a Query skips moto's copy of its items and its walk to the ExclusiveStartKey (as PARSE_ONCE)."""
EXPRESSIONS_KEPT = 4096
"""Parsed expressions kept, the least recently used dropped first (a condition's values are part of its key)."""
_SHALLOW_COPY = SimpleNamespace(deepcopy=list)
_read_json, _write_json = json.loads, json.dumps
"""json for what is not an answer (the comparison test replaces the module's json to count the answers)."""
DYNAMODB_REQUESTS_AS_JSON = frozenset(
    {
        "GetItem",
        "BatchGetItem",
        "Query",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "BatchWriteItem",
        "TransactWriteItems",
        "TransactGetItems",
    }
)
_BINARY_VALUE = re.compile(rb'"BS?"\s*:')
"""A binary attribute value ("B" or "BS") in a request body, or anything that looks like one (read with
`_binary_hook` then)."""


def _binary_hook(node: dict[str, Any]) -> dict[str, Any]:
    """json's object hook for DynamoDB's wire JSON: a binary attribute value's base64 as its bytes. Only an
    attribute value is an object of the one member "B" holding a text or "BS" holding a list (an attribute
    named so holds an object, a map member too; expression names start with '#', values with ':')."""
    if len(node) == 1:
        value = node.get("B")
        if type(value) is str:
            return {"B": base64.b64decode(value)}
        members = node.get("BS")
        if type(members) is list and all(type(member) is str for member in members):
            return {"BS": [base64.b64decode(member) for member in members]}
    return node


def _base64(value: Any) -> str:
    """json's default for an answer: a binary value (bytes) in base64, as DynamoDB's wire JSON holds it."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"json cannot write a {type(value).__name__}")


def request_as_json(handler: DynamoHandler, request: Any) -> dict[str, Any] | None:
    """The parameters of a DynamoDB request, read by json.loads as moto's parser reads them, or None when it
    may read them otherwise (for moto's parser to read)."""
    body = request.data
    if (
        handler._get_action() not in DYNAMODB_REQUESTS_AS_JSON
        or not isinstance(body, bytes)
        or not body
        or request.headers.get("Content-Encoding")
    ):
        return None
    try:
        parsed = _read_json(body, object_hook=_binary_hook) if _BINARY_VALUE.search(body) else _read_json(body)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def wire_form(value: Any, moto_way: Callable[[Any], Any]) -> Any:
    """moto's dynamo_to_dict of a result: DynamoType values, dicts and lists walked here, the rest (binary
    values, datetimes, objects with to_json) by `moto_way`."""
    kind = type(value)
    if kind is DynamoType:
        if value.type == "M":
            return {"M": {name: wire_form(member, moto_way) for name, member in value.value.items()}}
        if value.type == "L":
            return {"L": [wire_form(member, moto_way) for member in value.value]}
        if value.type == "B" and type(value.value) is bytes:
            return {"B": value.value}
        if value.type in ("B", "BS"):
            return moto_way(value)
        return {value.type: list(value.value) if type(value.value) is list else value.value}
    if kind is dict or kind is LimitedSizeDict:
        return {name: wire_form(member, moto_way) for name, member in value.items()}
    if kind is list:
        return [wire_form(member, moto_way) for member in value]
    if kind is str or kind is int or kind is bool or value is None:
        return value
    return moto_way(value)


def current_item(table: Table, hash_key: DynamoType, range_key: DynamoType | None) -> Item | None:
    """The item under a key, without moto's get_item (which adds an empty partition for an unknown key)."""
    if table.range_key_attr is None:
        return table.items.get(hash_key)
    return table.items.get(hash_key, {}).get(range_key)


def key_of(table: Table, attributes: dict[str, Any]) -> ItemKey | None:
    """The (hash, range) key in an item or Key of a request; None when a key attribute is missing."""
    if table.hash_key_attr not in attributes:
        return None
    if table.range_key_attr is not None and table.range_key_attr not in attributes:
        return None
    range_key = DynamoType(attributes[table.range_key_attr]) if table.range_key_attr else None
    return DynamoType(attributes[table.hash_key_attr]), range_key


def built_item(item: Item, hash_key: DynamoType, range_key: DynamoType | None, attrs: dict[str, Any]) -> None:
    """moto's Item.__init__ with the size summed once: the same item, or the same ItemSizeTooLarge."""
    item.hash_key, item.range_key = hash_key, range_key
    item.attrs = LimitedSizeDict.__new__(LimitedSizeDict)
    for name, value in attrs.items():
        dict.__setitem__(item.attrs, name, DynamoType(value))
    if item.size() > MOST_ITEM_BYTES:
        raise ItemSizeTooLarge


def _forget_size(table: Table, key: ItemKey | None) -> None:
    item = current_item(table, *key) if key is not None else None
    if item is not None:
        item.__dict__.pop(_SIZE_ATTRIBUTE, None)


def plain_update(backend: DynamoDBBackend, arguments: dict[str, Any]) -> Item | None:
    """Apply an UpdateItem of the plain shape (see the module's docstring) as moto would, or answer None
    (nothing done) for moto to apply it."""
    expression = arguments.get("update_expression") or ""
    match = _PLAIN_UPDATE.fullmatch(expression)
    if (
        not PLAIN_UPDATES
        or not expression
        or match is None
        or arguments.get("attribute_updates")
        or arguments.get("expected")
    ):
        return None
    names = arguments.get("expression_attribute_names") or {}
    values = arguments.get("expression_attribute_values") or {}
    table = backend.get_table(arguments["table_name"])
    sets = [pair.split(" = ") for pair in match["sets"].split(", ")] if match["sets"] else []
    removes = match["removes"].split(", ") if match["removes"] else []
    if (
        any(name not in names for name, _ in sets)
        or any(value not in values for _, value in sets)
        or any(name not in names for name in removes)
    ):
        return None
    changed = [names[name] for name, _ in sets] + [names[name] for name in removes]
    if len(set(changed)) < len(changed) or set(changed) & set(table.table_key_attrs):
        return None  # overlapping paths, or a key of the table: moto's errors
    new_values = {names[name]: DynamoType(values[value]) for name, value in sets}
    declared = {definition["AttributeName"]: definition["AttributeType"] for definition in table.attr}
    if any(value.type in ("S", "B", "SS", "NS", "BS") and not value.value for value in new_values.values()) or any(
        name in declared and value.type != declared[name] for name, value in new_values.items()
    ):
        return None  # an empty string, binary or set, or an index key of another type: moto's errors
    hash_key, range_key = backend.get_keys_value(table, arguments["key"])
    item = table.get_item(hash_key, range_key)
    condition = create_condition_expression_parser(arguments.get("condition_expression"), names, values).parse()
    if not condition.expr(item):
        if arguments.get("return_values_on_condition_check_failure") == "ALL_OLD" and item is not None:
            raise ConditionalCheckFailed(item=item.to_json()["Attributes"])
        raise ConditionalCheckFailed
    attrs = dict(item.attrs) if item is not None else {}
    attrs.update(new_values)
    for name in removes:
        attrs.pop(names[name], None)
    key_attributes = {table.hash_key_attr: hash_key}
    if table.range_key_attr is not None and range_key is not None:
        key_attributes[table.range_key_attr] = range_key
    if sum(bytesize(name) + value.size() for name, value in {**attrs, **key_attributes}.items()) > MOST_ITEM_BYTES:
        return None  # moto refuses it, its way
    if item is None:  # an update creates the item it does not find
        table.put_item({name: {value.type: value.value} for name, value in key_attributes.items()})
        item = table.get_item(hash_key, range_key)
    item.__dict__.pop(_SIZE_ATTRIBUTE, None)
    for name in removes:
        dict.pop(item.attrs, names[name], None)
    for name, value in new_values.items():
        dict.__setitem__(item.attrs, name, value)
    return item


def every_item(table: Table) -> list[Item]:
    if table.range_key_attr is None:
        return list(table.items.values())
    return [item for partition in table.items.values() for item in partition.values()]


def insert_item(table: Table, attributes: dict[str, Any]) -> None:
    """Put an item as it was saved: without moto's checks, its stream record or a change report. Its size
    is not checked again either (moto's check on each attribute added sums all the others: quadratic), as
    moto's own copy of an item does not."""
    key = key_of(table, attributes)
    if key is None:
        raise ValueError(f"an item of {table.name} without its key: {sorted(attributes)}")
    hash_key, range_key = key
    item = Item.__new__(Item)
    item.hash_key, item.range_key = hash_key, range_key
    item.attrs = LimitedSizeDict.__new__(LimitedSizeDict)
    for name, value in attributes.items():
        dict.__setitem__(item.attrs, name, DynamoType(value))
    if range_key is None:
        table.items[hash_key] = item
    else:
        table.items[hash_key][range_key] = item
    directory = table.__dict__.get(_DIRECTORY_ATTRIBUTE)
    if directory is not None:
        directory.refresh(table, key)


class IndexDirectory:
    """For each global secondary index with one hash key: index partition value -> keys of its items."""

    def __init__(self, table: Table):
        self.hash_attributes = {
            index.name: hashes[0]["AttributeName"]
            for index in table.global_indexes
            if len(hashes := [k for k in index.schema if k["KeyType"] == "HASH"]) == 1
        }
        self.partitions: dict[str, defaultdict[DynamoType, set[ItemKey]]] = {
            name: defaultdict(set) for name in self.hash_attributes
        }
        self.placed: dict[ItemKey, dict[str, DynamoType]] = {}
        for item in every_item(table):
            self._place((item.hash_key, item.range_key), item)

    @staticmethod
    def of(table: Table) -> IndexDirectory:
        directory = table.__dict__.get(_DIRECTORY_ATTRIBUTE)
        if directory is None:
            directory = IndexDirectory(table)
            setattr(table, _DIRECTORY_ATTRIBUTE, directory)
        return directory

    def refresh(self, table: Table, key: ItemKey) -> None:
        for name, value in self.placed.pop(key, {}).items():
            members = self.partitions[name][value]
            members.discard(key)
            if not members:
                del self.partitions[name][value]
        item = current_item(table, *key)
        if item is not None:
            self._place(key, item)

    def _place(self, key: ItemKey, item: Item) -> None:
        placed = {}
        for name, attribute in self.hash_attributes.items():
            value = item.attrs.get(attribute)
            if value is not None:
                self.partitions[name][value].add(key)
                placed[name] = value
        if placed:
            self.placed[key] = placed

    def candidates(
        self, table: Table, index_name: str, hash_conditions: list[tuple[str, DynamoType]]
    ) -> list[Item] | None:
        """The items that may match a Query on the index; None when the directory cannot tell."""
        attribute = self.hash_attributes.get(index_name)
        values = [value for name, value in hash_conditions if name == attribute]
        if attribute is None or len(values) != 1:
            return None
        keys = self.partitions[index_name].get(values[0], ())
        return [item for key in keys if (item := current_item(table, *key)) is not None]


def _notify(on_item_change: ItemChange | None, table: Table, key: ItemKey | None) -> None:
    if key is None:
        return
    directory = table.__dict__.get(_DIRECTORY_ATTRIBUTE)
    if directory is not None:
        directory.refresh(table, key)
    if on_item_change is not None:
        on_item_change(table, *key)


def _in_key_order(table: Table, items: list[Item]) -> list[Item]:
    """Candidates in moto's own order (by table key), so ties after moto's sort stay as moto leaves them.
    moto compares keys by their cast_value: each is cast once here, not once per comparison."""
    if table.range_key_attr is None:
        return sorted(items, key=lambda item: item.hash_key.cast_value)
    return sorted(items, key=lambda item: (item.hash_key.cast_value, item.range_key.cast_value))  # type: ignore[union-attr]


def _after_start(table: Table, ascending: list[Item], start: dict[str, Any], forward: bool) -> list[Item]:
    """The items of one partition of the table (in key order) that moto's Query does not skip as being at or
    before the ExclusiveStartKey `start`: moto's own test, by bisection of the order moto walks them in."""
    order = ascending if forward else ascending[::-1]
    low, high = 0, len(order)
    while low < high:
        middle = (low + high) // 2
        if table._item_comes_before_dct(order[middle], start, [table.hash_key_attr], [table.range_key_attr], forward):
            low = middle + 1
        else:
            high = middle
    kept = order[low:]
    return kept if forward else kept[::-1]


def _condition_key(parser: ConditionExpressionParser) -> tuple[str, Any, Any] | None:
    """What a condition's syntax tree depends on, hashable; None when it cannot be told (moto's way then)."""
    names, values = parser.expression_attribute_names, parser.expression_attribute_values
    try:
        key = (
            parser.condition_expression,
            None if names is None else tuple(sorted(names.items())),
            None if values is None else _write_json(values, sort_keys=True),
        )
        hash(key)
    except (TypeError, AttributeError):
        return None
    return key


@contextmanager
def lean_dynamodb(on_item_change: ItemChange | None = None) -> Iterator[None]:
    original = (
        DynamoDBBackend.transact_write_items,
        DynamoDBBackend.update_item,
        Table.put_item,
        Table.delete_item,
        Table.query,
        StreamShard.add,
        DynamoResult.execute_result,
        Item.__init__,
        Item.size,
        core_responses.method_names_from_class,
        UpdateExpressionParser.__dict__["make"],
        ConditionExpressionParser.parse,
        DynamoHandler.__dict__.get("parse_parameters"),
        dynamodb_responses.dynamo_to_dict,
        JSONParser._do_parse,
    )
    (
        transact_write_items,
        update_item,
        put_item,
        delete_item,
        query,
        _,
        shape_walking,
        _,
        item_size,
        method_names,
        _,
        condition_parse,
        _,
        to_dict,
        shape_parse,
    ) = original
    parse_parameters = DynamoHandler.parse_parameters
    update_parse = UpdateExpressionParser.make

    @functools.lru_cache(maxsize=EXPRESSIONS_KEPT)
    def update_tree(expression: str) -> Any:
        return update_parse(expression)

    def parsed_update(parser_class: type, expression: str) -> Any:
        return update_tree(expression) if PARSE_ONCE and isinstance(expression, str) else update_parse(expression)

    @functools.lru_cache(maxsize=EXPRESSIONS_KEPT)
    def condition_tree(expression: str, names: Any, values: Any) -> tuple[Any, tuple[str, ...], tuple[str, ...]]:
        parser = ConditionExpressionParser(
            expression, None if names is None else dict(names), None if values is None else _read_json(values)
        )
        tree = condition_parse(parser)
        return tree, tuple(parser.expr_attr_names_found), tuple(parser.expr_attr_values_found)

    def parsed_condition(parser: ConditionExpressionParser) -> Any:
        key = _condition_key(parser) if PARSE_ONCE and parser.condition_expression else None
        if key is None:
            return condition_parse(parser)
        tree, names_found, values_found = condition_tree(*key)
        parser.expr_attr_names_found.extend(names_found)
        parser.expr_attr_values_found.extend(values_found)
        return tree

    def lean_transact_write_items(backend: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
        backups = []
        for action in transact_items:
            op = next(iter(action.values()))
            table = backend.tables.get(op.get("TableName"))
            key = key_of(table, op.get("Key") or op.get("Item") or {}) if table is not None else None
            if key is not None:  # else moto rejects the action before changing anything
                backups.append((table, key, copy.deepcopy(current_item(table, *key))))
        outer_copy = Table.__dict__.get("__deepcopy__")  # set when lean_dynamodb() is nested
        Table.__deepcopy__ = lambda table, memo: table  # moto's whole-table copy: now free, and unused
        try:
            transact_write_items(backend, transact_items)
        except Exception:
            for table, (hash_key, range_key), item in reversed(backups):
                items = table.items if range_key is None else table.items[hash_key]
                slot = hash_key if range_key is None else range_key
                if item is None:
                    items.pop(slot, None)
                else:
                    items[slot] = item
                _notify(on_item_change, table, (hash_key, range_key))
            raise
        finally:
            if outer_copy is None:
                del Table.__deepcopy__
            else:
                Table.__deepcopy__ = outer_copy

    update_parameters = inspect.signature(update_item)

    def watched_update_item(
        backend: DynamoDBBackend, table_name: str, key: dict[str, Any], *args: Any, **kwargs: Any
    ) -> Item:
        table = backend.tables.get(table_name)
        if table is not None:
            _forget_size(table, key_of(table, key))
        try:
            if table is not None:
                bound = update_parameters.bind(backend, table_name, key, *args, **kwargs)
                updated = plain_update(backend, bound.arguments)
                if updated is not None:
                    return updated
            return update_item(backend, table_name, key, *args, **kwargs)
        finally:  # a failed update may have created the item already
            if table is not None:
                _forget_size(table, key_of(table, key))  # a size taken halfway through the update
                _notify(on_item_change, table, key_of(table, key))

    def watched_put_item(table: Table, item_attrs: dict[str, Any], *args: Any, **kwargs: Any) -> Item:
        item = put_item(table, item_attrs, *args, **kwargs)
        _notify(on_item_change, table, (item.hash_key, item.range_key))
        return item

    def watched_delete_item(table: Table, hash_key: DynamoType, range_key: DynamoType | None) -> Item | None:
        item = delete_item(table, hash_key, range_key)
        if item is not None:
            _notify(on_item_change, table, (hash_key, range_key))
        return item

    def lean_query(table: Table, hash_key: DynamoType | None, *args: Any, **kwargs: Any) -> Any:
        index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
        start = args[3] if len(args) > 3 else kwargs.get("exclusive_start_key")
        forward = args[4] if len(args) > 4 else kwargs.get("scan_index_forward", True)
        candidates = None
        if index_name:
            candidates = IndexDirectory.of(table).candidates(table, index_name, kwargs.get("hash_key_conditions") or [])
        elif hash_key is not None:
            partition = table.items.get(hash_key)
            if table.range_key_attr is None:
                candidates = [] if partition is None else [partition]
            else:
                candidates = list((partition or {}).values())
        found = _in_key_order(table, every_item(table) if candidates is None else candidates)
        if LEAN_QUERIES and start and not index_name and hash_key is not None and table.range_key_attr is not None:
            try:
                found = _after_start(table, found, start, forward is not False)
            except Exception:  # a key moto cannot compare: its own walk answers with its own error
                pass
        table.all_items = lambda: found
        outer_copy = moto_table.copy
        if LEAN_QUERIES:
            moto_table.copy = _SHALLOW_COPY  # type: ignore[assignment]
        try:
            return query(table, hash_key, *args, **kwargs)
        finally:
            moto_table.copy = outer_copy
            table.__dict__.pop("all_items", None)  # gone already when lean_dynamodb() is nested

    def parsed_as_json(handler: DynamoHandler, request: Any) -> None:
        parsed = request_as_json(handler, request)
        if parsed is None:
            parse_parameters(handler, request)
        else:
            handler.params = parsed

    def lean_wire_form(result: Any) -> Any:
        return wire_form(result, to_dict)

    def kept_size(item: Item) -> int:
        size = item.__dict__.get(_SIZE_ATTRIBUTE)
        if size is None:
            size = item.__dict__[_SIZE_ATTRIBUTE] = item_size(item)
        return int(size)

    method_names_of: dict[object, list[str]] = {}

    def listed_once(clazz: object) -> list[str]:
        if clazz not in method_names_of:
            method_names_of[clazz] = method_names(clazz)
        return method_names_of[clazz]

    def no_stream_record(shard: StreamShard, old: Item | None, new: Item | None) -> None:
        return None

    def as_json(result: DynamoResult, context: Any) -> Any:
        if context.operation_model.name in DYNAMODB_DATA_AS_JSON:
            binary: list[bool] = []

            def in_base64(value: Any) -> str:
                binary.append(True)
                return _base64(value)

            try:
                body = json.dumps(result.result, default=in_base64)
            except TypeError:
                pass
            else:
                written = BINARY_INSIDE if binary else "1"
                return 200, {"Content-Type": "application/x-amz-json-1.0", WRITTEN_AS_JSON: written}, body
        return shape_walking(result, context)

    def read_as_json(parser: JSONParser, response: dict[str, Any], shape: Any) -> Any:
        written = response["headers"].get(WRITTEN_AS_JSON)
        if READ_AS_JSON and written is not None:
            parsed = _read_json(response["body"], object_hook=_binary_hook if written == BINARY_INSIDE else None)
            parser._inject_response_metadata(parsed, response["headers"])
            return parsed
        return shape_parse(parser, response, shape)

    DynamoDBBackend.transact_write_items = lean_transact_write_items
    DynamoDBBackend.update_item = watched_update_item
    Table.put_item, Table.delete_item, Table.query = watched_put_item, watched_delete_item, lean_query
    StreamShard.add = no_stream_record
    DynamoResult.execute_result = as_json  # type: ignore[method-assign]
    Item.__init__ = built_item  # type: ignore[method-assign,assignment]
    Item.size = kept_size  # type: ignore[method-assign]
    core_responses.method_names_from_class = listed_once
    UpdateExpressionParser.make = classmethod(parsed_update)  # type: ignore[method-assign,assignment]
    ConditionExpressionParser.parse = parsed_condition  # type: ignore[method-assign]
    DynamoHandler.parse_parameters = parsed_as_json  # type: ignore[method-assign]
    dynamodb_responses.dynamo_to_dict = lean_wire_form
    JSONParser._do_parse = read_as_json  # type: ignore[method-assign]
    try:
        with idempotent_transactions():
            yield
    finally:
        (
            DynamoDBBackend.transact_write_items,
            DynamoDBBackend.update_item,
            Table.put_item,
            Table.delete_item,
            Table.query,
            StreamShard.add,
            DynamoResult.execute_result,
            Item.__init__,
            Item.size,
            core_responses.method_names_from_class,
            UpdateExpressionParser.make,
            ConditionExpressionParser.parse,
            _,
            dynamodb_responses.dynamo_to_dict,
            JSONParser._do_parse,
        ) = original  # type: ignore[method-assign]
        if original[12] is None:
            del DynamoHandler.parse_parameters  # inherited from BaseResponse again
        else:
            DynamoHandler.parse_parameters = original[12]  # type: ignore[method-assign]


TOKEN_SECONDS = 600
"""How long DynamoDB remembers a TransactWriteItems' ClientRequestToken."""


class IdempotentParameterMismatch(DynamodbException):
    def __init__(self) -> None:
        super().__init__(
            "com.amazonaws.dynamodb.v20120810#IdempotentParameterMismatchException",
            message="The ClientRequestToken was used with other transaction items",
        )


@contextmanager
def idempotent_transactions() -> Iterator[None]:
    transact = DynamoHandler.transact_write_items
    succeeded: dict[str, tuple[str, float]] = {}
    lock = threading.Lock()

    def idempotent_transact(handler: DynamoHandler) -> Any:
        token = handler.body.get("ClientRequestToken")
        if token is None:
            return transact(handler)
        written = _write_json(handler.body["TransactItems"], sort_keys=True, default=str)
        items = hashlib.sha256(written.encode()).hexdigest()
        now = time.monotonic()
        with lock:
            for old in [t for t, (_, at) in succeeded.items() if now - at > TOKEN_SECONDS]:
                del succeeded[old]
            seen = succeeded.get(token)
        if seen is not None:
            if seen[0] != items:
                raise IdempotentParameterMismatch()
            return core_responses.ActionResult({"ConsumedCapacity": [], "ItemCollectionMetrics": {}})
        answer = transact(handler)
        with lock:
            succeeded[token] = (items, now)
        return answer

    DynamoHandler.transact_write_items = idempotent_transact  # type: ignore[method-assign]
    try:
        yield
    finally:
        DynamoHandler.transact_write_items = transact  # type: ignore[method-assign]
