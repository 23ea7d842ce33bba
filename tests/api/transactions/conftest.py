from __future__ import annotations

import pytest

from tests.api.quotes.support import new_account
from tests.api.transactions.support import issued_policy
from tests.support.configs import quotes_tenant


@pytest.fixture
def tenant(api, admin_token) -> str:
    """A fresh tenant with the quotes test configuration, its plugins and rating tables."""
    return quotes_tenant(api, admin_token)


@pytest.fixture
def account(api, admin_token, tenant) -> str:
    return new_account(api, admin_token, tenant)


@pytest.fixture
def policy(api, admin_token, tenant, account) -> dict:
    """A PersonalAuto policy for a year from 2026-02-01, one vehicle worth 12,000.50."""
    return issued_policy(api, admin_token, tenant, account)
