"""Transactions on the three real configuration packages (tests/fixtures/socotra-configs): a policy issued
from a quote, a change of one of its exposures' data issued, then a cancellation issued; segments, terms,
the policy root, its statuses by the clock, and the money rule over every charge the three transactions
carry.

The packages' own plugins are Java and were left out of the fixtures, so without a plugin nothing would be
rated. Each package is deployed here with a small Python rating plugin added (RATING in real_packages.py) that rates
with the package's own charge types: each exposure a premium rate per duration unit from one of its data
fields (the field the change modifies), and the root a flat-amount tax of 25 per segment. The expected
charges are worked out independently of chalicelib.transactions.deltas: per held piece, half-up to the
cent, with the policy's own duration basis and time zone (iag-motor-demo: months in New York, itemcare:
months in Phoenix, mgt-commercial: years in Los Angeles)."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pytest

from chalicelib.core import durations
from chalicelib.core.clock import parse_datetime
from tests.api.transactions.real_packages import CASES, Case, issued_policy, with_plugin
from tests.api.transactions.support import create, params, policy_path, step, transaction_path
from tests.support.api import call, ok
from tests.support.configs import deployed_tenant
from tests.unit.configuration.zips import fixture_zip

CHANGE_AT = "2026-03-20T12:00:00.000Z"
CANCEL_AT = "2026-06-10T12:00:00.000Z"
ISSUED_AT = "2026-02-01T05:00:00.000Z"


@pytest.mark.parametrize("package", CASES)
def test_a_change_and_a_cancellation_are_issued_on_each_real_package(api, admin_token, clock, package):
    case = CASES[package]
    tenant = deployed_tenant(api, admin_token, with_plugin(fixture_zip(package)))
    policy = issued_policy(api, admin_token, tenant, case)
    assert (policy["startTime"], policy["endTime"]) == (ISSUED_AT, case.term_end)
    assert (policy["durationBasis"], policy["timezone"]) == (case.basis, case.zone)
    issuance = policy["issuedTransactionLocator"]
    exposure = exposure_of(ok(call(api, "GET", transaction_path(tenant, issuance, "/segment"), admin_token)), case)

    change = ok(
        create(
            api,
            admin_token,
            tenant,
            policy["locator"],
            "change",
            [
                params(CHANGE_AT),
                {
                    "action": "modify",
                    "staticLocator": exposure["staticLocator"],
                    "setData": {case.field: case.changed_value},
                },
            ],
        )
    )
    changed = ok(step(api, admin_token, tenant, change["locator"], "issue"))
    assert (changed["transactionState"], changed["transactionCategory"]) == ("issued", "change"), changed
    change_segment = only_segment(api, admin_token, tenant, change["locator"])
    assert (change_segment["segmentType"], change_segment["startTime"], change_segment["endTime"]) == (
        "coverage",
        CHANGE_AT,
        case.term_end,
    )
    assert Decimal(str(exposure_of(change_segment, case)["data"][case.field])) == Decimal(str(case.changed_value))

    cancellation = ok(create(api, admin_token, tenant, policy["locator"], "cancel", params(CANCEL_AT)))
    cancelled = ok(step(api, admin_token, tenant, cancellation["locator"], "issue"))
    assert (cancelled["transactionState"], cancelled["transactionCategory"]) == ("issued", "cancellation"), cancelled

    gap = only_segment(api, admin_token, tenant, cancellation["locator"])
    assert (gap["segmentType"], gap["startTime"], gap["endTime"]) == ("gap", CANCEL_AT, case.term_end)
    issued_segment = only_segment(api, admin_token, tenant, issuance)
    assert (issued_segment["segmentType"], issued_segment["startTime"], issued_segment["endTime"]) == (
        "coverage",
        ISSUED_AT,
        case.term_end,
    )
    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert (after["issuedTransactionLocator"], after["latestSegmentLocator"], after["endTime"]) == (
        cancellation["locator"],
        gap["locator"],
        case.term_end,
    )
    (term,) = ok(call(api, "GET", policy_path(tenant, policy["locator"], "/terms/list"), admin_token))["items"]
    assert (term["locator"], term["number"], term["startTime"], term["endTime"]) == (
        after["latestTermLocator"],
        0,
        ISSUED_AT,
        case.term_end,
    )
    listed = ok(call(api, "GET", policy_path(tenant, policy["locator"], "/issuedTransactions/list"), admin_token))
    assert [t["locator"] for t in listed["items"]] == [issuance, change["locator"], cancellation["locator"]]

    assert after["statuses"] == ["pending", "cancelPending"]
    clock.set(datetime(2026, 4, 1, tzinfo=timezone.utc))
    assert statuses(api, admin_token, tenant, policy) == ["onRisk", "cancelPending"]
    clock.set(parse_datetime(CANCEL_AT))
    assert statuses(api, admin_token, tenant, policy) == ["cancelled"]

    charges = {
        locator: ok(call(api, "GET", transaction_path(tenant, locator, "/price"), admin_token))["charges"]
        for locator in (issuance, change["locator"], cancellation["locator"])
    }
    assert charges[cancellation["locator"]] and all(
        c.get("reversalOfLocator") for c in charges[cancellation["locator"]]
    )
    every = [charge for each in charges.values() for charge in each]
    assert totals(every) == held_cost(
        case, exposure=exposure["staticLocator"], root=static_of_root(api, admin_token, tenant, issuance)
    )


def exposure_of(segment: dict[str, Any], case: Case) -> dict[str, Any]:
    (exposure,) = [e for e in segment["element"]["elements"] if e["type"] == case.exposure]
    return exposure


def only_segment(api: Any, token: str, tenant: str, transaction: str) -> dict[str, Any]:
    (segment,) = ok(call(api, "GET", transaction_path(tenant, transaction, "/segments/list"), token))
    return segment


def static_of_root(api: Any, token: str, tenant: str, transaction: str) -> str:
    return ok(call(api, "GET", transaction_path(tenant, transaction, "/segment"), token))["element"]["staticLocator"]


def statuses(api: Any, token: str, tenant: str, policy: dict[str, Any]) -> list[str]:
    return ok(call(api, "GET", policy_path(tenant, policy["locator"]), token))["statuses"]


def totals(charges: list[dict[str, Any]]) -> dict[tuple[str, str], Decimal]:
    """The sum of the charges by element static locator and charge type."""
    summed: dict[tuple[str, str], Decimal] = {}
    for charge in charges:
        key = (charge["elementStaticLocator"], charge["chargeType"])
        summed[key] = summed.get(key, Decimal(0)) + Decimal(str(charge["amount"]))
    return summed


def held_cost(case: Case, *, exposure: str, root: str) -> dict[tuple[str, str], Decimal]:
    """What the held coverage costs: the issuance's segment up to the change, the change's up to the
    cancellation; a rate charge earns round(rate x duration held), the tax amount its share of its
    segment's duration."""
    start, change, cancel, end = map(parse_datetime, (ISSUED_AT, CHANGE_AT, CANCEL_AT, case.term_end))

    def duration(since: datetime, until: datetime) -> Decimal:
        return durations.duration(since, until, case.basis, case.zone)

    def rate(value: Any) -> Decimal:
        return Decimal(str(value)) * Decimal(case.factor)

    premium = cents(rate(case.issued_value) * duration(start, change)) + cents(
        rate(case.changed_value) * duration(change, cancel)
    )
    tax = cents(25 * duration(start, change) / duration(start, end)) + cents(
        25 * duration(change, cancel) / duration(change, end)
    )
    return {(exposure, case.premium): premium, (root, case.tax): tax}


def cents(amount: Decimal) -> Decimal:
    return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
