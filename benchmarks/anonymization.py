"""Anonymization of one account (issue 29, Measured: "anonymization of an account with 5 policies and 100
events: calls and time"): the request and its job (compliance/service.py run: retention, every stored record
of the account rewritten, its documents' files removed, one event per record), DynamoDB calls by operation,
wall and our CPU.

    .venv/bin/python benchmarks/anonymization.py [--policies 5] [--events 100]

The setting of benchmarks/billing.py (one process, in-process moto, the tests' fixed clock 2026-01-15, the
inline job queue). The tenant and the insured are those of tests/api/compliance/support.py (Ada Lovelace's
PersonAccount, the documents configuration: each issue renders two documents); each policy is a
PersonalAuto year from 2024-06-01 (expired at the clock), issued from its quote, its billing jobs and
documents run, its open invoices paid by card (a payment each), so retention lets the account go. The
account is then changed until the tenant's event stream holds `--events` events. Measured: the POST and the
job it enqueues, drained.
"""

from __future__ import annotations

import argparse
from typing import Any

from _in_process import use_emulated_aws

use_emulated_aws()

from billing import Bench, drain, measure, session  # noqa: E402  (after the environment: it imports nothing of ours)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", type=int, default=5, help="expired policies of the account")
    parser.add_argument("--events", type=int, default=100, help="events of the tenant's stream before it")
    options = parser.parse_args()
    with session() as (api, token, bench):
        anonymize_account(api, token, bench, options.policies, options.events)


def event_count(api: Any, token: str, tenant: str) -> int:
    from tests.support.api import call, ok

    count, query = 0, "pageSize=100"
    while True:
        page = ok(call(api, "GET", f"/event/{tenant}/events/list?{query}", token))
        if not page["events"]:
            return count
        count += len(page["events"])
        query = f"pageSize=100&pagingToken={page['pagingToken']}"


def anonymize_account(api: Any, token: str, bench: Bench, policies: int, events: int) -> None:
    from tests.api.compliance.support import EXPIRED, PERSONAL, anonymize, compliance_tenant, insured, pay_open_invoices
    from tests.api.quotes.support import advance, auto, create
    from tests.support.api import call, ok

    tenant = compliance_tenant(api, token)
    account = insured(api, token, tenant)
    for _ in range(policies):
        quote = create(api, token, tenant, auto(account, startTime=EXPIRED))
        ok(advance(api, token, tenant, quote["locator"], "issue"))
        drain(bench)
    payments = pay_open_invoices(api, token, tenant, account)
    drain(bench)
    changes = 0
    while event_count(api, token, tenant) < events:
        ok(
            call(
                api,
                "PATCH",
                f"/policy/{tenant}/accounts/{account}",
                token,
                {"setData": {"email": f"ada{changes}@example.com"}},
            )
        )
        changes += 1
    before = event_count(api, token, tenant)

    def run() -> list[dict[str, Any]]:
        started = ok(anonymize(api, token, tenant, {"references": {"account": [account]}}))
        drain(bench)
        return started

    [job], took = measure(bench, run)
    [done] = ok(call(api, "GET", f"/compliance/{tenant}/jobs?jobLocators={job['jobLocator']}", token))
    assert (done["jobStatus"], done["anonymizedReferenceLocators"]) == ("completed", [account]), done
    shown = ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}", token))
    assert shown["anonymizedAt"] and not any(text in str(shown) for text in PERSONAL), shown
    print(
        f"account with {policies} expired policies, {len(payments)} payments, {before} events "
        f"({changes} account changes): anonymized in {took.took.wall * 1000:.0f} ms "
        f"({took.emulated.wall * 1000:.0f} ms in moto), our CPU {took.ours * 1000:.0f} ms; "
        f"{took.count} DynamoDB calls ({took.per(1)}); load average {took.load}",
        flush=True,
    )


if __name__ == "__main__":
    main()
