"""The simulation's fixtures: the fault plans a test installs, taken off the DynamoDB client when it ends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chalicelib.storage import clients
from local.faults import FaultPlan, no_backoff


@pytest.fixture
def installed(aws) -> Iterator[list[FaultPlan]]:
    """Plans a simulation installs (`Simulation` appends and removes them); whatever is left is uninstalled."""
    client = clients.dynamodb()
    plans: list[FaultPlan] = []
    with no_backoff():
        yield plans
    for plan in plans:
        plan.uninstall(client)
