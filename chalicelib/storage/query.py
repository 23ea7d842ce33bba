"""Offset/count paging over Query: read offset + count + 1 items, never Scan, never filter."""

from __future__ import annotations

from typing import Any

from chalicelib.core.paging import Page, PageRequest
from chalicelib.storage.table import TableGateway


def page(
    gateway: TableGateway,
    scope: str,
    pk: str,
    request: PageRequest,
    *,
    index: str | None = None,
    sk_prefix: str | None = None,
    forward: bool = True,
) -> Page[dict[str, Any]]:
    wanted = request.offset + request.count + 1
    items: list[dict[str, Any]] = []
    start_key = None
    while len(items) < wanted:
        batch, start_key = gateway.query(
            scope,
            pk,
            index=index,
            sk_prefix=sk_prefix,
            forward=forward,
            limit=wanted - len(items),
            start_key=start_key,
        )
        items.extend(batch)
        if start_key is None:
            break
    return Page.window(items, request)


def all_items(
    gateway: TableGateway,
    scope: str,
    pk: str,
    *,
    index: str | None = None,
    sk_prefix: str | None = None,
    consistent: bool = False,
) -> list[dict[str, Any]]:
    """Every item of one partition (small, bounded collections only: a user's tokens, a policy's terms),
    in one Query per MB read."""
    items: list[dict[str, Any]] = []
    start_key = None
    while True:
        batch, start_key = gateway.query(
            scope, pk, index=index, sk_prefix=sk_prefix, start_key=start_key, consistent=consistent
        )
        items.extend(batch)
        if start_key is None:
            return items
