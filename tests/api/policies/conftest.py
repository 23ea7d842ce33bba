from __future__ import annotations

import pytest

from tests.api.policies.support import issue, new_account, policies_tenant


@pytest.fixture
def tenant(api, admin_token) -> str:
    """A fresh tenant with the policies test configuration deployed."""
    return policies_tenant(api, admin_token)


@pytest.fixture
def account(api, admin_token, tenant) -> str:
    return new_account(api, admin_token, tenant)


@pytest.fixture
def issued(tenant, account):
    """A PersonalAuto policy issued for a year from 2026-02-01 (the clock stands at 2026-01-15)."""
    return issue(tenant, account)
