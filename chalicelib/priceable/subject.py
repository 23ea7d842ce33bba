"""What the checks and plugins look at: a priceable thing as it is or would be, and the arithmetic of
its span. Pure.

A subject names its kind (`quote` or `transaction`, as plugins see it), the transaction category, the
moments table versions are chosen by (policy start, term start, effective time) and the segment it
prices; a quote's are all its own start and span. The plugin request's `account` is read only when a
plugin actually runs (`account_view` reads it at most once).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal, Protocol

from chalicelib.core import durations
from chalicelib.core.clock import utc
from chalicelib.priceable.models import Element, PriceableFields, PriceableRecord

AccountLoader = Callable[[], Mapping[str, Any]]


@dataclass(frozen=True)
class ScheduleOwner:
    kind: Literal["quote", "transaction"]
    locator: str
    category: str | None = None


NO_ACCOUNT: Mapping[str, Any] = {"locator": "", "type": "", "data": {}}


@dataclass(frozen=True)
class Subject:
    kind: Literal["quote", "transaction"]
    locator: str
    product: str
    start: datetime
    end: datetime | None
    currency: str
    timezone: str
    basis: str
    element: Element
    static: Mapping[str, Any]
    jurisdiction: str | None
    config_version: str
    account: AccountLoader
    category: str | None = None
    """The transaction category (None for quotes)."""
    term_start: datetime | None = None
    effective: datetime | None = None
    segment_start: datetime | None = None
    segment_end: datetime | None = None
    schedule_owners: tuple[ScheduleOwner, ...] = ()
    """Where the subject's schedules may come from, nearest first: a transaction, its base, ..., the
    issuance and its quote (empty: the subject's own)."""

    def moments(self) -> tuple[datetime, datetime, datetime]:
        """The moments table versions are chosen by: policy start, term start, effective time."""
        return self.start, self.term_start or self.start, self.effective or self.start

    @property
    def segment(self) -> tuple[datetime, datetime | None]:
        """The span being priced: the segment's, else the subject's own."""
        return self.segment_start or self.start, self.segment_end or self.end

    @property
    def duration(self) -> Decimal:
        """The priced span's length in `basis` units (0 without an end)."""
        start, end = self.segment
        return durations.duration(start, end, self.basis, self.timezone) if end else Decimal(0)


class Account(Protocol):
    locator: str
    type: str
    data: dict[str, Any]


def account_view(load: Callable[[], Account]) -> AccountLoader:
    """The plugin request's account, read by `load` when first asked for, then kept."""
    loaded: list[Account] = []

    def view() -> Mapping[str, Any]:
        if not loaded:
            loaded.append(load())
        return {"locator": loaded[0].locator, "type": loaded[0].type, "data": loaded[0].data}

    return view


def quote_subject(record: PriceableRecord, static: Mapping[str, Any], account: AccountLoader) -> Subject:
    """What the plugins see of a quote or a quick quote (a quick quote has no static data)."""
    return Subject(
        kind="quote",
        locator=record.locator,
        product=record.productName,
        start=record.startTime,
        end=record.endTime,
        currency=record.currency,
        timezone=record.timezone,
        basis=record.durationBasis,
        element=record.element,
        static=static,
        jurisdiction=record.jurisdiction,
        config_version=record.configVersion,
        account=account,
    )


def span_end(
    start: datetime, end: datetime | None, term: Decimal | int | None, basis: str, zone: str
) -> datetime | None:
    """The given end, else start plus the term (none without a term)."""
    if end is not None:
        return utc(end)
    return durations.add(start, term, basis, zone) if term else None


def span_duration(start: datetime, end: datetime | None, basis: str, zone: str) -> Decimal | None:
    return durations.duration(start, end, basis, zone) if end is not None and end >= start else None


def new_span(
    start: datetime, fields: PriceableFields, term: Decimal | int | None, basis: str, zone: str
) -> dict[str, Any]:
    """The span of a new quote or quick quote (its fields of that name): from `start` to the end the
    request names, else the term's; the expiration the request names; the duration, in `basis` and `zone`."""
    end = span_end(start, fields.endTime, term, basis, zone)
    return {
        "startTime": start,
        "endTime": end,
        "expirationTime": utc(fields.expirationTime) if fields.expirationTime else None,
        "timezone": zone,
        "durationBasis": basis,
        "duration": span_duration(start, end, basis, zone),
    }


def positive_term(value: Any) -> Decimal | None:
    """A configured term duration: a positive number, else none (real packages say 0 for none)."""
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        return None
    return Decimal(value) if value > 0 else None
