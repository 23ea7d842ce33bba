"""When a delinquency's moments fall (pure): its grace ends `gracePeriodDays` calendar days after it
starts, and each configured event `offsetDays` from the grace start or end, counted in the account's
time zone (a day across a DST change is a calendar day, as DECISIONS.md counts days)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal
from zoneinfo import ZoneInfo

from chalicelib.configuration.billing_plans import DelinquencyEvent, GraceOffsetBasis

SECONDS_A_DAY = 86_400


def plus_days(moment: datetime, days: Decimal | int, zone: str) -> datetime:
    """`moment` moved by `days` local calendar days (whole days keep the local time of day; a fraction of
    a day is elapsed time)."""
    whole = int(Decimal(days).to_integral_value(rounding="ROUND_FLOOR"))
    fraction = Decimal(days) - whole
    local = moment.astimezone(ZoneInfo(zone)) + timedelta(days=whole)
    moved = local.astimezone(timezone.utc)
    return moved + timedelta(seconds=int(fraction * SECONDS_A_DAY))


def grace_end(start: datetime, grace_period_days: int, zone: str) -> datetime:
    return plus_days(start, grace_period_days, zone)


def trigger_time(event: DelinquencyEvent, grace_start: datetime, grace_end_at: datetime, zone: str) -> datetime:
    basis = grace_start if event.offset_basis == GraceOffsetBasis.GRACE_PERIOD_START else grace_end_at
    return plus_days(basis, event.offset_days, zone)
