"""The local stack's table items and bucket objects on disk: a snapshot and an append-only journal.

moto keeps everything in memory. Every request that changes items or objects appends their new state
(the whole item or object, or its deletion) to `journal.jsonl`, and its answer waits until that is on
disk (fdatasync; requests that arrive meanwhile share one). Once the journal has grown as large as the
snapshot, both files are merged into a new `snapshot.jsonl` - a merge of files, never a read of moto's
memory - so the cost of keeping the state follows what changed, and a cycle with no change reads
nothing. Start-up loads the snapshot and the journal straight into moto's models.

Both files hold one record a line, `<key JSON>\\t<state JSON or null>`; the last record of a key wins.
The keys name what they hold: `["dynamodb", table, hash key, range key]`, `["s3", bucket, object key]`.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table
from moto.s3.models import S3Backend

from local.lean_moto import current_item, insert_item, key_of

SNAPSHOT = "snapshot.jsonl"
JOURNAL = "journal.jsonl"
MERGING = "journal.merging.jsonl"
FORMAT_1_SNAPSHOT = "snapshot.json"
COMPACT_FROM_BYTES = 4 * 1024 * 1024
"""A journal shorter than this is never merged, however small the snapshot."""

ObjectChange = Callable[[S3Backend, str, str], None]


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode()


def item_record_key(table_name: str, hash_key: DynamoType, range_key: DynamoType | None) -> bytes:
    return _dumps(["dynamodb", table_name, hash_key.to_json(), None if range_key is None else range_key.to_json()])


def object_record_key(bucket: str, key: str) -> bytes:
    return _dumps(["s3", bucket, key])


def _wire_binary(value: bytes | str) -> str:
    return base64.b64encode(value).decode() if isinstance(value, bytes) else value


def wire_value(value: DynamoType) -> dict[str, Any]:
    """An attribute value as DynamoDB's JSON protocol carries it (binary as base64), whatever moto holds."""
    if value.type == "M":
        return {"M": {name: wire_value(DynamoType(inner)) for name, inner in value.value.items()}}
    if value.type == "L":
        return {"L": [wire_value(DynamoType(inner)) for inner in value.value]}
    if value.type == "B":
        return {"B": _wire_binary(value.value)}
    if value.type == "BS":
        return {"BS": [_wire_binary(inner) for inner in value.value]}
    return {value.type: value.value}


def _record(key: bytes, state: Any) -> bytes:
    return key + b"\t" + _dumps(state) + b"\n"


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def latest_records(paths: list[Path]) -> dict[bytes, bytes]:
    """Key -> state of the last record of each key in `paths`, read in order; a torn last line is skipped."""
    latest: dict[bytes, bytes] = {}
    for path in paths:
        if not path.exists():
            continue
        for line in path.read_bytes().split(b"\n")[:-1]:
            key, tab, state = line.partition(b"\t")
            if tab:
                latest[key] = state
    return latest


class Journal:
    """An append-only file whose appends can be waited for until they are on disk."""

    def __init__(self, path: Path):
        self.path = path
        self._drop_torn_line()
        self._fd = self._open()
        self.size = os.fstat(self._fd).st_size
        self._appended = 0  # bytes appended by this process, across rotations
        self._synced = 0
        self._lock = threading.Lock()  # the file descriptor and the counters
        self._sync_lock = threading.Lock()  # one fdatasync at a time; the appends made meanwhile share the next

    def _drop_torn_line(self) -> None:
        """A process killed in the middle of an append leaves part of a line: it was never acknowledged."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            with self.path.open("r+b") as journal:
                journal.truncate(data.rfind(b"\n") + 1)

    def _open(self) -> int:
        created = not self.path.exists()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if created:
            _fsync_directory(self.path.parent)
        return fd

    def append(self, data: bytes) -> int:
        """Write `data` (whole lines); answers the position to pass to `sync`."""
        with self._lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]
            self.size += len(data)
            self._appended += len(data)
            return self._appended

    def sync(self, position: int) -> None:
        """Return once everything appended up to `position` is on disk."""
        with self._sync_lock:
            if self._synced >= position:
                return
            with self._lock:
                fd, target = self._fd, self._appended
            os.fdatasync(fd)
            self._synced = target

    def rotate(self, to: Path) -> None:
        """Move the journal's content to `to` and go on in an empty journal."""
        with self._sync_lock, self._lock:
            os.fdatasync(self._fd)
            self._synced = self._appended
            os.close(self._fd)
            os.replace(self.path, to)
            self._fd = self._open()
            self.size = 0

    def close(self) -> None:
        with self._sync_lock, self._lock:
            if self._fd < 0:
                return
            os.fdatasync(self._fd)
            self._synced = self._appended
            os.close(self._fd)
            self._fd = -1  # a late append fails (EBADF) rather than write into whatever reuses the number


