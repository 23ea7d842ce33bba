"""The seeded fault simulation (issue 31): each seed's workload (tests/simulation/workload.py: months on a
test-clock tenant, every DynamoDB call under the seed's fault plan) must end with its invariants holding to the
cent; a failure names its seed and the shortest failing step list found.

`make test` runs PAS_SIMULATION_SEEDS seeds of PAS_SIMULATION_LENGTH steps (200 of 3: its budget); `make simulate`
runs longer ones (1,000 of 14 by default)."""

from __future__ import annotations

import os

import pytest

from tests.simulation.workload import Simulation

SEEDS = (
    [int(os.environ["PAS_SIMULATION_SEED"])]
    if os.environ.get("PAS_SIMULATION_SEED")
    else range(int(os.environ.get("PAS_SIMULATION_SEEDS", "200")))
)
REPLAY = [int(index) for index in os.environ.get("PAS_SIMULATION_STEPS", "").split(",") if index.strip()]
"""A replay's steps (indices into its seed's step list): what a failure printed."""


@pytest.mark.parametrize("seed", SEEDS)
def test_money_survives_the_faults_of_a_seed(seed, api, admin_token, jobs, installed):
    simulation = Simulation(seed, api, admin_token, jobs, installed)
    indices = REPLAY or list(range(len(simulation.steps)))
    failure = simulation.failure(indices)
    if failure is not None:
        pytest.fail(simulation.report(indices, failure), pytrace=False)
    assert simulation.last is not None
    injected = sum(simulation.last.plan.injected.values())
    assert REPLAY or injected > 0, "the seed injected no fault: the run proves nothing"
