from __future__ import annotations

import pytest

from tests.support.configs import configured_tenant


@pytest.fixture
def tenant(api, admin_token) -> str:
    """A fresh tenant with the policy test configuration deployed."""
    return configured_tenant(api, admin_token)
