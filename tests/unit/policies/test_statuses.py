"""Policy statuses come from the clock: pending before the start, onRisk from it, expired from the end."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from chalicelib.policies.models import PolicyStatus
from chalicelib.policies.statuses import policy_statuses

START = datetime(2026, 2, 1, 5, tzinfo=timezone.utc)
END = datetime(2027, 2, 1, 5, tzinfo=timezone.utc)
TICK = timedelta(microseconds=1)


@pytest.mark.parametrize(
    "now, expected",
    [
        (START - TICK, [PolicyStatus.PENDING]),
        (START, [PolicyStatus.ON_RISK]),
        (END - TICK, [PolicyStatus.ON_RISK]),
        (END, [PolicyStatus.EXPIRED]),
        (END + timedelta(days=400), [PolicyStatus.EXPIRED]),
    ],
)
def test_the_status_at_each_boundary(now, expected):
    assert policy_statuses(now, START, END) == expected
