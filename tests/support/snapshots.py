"""Records made once and restored under fresh locators: a test that needs many copies of the same start
(tests/jobs/test_billing_ledger.py: hundreds of histories over a dozen distinct starts, each some 0.8 s of
CPU through the services) builds each start once and copies its items for the others.

`Snapshot.record()` watches a block of service calls: every locator the block made (the ULIDs of
chalicelib.core.ids, derived ones too) and the key of every item it wrote. Then `restore()` writes those
items again, each locator they hold (in keys, index attributes and values) replaced by a fresh one that
sorts as the old one did (same time, the random part shifted), so the copy is a record set of its own that
the services cannot tell from one they built. Items whose key names no locator the block made (the
tenant's counters, its number indexes) are shared, so they are not copied: copies keep their template's
numbers. A binary value that is a document (storage/codec.py: an element tree, a transaction's charges, its
JSON maybe compressed) has its locators replaced in its JSON, and is written again as codec writes it.
tests/architecture/test_test_shortcuts.py holds a restored start to the built one."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import secrets
import sys
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from enum import Enum
from typing import Any

import pytest
from pydantic import BaseModel
from ulid import ULID

from chalicelib.core import ids
from chalicelib.runtime import wiring
from chalicelib.settings import settings
from chalicelib.storage import clients, codec
from tests.support.stored import PutShape, in_process_bucket, in_process_table, put_object, put_shape

_RANDOM_BITS = 80
_RANDOM_MASK = (1 << _RANDOM_BITS) - 1


class _RecordingULID:
    """Stands in for `ULID` in chalicelib.core.ids while a block is recorded: the same ULIDs, remembered."""

    def __init__(self, made: set[str]) -> None:
        self.made = made

    def __call__(self) -> ULID:
        return self._remember(ULID())

    def from_bytes(self, raw: bytes) -> ULID:
        return self._remember(ULID.from_bytes(raw))

    def _remember(self, made: ULID) -> ULID:
        self.made.add(str(made))
        return made


def _written_keys(operation: str, params: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """The (PK, SK) of every item a DynamoDB write names."""

    def key_of(found: dict[str, Any]) -> tuple[str, str]:
        return found["PK"]["S"], found["SK"]["S"]

    if operation in ("PutItem",):
        yield key_of(params["Item"])
    elif operation in ("UpdateItem", "DeleteItem"):
        yield key_of(params["Key"])
    elif operation == "TransactWriteItems":
        for entry in params["TransactItems"]:
            for kind, part in entry.items():
                if kind != "ConditionCheck":
                    yield key_of(part["Item"] if kind == "Put" else part["Key"])
    elif operation == "BatchWriteItem":
        for requests in params["RequestItems"].values():
            for request in requests:
                yield key_of(
                    request["PutRequest"]["Item"] if "PutRequest" in request else request["DeleteRequest"]["Key"]
                )


@dataclass
class Snapshot:
    """The items a recorded block left, and the locators it made."""

    items: list[dict[str, Any]] = field(default_factory=list)
    locators: set[str] = field(default_factory=set)
    restore_map: dict[str, str] = field(default_factory=dict)
    """The last restore's old locator -> new one."""
    _text: str | None = None
    """The items as one JSON text (their documents' JSON in it as text), once: each restore replaces in it."""
    _documents: list[tuple[int, tuple[str | int, ...]]] = field(default_factory=list)
    """Where in `items` a document is: (item, path of names and positions to its {"B": ...} value)."""

    @classmethod
    @contextmanager
    def record(cls) -> Iterator[Snapshot]:
        """Records the block's writes; the snapshot is filled when the block ends."""
        snapshot, written = cls(), set[tuple[str, str]]()
        dynamodb, s3 = clients.dynamodb(), clients.s3()

        def on_write(event_name: str, params: dict[str, Any], **_: object) -> None:
            written.update(_written_keys(event_name.rsplit(".", 1)[-1], params))

        def on_object(event_name: str, **_: object) -> None:
            raise AssertionError(f"a snapshot holds DynamoDB items only, and the block called S3 ({event_name})")

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(ids, "ULID", _RecordingULID(snapshot.locators))
            dynamodb.meta.events.register("before-parameter-build.dynamodb", on_write)
            s3.meta.events.register("before-call.s3.PutObject", on_object)
            _RECORDING.append(snapshot)
            try:
                yield snapshot
            finally:
                _RECORDING.remove(snapshot)
                dynamodb.meta.events.unregister("before-parameter-build.dynamodb", on_write)
                s3.meta.events.unregister("before-call.s3.PutObject", on_object)
        owned = [
            key
            for key in sorted(written)
            if any(locator in key[0] or locator in key[1] for locator in snapshot.locators)
        ]
        snapshot.items = _read(owned)

    def restore(self) -> dict[str, str]:
        """Writes the items again under fresh locators; answers the old locator -> new one."""
        self.restore_map = _fresh(self.locators)
        if self._text is None:
            self._text, self._documents = _as_text(self.items)
        text = self._text
        for old, new in self.restore_map.items():
            text = text.replace(old, new)
        items = json.loads(text)
        for index, path in self._documents:
            value = _at(items[index], path)
            value["B"] = codec.document_content(value.pop(_DOCUMENT).encode("utf-8"))
        _write(items)
        return self.restore_map


