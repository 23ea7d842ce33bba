"""Records made once and restored under fresh locators: a test that needs many copies of the same start
(tests/jobs/test_billing_ledger.py: hundreds of histories over a dozen distinct starts, each some 0.8 s of
CPU through the services) builds each start once and copies its items for the others.

`Snapshot.record()` watches a block of service calls: every locator the block made (the ULIDs of
chalicelib.core.ids, derived ones too) and the key of every item it wrote. Then `restore()` writes those
items again, each locator they hold (in keys, index attributes and values) replaced by a fresh one that
sorts as the old one did (same time, the random part shifted), so the copy is a record set of its own that
the services cannot tell from one they built. Items whose key names no locator the block made (the
tenant's counters, its number indexes) are shared, so they are not copied: copies keep their template's
numbers. tests/architecture/test_test_shortcuts.py holds a restored start to the built one."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from ulid import ULID

from chalicelib.core import ids
from chalicelib.settings import settings
from chalicelib.storage import clients

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
            try:
                yield snapshot
            finally:
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
        text = json.dumps(self.items)
        for old, new in self.restore_map.items():
            text = text.replace(old, new)
        _write(json.loads(text))
        return self.restore_map


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
    client, name = clients.dynamodb(), settings().table_name
    for start in range(0, len(items), 25):
        requests = [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]
        while requests:
            answer = client.batch_write_item(RequestItems={name: requests})
            requests = answer.get("UnprocessedItems", {}).get(name, [])
