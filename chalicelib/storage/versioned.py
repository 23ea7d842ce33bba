"""The write of a changed aggregate root, for every repository: its fields rewritten (a None field
removed) on condition that it is still at the `version` it was read at, which the write bumps. A lost
race fails the caller's transaction with 409."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from chalicelib.storage.keys import Key
from chalicelib.storage.table import ErrorFactory, WriteOp, update


class Versioned(Protocol):
    version: int

    def model_dump(self, *, exclude: set[str]) -> dict[str, Any]: ...


def rewrite(
    key: Key,
    record: Versioned,
    *,
    exclude: Iterable[str] = (),
    extra: Mapping[str, Any] | None = None,
    on_failure: ErrorFactory | None = None,
) -> WriteOp:
    """`extra`: attributes beyond the record's own (index keys); `exclude`: fields never stored."""
    fields = {**record.model_dump(exclude={"locator", "version", *exclude}), **(extra or {})}
    return update(
        key,
        {name: value for name, value in fields.items() if value is not None},
        expected_version=record.version,
        remove=[name for name, value in fields.items() if value is None],
        on_failure=on_failure,
    )
