"""Seeds of `make simulate` (14 steps) that once failed, run as ordinary tests: each must pass. Each seed's step
list is pinned as it was drawn when it failed (kind, the step's own seed), so a later change of the workload's
draws (a new kind of step) does not turn it into another run.

- 51 and 129: a cancellation and its reinstatement issued at one moment each invoice their own frame at that
  moment, so two invoices of one due time made at one moment are not one run's twice (the coarse check "nothing
  invoiced twice" failed them); the exact check (`Run._check_invoicing`: each installment invoiced at most once,
  every one to generate before the clock invoiced) passes them, and still catches an invoice write that leaves the
  uninvoiced markers standing (test_planted_defects.py).
- 22 (8 steps): a migrated policy's change billed its segment whole besides the issuance's whole year (252.00 for
  the 180.00 of coverage held: "charges equal the coverage held"); a migrated change now carries the adjustments a
  change issued here does (transactions.history_adjustments; tests/api/migration/test_start_and_process.py pins
  the amounts)."""

from __future__ import annotations

import pytest

from tests.simulation.workload import Simulation

PINNED = {
    51: [
        ("new_policy", 1547137878),
        ("advance", 4280871007),
        ("pay_racing", 4225583035),
        ("advance", 3661774547),
        ("disburse", 1108969880),
        ("advance", 762921653),
        ("reverse", 2645015193),
        ("cancel", 1577152325),
        ("pay", 3265411996),
        ("reinstate", 3595842143),
        ("distribute", 2019158905),
        ("reverse", 3894003809),
        ("write_off", 4235552571),
        ("advance", 2543167209),
    ],
    129: [
        ("new_policy", 3382468719),
        ("reverse", 2431458095),
        ("disburse", 594480678),
        ("advance", 3412943298),
        ("cancel", 446332877),
        ("cancel", 1814145649),
        ("reinstate", 421148602),
        ("write_off", 226360250),
        ("pay", 2656824090),
        ("disburse", 629130719),
        ("advance", 625773854),
        ("reverse", 1912809367),
        ("advance", 1467805565),
        ("advance", 3922943745),
    ],
    22: [
        ("new_policy", 3820592216),
        ("migrate", 995322122),
        ("advance", 4120956974),
        ("new_policy", 2581886480),
        ("migrate", 3967901955),
        ("advance", 3785444123),
        ("advance", 2532122966),
        ("advance", 1334365607),
    ],
}
"""seed -> its steps as drawn when it failed: 51 and 129 by `make simulate SEEDS=1000` (14 steps) before
`invoice_early_racing` joined the workload, 22 by `make simulate LENGTH=8` once `migrate` had."""


@pytest.mark.parametrize("seed", sorted(PINNED))
def test_a_seed_that_once_failed_passes(seed, api, admin_token, jobs, installed):
    simulation = Simulation(seed, api, admin_token, jobs, installed, length=len(PINNED[seed]), steps=PINNED[seed])
    steps = list(range(len(simulation.steps)))
    failure = simulation.failure(steps)
    assert failure is None, simulation.report(steps, failure)
    assert simulation.last is not None and sum(simulation.last.plan.injected.values()) > 0
