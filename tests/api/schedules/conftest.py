from __future__ import annotations

import pytest

from tests.api.schedules.support import draft_quote, schedules_tenant


@pytest.fixture
def tenant(api, admin_token) -> str:
    """A fresh tenant with the schedules test configuration."""
    return schedules_tenant(api, admin_token)


@pytest.fixture
def quote(api, admin_token, tenant) -> tuple[str, str]:
    return draft_quote(api, admin_token, tenant)
