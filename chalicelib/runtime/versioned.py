"""The save of a changed aggregate root, for every service: stamped with who changed it when, checked
to fit in one item, written conditionally on its version (storage/versioned.py) with its events, and
committed; the caller gets it back at its new version."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from chalicelib.core.context import CallContext
from chalicelib.core.records import VersionedRecord, check_size
from chalicelib.storage.unit_of_work import UnitOfWork

R = TypeVar("R", bound=VersionedRecord)

Event = tuple[str, dict[str, Any]]


def save(
    ctx: CallContext,
    uow: UnitOfWork,
    record: R,
    write: Callable[[UnitOfWork, str, R], None],
    events: Iterable[Event],
    *,
    code: str,
    noun: str,
) -> R:
    """`write(uow, tenant, record)` is the repository's rewrite; 413 `{code}.too_large` for a record
    that would not fit in one item, 409 when another request changed it first."""
    check_size(record, code=code, noun=noun)
    changed = record.model_copy(update={"updatedAt": ctx.now, "updatedBy": ctx.user_locator})
    write(uow, ctx.tenant, changed)
    for event_type, data in events:
        uow.record_event(event_type, data)
    uow.commit()
    return changed.model_copy(update={"version": changed.version + 1})
