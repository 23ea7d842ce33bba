"""Planted defects (issue 31): each test plants one defect into the service and expects some seed of `make test`'s
share (200 seeds of 3 steps) to fail on it, so the simulation is shown able to catch it.

TARGETS is every module attribute these tests patch, in one place: when a module moves (billing storage is moving
to chalicelib/billing/invoices/repository.py and the like), retarget the strings here and nothing else."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import pytest

from local.faults import FaultPlan
from tests.simulation.workload import Simulation

TARGETS = {
    "write_token": ("chalicelib.storage.table", "_written_by"),
    "payment_post": ("chalicelib.billing.payments.service", "post_payment"),
    "root_bump": ("chalicelib.billing.account_root", "bump"),
    "root_versions": ("chalicelib.billing.repository", "root_versions"),
    "invoice_writes": ("chalicelib.billing.installments.repository", "invoiced_installment_writes"),
    "uninvoiced_key": ("chalicelib.storage.keys", "billing_uninvoiced"),
    "proration_rounding": ("chalicelib.transactions.deltas", "round_money"),
}
"""name -> (module, attribute): what the planted tests patch (or, `uninvoiced_key`, read to find what they drop)."""
SHARE = range(200)
"""`make test`'s share of seeds: a planted defect must be caught by one of them (the search stops at the first)."""
LENGTH = 3
"""`make test`'s length of a seed (PAS_SIMULATION_LENGTH there)."""
PLANTED_SEEDS = range(4)
"""The seeds the write-token defect must be caught within."""


def _module(name: str) -> Any:
    return importlib.import_module(TARGETS[name][0])


def _original(name: str) -> Any:
    return getattr(_module(name), TARGETS[name][1])


def _plant(monkeypatch: pytest.MonkeyPatch, name: str, replacement: Any) -> None:
    monkeypatch.setattr(_module(name), TARGETS[name][1], replacement)


def _first_failing_seed(
    seeds: range,
    api: Any,
    token: str,
    jobs: Any,
    installed: list[FaultPlan],
    monkeypatch: pytest.MonkeyPatch,
    kinds: tuple[str, ...] = (),
) -> tuple[int, str] | None:
    """The first of `seeds` (of those with a step of `kinds`, when given: the others cannot meet the defect) whose
    run fails with a defect planted, and its failure (whose symptoms may include error codes a route does not
    declare: tests/conftest.py's check of them is off here)."""
    from chalicelib.http import endpoint

    monkeypatch.setattr(endpoint, "undeclared_error_seen", None)
    for seed in seeds:
        simulation = Simulation(seed, api, token, jobs, installed, length=LENGTH)
        if kinds and not any(kind in kinds for kind, _ in simulation.steps):
            continue
        failure = simulation.failure(list(range(len(simulation.steps))))
        if failure is not None:
            return seed, failure
    return None


def _invoice_writes_with_marker(change: Callable[[Any], Any | None]) -> Callable[[str, Any], list[Any]]:
    """The invoice write of an installment (`invoice_writes`) with its uninvoiced marker's delete put through
    `change` (None: dropped)."""
    writes = _original("invoice_writes")
    marker_key = _original("uninvoiced_key")

    def planted(tenant: str, installment: Any) -> list[Any]:
        from chalicelib.core.clock import isoformat

        generated = isoformat(installment.generateTime)
        marker = marker_key(tenant, installment.accountLocator, generated, installment.locator)
        kept = []
        for op in writes(tenant, installment):
            if op.action == "Delete" and op.key == marker:
                op = change(op)
            if op is not None:
                kept.append(op)
        return kept

    return planted


