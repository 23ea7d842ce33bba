"""Persistence of entity holds: the hold `EHOLD#{locator}` (rewritten on condition of its version) and a
copy under its quote or policy (`EHOLDS#{reference}`), so a reference's holds are one Query."""

from __future__ import annotations

from typing import Any

from chalicelib.entity_holds.models import EntityHold
from chalicelib.storage import codec, keys, query, table, versioned
from chalicelib.storage.keys import Key
from chalicelib.storage.unit_of_work import UnitOfWork


def _key(tenant: str, locator: str) -> Key:
    return Key(f"{keys.tenant_scope(tenant)}EHOLD#{locator}")


def _of_reference(tenant: str, reference: str) -> str:
    return f"{keys.tenant_scope(tenant)}EHOLDS#{reference}"


def _model(item: dict[str, Any]) -> EntityHold:
    return EntityHold.model_validate(codec.without_keys(item))


def add(uow: UnitOfWork, tenant: str, hold: EntityHold) -> None:
    uow.add(
        table.put_new(
            {**_key(tenant, hold.locator).as_dict(), "entity": "entityHold", **hold.model_dump(exclude_none=True)}
        ),
        _copy(tenant, hold),
    )


def save(uow: UnitOfWork, tenant: str, hold: EntityHold, *, moved_from: str | None = None) -> None:
    """Rewrites the hold on condition that it is still at `hold.version` (else 409), and its copy (taken
    away from the quote or policy it `moved_from`)."""
    uow.add(
        versioned.rewrite(_key(tenant, hold.locator), hold),
        _copy(tenant, hold.model_copy(update={"version": hold.version + 1})),
    )
    if moved_from is not None:
        uow.add(table.delete(Key(_of_reference(tenant, moved_from), hold.locator)))


def _copy(tenant: str, hold: EntityHold) -> Any:
    return table.put(
        {
            "PK": _of_reference(tenant, hold.referenceLocator),
            "SK": hold.locator,
            "entity": "entityHoldCopy",
            **hold.model_dump(exclude_none=True),
        }
    )


def get(tenant: str, locator: str) -> EntityHold | None:
    item = table.gateway().get(keys.tenant_scope(tenant), _key(tenant, locator))
    return _model(item) if item else None


def of_reference(tenant: str, reference: str) -> list[EntityHold]:
    items = query.all_items(
        table.gateway(), keys.tenant_scope(tenant), _of_reference(tenant, reference), consistent=True
    )
    return [_model(item) for item in items]