class DurableState:
    """What moto holds, kept on disk in `directory`.

    `lock` serialises everything that reads or changes moto's models (its DynamoDB backend is not
    thread-safe); `item_changed` and `object_changed` collect what a request changed, and
    `record_changes` (under `lock`) journals it.
    """

    def __init__(self, directory: Path):
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.lock = threading.RLock()
        self._changed_items: dict[bytes, tuple[Table, DynamoType, DynamoType | None]] = {}
        self._changed_objects: dict[bytes, tuple[S3Backend, str, str]] = {}
        self._merge_lock = threading.Lock()
        self.journal = Journal(directory / JOURNAL)

    @property
    def snapshot_file(self) -> Path:
        return self.directory / SNAPSHOT

    def item_changed(self, table: Table, hash_key: DynamoType, range_key: DynamoType | None) -> None:
        self._changed_items[item_record_key(table.name, hash_key, range_key)] = (table, hash_key, range_key)

    def object_changed(self, backend: S3Backend, bucket: str, key: str) -> None:
        self._changed_objects[object_record_key(bucket, key)] = (backend, bucket, key)

    def record_changes(self) -> int | None:
        """Journal the current state of what changed since the last call; answers the journal position to
        wait for, or None when nothing changed. The caller holds `lock`."""
        if not self._changed_items and not self._changed_objects:
            return None
        records = []
        for record_key, (table, hash_key, range_key) in self._changed_items.items():
            item = current_item(table, hash_key, range_key)
            records.append(
                _record(
                    record_key,
                    None if item is None else {name: wire_value(value) for name, value in item.attrs.items()},
                )
            )
        for record_key, (backend, bucket, key) in self._changed_objects.items():
            found = backend.get_object(bucket, key)
            records.append(
                _record(
                    record_key,
                    None
                    if found is None
                    else {"metadata": dict(found.metadata), "body": base64.b64encode(found.value).decode()},
                )
            )
        self._changed_items.clear()
        self._changed_objects.clear()
        return self.journal.append(b"".join(records))

    def wait_until_durable(self, position: int) -> None:
        self.journal.sync(position)

    def restore(self, table: Table, bucket: str, s3: S3Backend) -> tuple[int, int]:
        """Load the saved items of `table` and objects of `bucket` into moto; answers how many of each."""
        with self.lock:
            self._convert_format_1_snapshot(table, bucket)
            if (self.directory / MERGING).exists():  # a merge was interrupted: finish it first
                self._merge()
            items = objects = 0
            for record_key, state in latest_records([self.snapshot_file, self.journal.path]).items():
                if state == b"null":
                    continue
                kind, container, *key = json.loads(record_key)
                if container not in (table.name, bucket):
                    raise SystemExit(
                        f"{self.directory} holds state of {kind} {container!r}, which this stack "
                        "does not have: `make reset` starts afresh"
                    )
                if kind == "dynamodb":
                    insert_item(table, json.loads(state))
                    items += 1
                else:
                    saved = json.loads(state)
                    s3.put_object(
                        bucket, key[0], base64.b64decode(saved["body"]), disable_notification=True
                    ).set_metadata(saved["metadata"])
                    objects += 1
            self._changed_objects.clear()  # loaded, not changed
            return items, objects

    def _convert_format_1_snapshot(self, table: Table, bucket: str) -> None:
        """Earlier versions saved one JSON document of every item and object, rewritten every 5 s."""
        old = self.directory / FORMAT_1_SNAPSHOT
        if not old.exists() or self.snapshot_file.exists():
            return
        try:
            snapshot = json.loads(old.read_text())
            records = [
                _record(item_record_key(table.name, *key_of(table, item)), item)
                for item in snapshot["dynamodb"]["items"]
            ]
            records += [
                _record(
                    object_record_key(bucket, obj["key"]),
                    {
                        "metadata": {"Content-Type": obj["contentType"]} if obj.get("contentType") else {},
                        "body": obj["body"],
                    },
                )
                for obj in snapshot["s3"]["objects"]
            ]
        except (ValueError, KeyError, TypeError):
            raise SystemExit(f"{old} is not a snapshot this version can read: `make reset` starts afresh") from None
        self._write_snapshot(records)
        old.unlink()

    def compact_if_due(self) -> int:
        """Merge the journal into the snapshot once it has grown as large as the snapshot; answers the bytes
        read (0 when not due: a cycle with nothing changed reads nothing)."""
        snapshot_bytes = self.snapshot_file.stat().st_size if self.snapshot_file.exists() else 0
        if self.journal.size < max(COMPACT_FROM_BYTES, snapshot_bytes):
            return 0
        with self._merge_lock:
            self.journal.rotate(self.directory / MERGING)
            return self._merge()

    def _merge(self) -> int:
        merging = self.directory / MERGING
        sources = [self.snapshot_file, merging]
        read = sum(path.stat().st_size for path in sources if path.exists())
        latest = latest_records(sources)
        self._write_snapshot([key + b"\t" + state + b"\n" for key, state in latest.items() if state != b"null"])
        merging.unlink()
        _fsync_directory(self.directory)
        return read

    def _write_snapshot(self, records: list[bytes]) -> None:
        partial = self.snapshot_file.with_suffix(".partial")
        with partial.open("wb") as out:
            out.writelines(records)
            out.flush()
            os.fsync(out.fileno())
        partial.replace(self.snapshot_file)
        _fsync_directory(self.directory)

    def close(self) -> None:
        self.journal.close()


@contextmanager
def watch_s3(on_object_change: ObjectChange) -> Iterator[None]:
    """Report every object moto's S3 writes or deletes (copies, multipart uploads and batch deletes too)."""
    original_put, original_delete = S3Backend.put_object, S3Backend.delete_object

    def put_object(backend: S3Backend, bucket_name: str, key_name: str, *args: Any, **kwargs: Any) -> Any:
        key = original_put(backend, bucket_name, key_name, *args, **kwargs)
        on_object_change(backend, bucket_name, key_name)
        return key

    def delete_object(backend: S3Backend, bucket_name: str, key_name: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return original_delete(backend, bucket_name, key_name, *args, **kwargs)
        finally:
            on_object_change(backend, bucket_name, key_name)

    S3Backend.put_object, S3Backend.delete_object = put_object, delete_object
    try:
        yield
    finally:
        S3Backend.put_object, S3Backend.delete_object = original_put, original_delete
