from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.support import LocalStack


@pytest.fixture
def stacks() -> Iterator[list[LocalStack]]:
    """Every LocalStack a test appends here is killed at its end, whatever happened."""
    started: list[LocalStack] = []
    yield started
    for stack in started:
        stack.kill()