def test_a_conditional_write_that_forgets_its_write_token_is_caught(api, admin_token, jobs, installed, monkeypatch):
    """The defect the first seeds found, planted again: a conditional write resent after its answer was lost no
    longer knows its own earlier attempt (storage/table.py's write token), so a job's claim or a guard's answer
    fails its own condition."""
    _plant(monkeypatch, "write_token", lambda item, token: False)
    caught = _first_failing_seed(PLANTED_SEEDS, api, admin_token, jobs, installed, monkeypatch)
    assert caught is not None, f"no seed of {list(PLANTED_SEEDS)} caught the planted defect"


def test_a_payment_post_without_its_root_version_check_is_caught(api, admin_token, jobs, installed, monkeypatch):
    """A payment post that bumps the account's billing root without its version condition: a post that read the
    account before another post committed commits on what it read, so the credit balance loses one of the two
    (its moves hold both). A racing step (`pay_racing`) of some seed of the share catches it (seed 9)."""
    post, versions = _original("payment_post"), _original("root_versions")

    def post_without_root_check(ctx: Any, locator: str) -> Any:
        with monkeypatch.context() as planted:
            planted.setattr(
                _module("root_bump"),
                TARGETS["root_bump"][1],
                lambda ctx, uow, account, containers: versions(ctx.tenant, account, containers),
            )
            return post(ctx, locator)

    _plant(monkeypatch, "payment_post", post_without_root_check)
    caught = _first_failing_seed(SHARE, api, admin_token, jobs, installed, monkeypatch, kinds=("pay_racing",))
    assert caught is not None, f"no seed of {SHARE} caught a payment post without its root version check"


def test_an_invoice_write_that_leaves_the_uninvoiced_markers_standing_is_caught(
    api, admin_token, jobs, installed, monkeypatch
):
    """An invoice that takes its installments but leaves their uninvoiced markers standing: the next invoice run
    finds them uninvoiced and invoices them again. The exact invoicing check (`_check_invoicing`) catches it."""
    _plant(monkeypatch, "invoice_writes", _invoice_writes_with_marker(lambda op: None))
    caught = _first_failing_seed(SHARE, api, admin_token, jobs, installed, monkeypatch)
    assert caught is not None, f"no seed of {SHARE} caught an invoice write leaving the uninvoiced markers standing"
    assert "invoiced twice" in caught[1] or "invoiced on" in caught[1], caught


def test_a_proration_that_rounds_down_is_caught(api, admin_token, jobs, installed, monkeypatch):
    """A change or cancellation that keeps of a cut segment's charge its prorated amount rounded down instead of
    half-up: the policy's charges fall a cent short of the coverage held (`_check_charges`)."""
    from decimal import ROUND_DOWN, Decimal

    from chalicelib.core.money import minor_units

    _plant(
        monkeypatch,
        "proration_rounding",
        lambda amount, currency: amount.quantize(Decimal(1).scaleb(-minor_units(currency)), rounding=ROUND_DOWN),
    )
    caught = _first_failing_seed(SHARE, api, admin_token, jobs, installed, monkeypatch, kinds=("change", "cancel"))
    assert caught is not None, f"no seed of {SHARE} caught a proration rounded down"
    assert "the coverage held" in caught[1], caught


def test_an_invoice_write_without_its_uninvoiced_marker_condition_is_caught(
    api, admin_token, jobs, installed, monkeypatch
):
    """An invoice write that deletes its installments' uninvoiced markers without the condition that they stand: an
    early invoicing that read the installments before another writer invoiced them (`invoice_early_racing`) reads
    the account's billing root after that writer bumped it, so the root's condition lets it through and only the
    marker's would have refused it: the installments are invoiced twice."""
    from chalicelib.storage import table

    _plant(monkeypatch, "invoice_writes", _invoice_writes_with_marker(lambda op: table.delete(op.key)))
    caught = _first_failing_seed(SHARE, api, admin_token, jobs, installed, monkeypatch, kinds=("invoice_early_racing",))
    assert caught is not None, f"no seed of {SHARE} caught an invoice write without its uninvoiced marker condition"
    assert "invoiced twice" in caught[1] or "invoiced on" in caught[1], caught
