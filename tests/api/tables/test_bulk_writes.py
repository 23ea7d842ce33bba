"""Table rows go in with BatchWriteItem (storage/table.py batch_write): items DynamoDB leaves
unprocessed are sent again, and a table that stays busy answers 503 rather than losing rows."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.core.errors import Unavailable
from chalicelib.settings import settings
from chalicelib.storage import clients, keys, table


class _Busy:
    """A DynamoDB client that leaves items unprocessed: all but the first `accepts` of the first
    `busy_calls` calls, or of every call."""

    def __init__(self, accepts: int, busy_calls: int | None) -> None:
        self.accepts, self.busy_calls, self.calls = accepts, busy_calls, 0

    def batch_write_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:  # noqa: N803 (boto3's name)
        self.calls += 1
        ((name, requests),) = RequestItems.items()
        if self.busy_calls is not None and self.calls > self.busy_calls:
            return clients.dynamodb().batch_write_item(RequestItems=RequestItems)
        if self.accepts:
            clients.dynamodb().batch_write_item(RequestItems={name: requests[: self.accepts]})
        return {"UnprocessedItems": {name: requests[self.accepts :]}}


class _Gateway(table.TableGateway):
    def __init__(self, client: _Busy) -> None:
        super().__init__(settings().table_name)
        self.fake = client

    @property
    def _client(self) -> Any:
        return self.fake


def rows(tenant: str, count: int) -> list[dict[str, Any]]:
    return [{**keys.table_row(tenant, "V1", 0, str(n)).as_dict(), "values": {"n": n}} for n in range(count)]


def test_unprocessed_items_are_sent_again_until_all_are_stored(tenant, monkeypatch):
    monkeypatch.setattr(table, "BATCH_WRITE_BACKOFF_SECONDS", 0)
    busy = _Busy(accepts=10, busy_calls=1)

    _Gateway(busy).batch_write(keys.tenant_scope(tenant), rows(tenant, 30))

    assert busy.calls == 3  # 25 (10 stored), the other 15 again, then the last 5
    stored = table.gateway().batch_get(
        keys.tenant_scope(tenant), [keys.table_row(tenant, "V1", 0, str(n)) for n in range(30)]
    )
    assert sorted(int(item["values"]["n"]) for item in stored) == list(range(30))


def test_a_table_that_stays_busy_answers_unavailable(tenant, monkeypatch):
    monkeypatch.setattr(table, "BATCH_WRITE_BACKOFF_SECONDS", 0)

    with pytest.raises(Unavailable):
        _Gateway(_Busy(accepts=0, busy_calls=None)).batch_write(keys.tenant_scope(tenant), rows(tenant, 3))


def test_rows_outside_the_callers_tenant_are_refused_before_any_write(tenant):
    busy = _Busy(accepts=25, busy_calls=None)

    with pytest.raises(table.ScopeViolation):
        _Gateway(busy).batch_write(keys.tenant_scope(tenant), rows("another-tenant", 1))
    assert busy.calls == 0
