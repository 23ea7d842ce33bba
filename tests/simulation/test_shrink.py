"""The simulation's shrinking (tests/simulation/support.py): a failing step list comes back as the shortest
sublist found that still fails, within the runs it may spend."""

from __future__ import annotations

from tests.simulation.support import shrink


def test_a_failure_that_needs_two_steps_shrinks_to_those_two():
    runs: list[list[int]] = []

    def fails(steps: list[int]) -> bool:
        runs.append(steps)
        return 3 in steps and 11 in steps

    assert shrink(list(range(14)), fails, budget=100) == [3, 11]
    assert all(len(steps) < 14 for steps in runs)


def test_a_failure_of_one_step_keeps_that_step_only():
    assert shrink(list(range(20)), lambda steps: 7 in steps, budget=100) == [7]


def test_a_failure_that_needs_every_step_keeps_them_all():
    assert shrink([0, 1, 2, 3], lambda steps: len(steps) == 4, budget=100) == [0, 1, 2, 3]


def test_the_budget_bounds_the_runs_and_what_was_found_so_far_is_kept():
    runs: list[list[int]] = []

    def fails(steps: list[int]) -> bool:
        runs.append(steps)
        return 5 in steps

    shortest = shrink(list(range(16)), fails, budget=2)
    assert len(runs) == 2
    assert shortest == list(range(8))  # the first half went, the second half could not