_DOCUMENT = "document"
"""The member that holds a document's JSON as text in `Snapshot._text` (no attribute value's type is named so)."""


def _as_text(items: list[dict[str, Any]]) -> tuple[str, list[tuple[int, tuple[str | int, ...]]]]:
    """The items as one JSON text, each document's {"B": bytes} there as {"document": its JSON as text}, and
    where those are (a binary value that is no document is refused: nothing writes one)."""
    found: list[tuple[int, tuple[str | int, ...]]] = []

    def portable(value: Any, index: int, path: tuple[str | int, ...]) -> Any:
        if isinstance(value, dict):
            binary = value.get("B")
            if len(value) == 1 and isinstance(binary, bytes | bytearray):
                text = codec.document_json(bytes(binary))
                if text is not None:
                    found.append((index, path))
                    return {_DOCUMENT: text.decode("utf-8")}
                raise AssertionError(f"a binary value at {path} that is no document: a snapshot holds no bytes")
            return {name: portable(inner, index, (*path, name)) for name, inner in value.items()}
        if isinstance(value, list):
            return [portable(inner, index, (*path, position)) for position, inner in enumerate(value)]
        return value

    text = json.dumps([portable(item, index, ()) for index, item in enumerate(items)])
    return text, found


def _at(value: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _fresh(locators: set[str]) -> dict[str, str]:
    """A new ULID for each: its time kept, its random part shifted by one amount that wraps for none, so
    the new ones sort among themselves as the old ones did."""
    parsed = {locator: int.from_bytes(ULID.from_str(locator).bytes, "big") for locator in locators}
    while True:
        shift = secrets.randbits(_RANDOM_BITS)
        if all((value & _RANDOM_MASK) + shift <= _RANDOM_MASK for value in parsed.values()):
            return {
                locator: str(ULID.from_bytes((value + shift).to_bytes(16, "big"))) for locator, value in parsed.items()
            }


def _read(keys: list[tuple[str, str]]) -> list[dict[str, Any]]:
    client, name = clients.dynamodb(), settings().table_name
    found: list[dict[str, Any]] = []
    for start in range(0, len(keys), 100):
        asked: list[dict[str, Any]] = [{"PK": {"S": pk}, "SK": {"S": sk}} for pk, sk in keys[start : start + 100]]
        while asked:
            answer = client.batch_get_item(RequestItems={name: {"Keys": asked, "ConsistentRead": True}})
            found.extend(answer["Responses"].get(name, []))
            asked = answer.get("UnprocessedKeys", {}).get(name, {}).get("Keys", [])
    return found


def _write(items: list[dict[str, Any]]) -> None:
    """The items put, as BatchWriteItem would put them: against the tests' in-process moto (no endpoint URL) and while
    no block is recorded, straight into moto's table (local/lean_moto.py insert_item: botocore's and moto's request
    handling of the batches was half of a restore's CPU); else, and against a moto server, by BatchWriteItem."""
    table = None if _RECORDING else in_process_table()
    if table is not None:
        from local.lean_moto import insert_item

        for item in items:
            insert_item(table, item)
        return
    client, name = clients.dynamodb(), settings().table_name
    for start in range(0, len(items), 25):
        requests = [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]
        while requests:
            answer = client.batch_write_item(RequestItems={name: requests})
            requests = answer.get("UnprocessedItems", {}).get(name, [])


_RECORDING: list[object] = []
"""The blocks being recorded (Snapshot.record, TenantSnapshot.of_build): a write inside one goes through botocore,
where their watchers see it."""


# --- a deployed tenant, copied -----------------------------------------------------------------------

_S3_READS = frozenset({"GetObject", "HeadObject", "ListObjects", "ListObjectsV2", "GetObjectTagging"})
_SCALARS = (int, float, Decimal, bool, type(None), datetime, date, Enum)


@dataclass(frozen=True)
class _Object:
    key: str
    body: bytes | str
    """str when the body names a locator of the tenant's (renamed on restore), bytes otherwise."""
    content_type: str
    metadata: dict[str, str]
    shape: PutShape | None = None
    """How its PutObject stored it, when the tests' S3 is moto in this process: the copies are put the same way
    straight into moto's bucket (tests/support/stored.py put_object), not through botocore."""


@dataclass
class TenantSnapshot:
    """A tenant as its build left it (tests/support/configs.py: createTenant of a package, table uploads): its
    DynamoDB items, its S3 objects, and what the building process remembered of it (the deployed model, the
    table selections its uploads put in the cache, whether it has a test clock). `restore()` makes another
    tenant of it under fresh locators: the items and objects copied, each locator they name (in keys, index
    attributes, values, text bodies) replaced, and the process told what the build told it. A build that
    wrote anything naming neither the tenant nor a locator it made, used another AWS service, enqueued a job,
    made a derived locator or left a locator inside a binary object cannot be copied honestly: `of_build`
    answers no snapshot for it, and its recipe is built each time."""

    tenant: str
    locators: set[str]
    items: list[dict[str, Any]]
    objects: list[_Object]
    remembered: list[tuple[str, str, tuple[Any, ...]]]
    """(module, function, arguments) of each call into the process's memory, in order."""
    restore_map: dict[str, str] = field(default_factory=dict)
    """The last restore's old locator -> new one (the tenant's and every ULID's, in both its forms)."""

    @classmethod
    def of_build(cls, build: Callable[[], str]) -> tuple[str, TenantSnapshot | None, list[str]]:
        """Runs `build` (it answers the tenant it made); answers the tenant, its snapshot (None when it
        cannot be copied) and why not."""
        made: set[str] = set()
        written: set[tuple[str, str]] = set()
        put_keys: list[str] = []
        remembered: list[tuple[str, str, tuple[Any, ...]]] = []
        problems: list[str] = []
        dynamodb, s3 = clients.dynamodb(), clients.s3()
        others = [made_client for made_client in clients._clients.values() if made_client not in (dynamodb, s3)]
        known_clients = set(clients._clients)
        queue = wiring.job_queue()
        sent_before = len(getattr(queue, "sent", []))

        def on_write(event_name: str, params: dict[str, Any], **_: object) -> None:
            written.update(_written_keys(event_name.rsplit(".", 1)[-1], params))

        def on_object(event_name: str, params: dict[str, Any], **_: object) -> None:
            operation = event_name.rsplit(".", 1)[-1]
            if operation == "PutObject":
                put_keys.append(params["Key"])
            elif operation not in _S3_READS:
                problems.append(f"S3 {operation}")

        def on_other(event_name: str, **_: object) -> None:
            problems.append(f"called {event_name}")

        def on_derived(raw: bytes) -> ULID:
            problems.append("made a derived locator")
            return ULID.from_bytes(raw)

        def remembering(module: Any, name: str) -> Callable[..., Any]:
            original = getattr(module, name)

            def remember(*args: Any) -> Any:
                remembered.append((module.__name__, name, args))
                return original(*args)

            return remember

        from chalicelib.clock import service as clocks
        from chalicelib.configuration import cache as models
        from chalicelib.tables import cache as tables

        recording = _RecordingULID(made)
        recording.from_bytes = on_derived  # type: ignore[method-assign]
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(ids, "ULID", recording)
            for module, name in (
                (models, "put"),
                (tables, "put_selection"),
                (tables, "put_row"),
                (tables, "put_constraint_table"),
                (clocks, "remember"),
            ):
                patch.setattr(module, name, remembering(module, name))
            dynamodb.meta.events.register("before-parameter-build.dynamodb", on_write)
            s3.meta.events.register("before-parameter-build.s3", on_object)
            for other in others:
                other.meta.events.register("before-call", on_other)
            _RECORDING.append(build)
            try:
                tenant = build()
            finally:
                _RECORDING.remove(build)
                dynamodb.meta.events.unregister("before-parameter-build.dynamodb", on_write)
                s3.meta.events.unregister("before-parameter-build.s3", on_object)
                for other in others:
                    other.meta.events.unregister("before-call", on_other)
        if set(clients._clients) != known_clients:
            problems.append(f"made clients {sorted(set(clients._clients) - known_clients)}")
        if not hasattr(queue, "sent") or len(queue.sent) != sent_before:
            problems.append("enqueued jobs")
        own = {tenant, *made, *(str(ULID.from_str(locator).to_uuid()) for locator in made)}
        names = _pattern(own)
        foreign = [key for key in sorted(written) if not (names.search(key[0]) or names.search(key[1]))]
        foreign_objects = [key for key in put_keys if not names.search(key)]
        if foreign or foreign_objects:
            problems.append(f"wrote outside the tenant: {foreign + foreign_objects}")
        items = _read(sorted(written))
        objects = [_object(key, names, problems) for key in dict.fromkeys(put_keys)]
        snapshot = cls(tenant, made, items, [found for found in objects if found is not None], remembered)
        try:
            snapshot._renamed({name: name for name in own})
        except _Unrenamable as error:
            problems.append(str(error))
        return tenant, (None if problems else snapshot), problems

    def restore(self) -> str:
        """Another tenant like the template, under fresh locators; answers its locator."""
        self.restore_map = _fresh_now(self.locators)
        self.restore_map.update(
            {
                str(ULID.from_str(old).to_uuid()): str(ULID.from_str(new).to_uuid())
                for old, new in list(self.restore_map.items())
            }
        )
        self.restore_map[self.tenant] = str(uuid.uuid4())
        items, objects, remembered = self._renamed(self.restore_map)
        s3, bucket = clients.s3(), settings().bucket_name
        backend = None if _RECORDING else in_process_bucket()
        for found in objects:
            body = found.body.encode() if isinstance(found.body, str) else found.body
            if backend is not None and found.shape is not None:
                put_object(backend, found.key, body, found.shape)
                continue
            s3.put_object(
                Bucket=bucket, Key=found.key, Body=body, ContentType=found.content_type, Metadata=found.metadata
            )
        _write(items)
        for module, name, args in remembered:
            getattr(sys.modules[module], name)(*args)
        return self.restore_map[self.tenant]

    def _renamed(
        self, renames: dict[str, str]
    ) -> tuple[list[dict[str, Any]], list[_Object], list[tuple[str, str, tuple[Any, ...]]]]:
        names = _pattern(set(renames))

        def renamed(value: Any) -> Any:
            if isinstance(value, str):
                return names.sub(lambda found: renames[found.group(0)], value)
            if isinstance(value, dict):
                return {renamed(key): renamed(inner) for key, inner in value.items()}
            if isinstance(value, list | tuple | set | frozenset):
                return type(value)(renamed(inner) for inner in value)
            if isinstance(value, BaseModel):
                return value.model_copy(
                    update={name: renamed(getattr(value, name)) for name in type(value).model_fields}
                )
            if dataclasses.is_dataclass(value) and not isinstance(value, type):
                return dataclasses.replace(
                    value, **{part.name: renamed(getattr(value, part.name)) for part in dataclasses.fields(value)}
                )
            if isinstance(value, bytes | bytearray):
                document = codec.document_json(bytes(value))
                if document is not None:  # an element tree or charges (storage/codec.py): renamed in its JSON
                    return codec.document_content(
                        names.sub(lambda found: renames[found.group(0)], document.decode("utf-8")).encode("utf-8")
                    )
                if names.search(value.decode("latin-1")):
                    raise _Unrenamable("a binary value names a locator")
                return value
            if isinstance(value, _SCALARS):
                return value
            raise _Unrenamable(f"cannot rename inside a {type(value).__name__}")

        objects = [
            dataclasses.replace(
                found, key=renamed(found.key), body=renamed(found.body) if isinstance(found.body, str) else found.body
            )
            for found in self.objects
        ]
        return renamed(self.items), objects, [(module, name, renamed(args)) for module, name, args in self.remembered]


class _Unrenamable(Exception):
    pass


def _pattern(locators: set[str]) -> re.Pattern[str]:
    return re.compile("|".join(sorted(map(re.escape, locators), key=len, reverse=True)))


def _object(key: str, names: re.Pattern[str], problems: list[str]) -> _Object | None:
    """The object at `key` as the build left it (None: it removed it); its body as text when it names a locator."""
    try:
        found = clients.s3().get_object(Bucket=settings().bucket_name, Key=key)
    except clients.s3().exceptions.NoSuchKey:
        return None
    raw: bytes = found["Body"].read()
    body: bytes | str = raw
    if names.search(raw.decode("latin-1")) or any(names.search(part.decode("latin-1")) for part in _members(raw)):
        if zipfile.is_zipfile(io.BytesIO(raw)):
            problems.append(f"the ZIP {key} names a locator")
        else:
            try:
                body = raw.decode()
            except UnicodeDecodeError:
                problems.append(f"the binary object {key} names a locator")
    backend = in_process_bucket()
    shape = None if backend is None else put_shape(backend, key)
    return _Object(key, body, found["ContentType"], found.get("Metadata", {}), shape)


def _members(body: bytes) -> list[bytes]:
    """The files of a ZIP (a package, a report): a locator inside one is no byte of the ZIP's own."""
    if not zipfile.is_zipfile(io.BytesIO(body)):
        return []
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        return [archive.read(info) for info in archive.infolist()]


def _fresh_now(locators: set[str]) -> dict[str, str]:
    """A new ULID for each: its time moved so the latest is now (as if the build had just finished, which a
    real one would have), its random part shifted by one amount that wraps for none: the new ones sort among
    themselves as the old ones did, and after whatever the process made before."""
    if not locators:
        return {}
    parsed = {locator: int.from_bytes(ULID.from_str(locator).bytes, "big") for locator in locators}
    latest = max(value >> _RANDOM_BITS for value in parsed.values())
    moved = max(0, int(time.time() * 1000) - latest) << _RANDOM_BITS
    while True:
        shift = secrets.randbits(_RANDOM_BITS)
        if all((value & _RANDOM_MASK) + shift <= _RANDOM_MASK for value in parsed.values()):
            return {
                locator: str(ULID.from_bytes((value + moved + shift).to_bytes(16, "big")))
                for locator, value in parsed.items()
            }
