"""What several time-travel tests share: the auto-renewal plans of the renewal tests, and the due days of the
billing tests' monthly plan."""

from __future__ import annotations

PLANS = {
    "Auto": {
        "generateAutoRenewals": True,
        "renewalCreateLeadDays": 30,
        "renewalAcceptLeadDays": 20,
        "renewalIssueLeadDays": 10,
    },
    "Loyalty": {
        "generateAutoRenewals": True,
        "renewalCreateLeadDays": 30,
        "renewalAcceptLeadDays": 20,
        "renewalIssueLeadDays": 10,
        "renewalTransactionType": "LoyaltyRenewal",
        "newTermDuration": 6,
    },
    "Late": {"generateAutoRenewals": True, "renewalCreateLeadDays": 5},
    "Manual": {"generateAutoRenewals": False},
}
"""The auto-renewal plans of tests/jobs/test_auto_renewal.py's model (and of the tests that renew as it does)."""

DUE_DAYS = [
    "2026-02-01T05:00:00.000Z",
    "2026-03-01T05:00:00.000Z",
    "2026-04-01T04:00:00.000Z",
    "2026-05-01T04:00:00.000Z",
    "2026-06-01T04:00:00.000Z",
    "2026-07-01T04:00:00.000Z",
    "2026-08-01T04:00:00.000Z",
    "2026-09-01T04:00:00.000Z",
    "2026-10-01T04:00:00.000Z",
    "2026-11-01T04:00:00.000Z",
    "2026-12-01T05:00:00.000Z",
    "2027-01-01T05:00:00.000Z",
]
"""The monthly plan's due days of the policy tests/api/billing/support.py's `billed_policy` issues (a year from
2026-02-01, midnight in New York)."""
