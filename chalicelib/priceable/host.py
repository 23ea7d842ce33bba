"""The `pas` host API for plugins run on a priceable thing: table lookups through the tables domain.

A lookup without a date reads the table version its `selectionTimeBasis` picks from the subject's
moments (policy start, term start, transaction effective time; current time: now); with a date, the
version in force then. An unknown table, a key that does not fit or a date that is not ISO-8601 is a
DomainError, which the plugin sees as `pas.PasError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from chalicelib.core import codes
from chalicelib.core.clock import parse_datetime
from chalicelib.core.context import CallContext
from chalicelib.core.errors import FieldError
from chalicelib.priceable.subject import Subject
from chalicelib.tables import service as tables
from chalicelib.tables.models import SelectionTimes


def selection_times(subject: Subject) -> SelectionTimes:
    policy_start, term_start, effective = subject.moments()
    return SelectionTimes(policyStartTime=policy_start, termStartTime=term_start, transactionEffectiveTime=effective)


class TablesHost:
    def __init__(self, ctx: CallContext, subject: Subject):
        self._ctx = ctx
        self._moments = selection_times(subject)

    def lookup(self, table: str, key: list[str], date: str | None) -> Mapping[str, Any] | None:
        return tables.lookup(self._ctx, table, key, at=self._at(date))

    def range_lookup(self, table: str, key: list[str], bound: Decimal, date: str | None) -> Mapping[str, Any] | None:
        return tables.range_lookup(self._ctx, table, key, bound, at=self._at(date))

    def now(self) -> datetime:
        return self._ctx.now

    def _at(self, date: str | None) -> datetime | SelectionTimes:
        if date is None:
            return self._moments
        try:
            return parse_datetime(date)
        except (TypeError, ValueError):
            raise codes.REQUEST_INVALID(
                f"{date!r} is not an ISO-8601 date-time", field_errors=[FieldError("date", "must be ISO-8601")]
            ) from None
