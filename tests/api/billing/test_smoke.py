from __future__ import annotations

from tests.api.billing.support import billed_policy, billing, billing_tenant, invoices_of_account
from tests.support.api import call, ok


def test_issue_bills_installments(api, admin_token, jobs):
    tenant = billing_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    installments = ok(call(api, "GET", billing(tenant, f"/installments/policies/{policy['locator']}/list?count=100"),
                           admin_token))
    print(installments)
    print(invoices_of_account(api, admin_token, tenant, account, zero=True))
    assert 0
