"""Each record a request reads is read once (issue 28, "Once per request"): creating a payment reads the
configuration's current pointer and the account at most once, however many of the billing service's
steps ask for them (CallContext.reads)."""
from __future__ import annotations

from chalicelib.storage import keys
from tests.api.billing.support import billed_policy, billing, billing_tenant
from tests.support.api import call, ok


def test_a_payment_create_reads_the_configuration_and_the_account_once(api, admin_token, jobs, ddb_reads):
    tenant = billing_tenant(api, admin_token, "FullPay")
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    ddb_reads.clear()
    payment = ok(call(api, "POST", billing(tenant, "/payments"), admin_token, {
        "accountLocator": account, "type": "Check", "amount": 1000, "data": {}, "targets": []}))
    assert payment["paymentState"] in ("draft", "validated", "posted"), payment
    by_key: dict[tuple[str, str], int] = {}
    for read in ddb_reads:
        for key in read.keys:
            by_key[key] = by_key.get(key, 0) + 1
    pointer, stored = keys.config_current(tenant), keys.account(tenant, account)
    assert len(ddb_reads.of_key(pointer.pk, pointer.sk)) <= 1, by_key
    assert len(ddb_reads.of_key(stored.pk, stored.sk)) <= 1, by_key
    assert max(by_key.values()) == 1, by_key  # no record asked for twice
