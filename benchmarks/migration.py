"""Migration (issue 29, Measured): accounts each of 1 policy (a PersonalAuto year issued 2025-06-01, brought
with its 12 monthly installments), 3 invoices of 4 installments (two settled by the account's 2 payments, one
open), migrated by their account jobs: our CPU and DynamoDB calls per account, the last tenth of the accounts
against the first, and a worker killed mid-account (recover: none lost, none twice).

    .venv/bin/python benchmarks/migration.py [--accounts 100 1000] [--kill]

The setting of benchmarks/billing.py (one process, in-process moto, the tests' fixed clock 2026-01-15, the
inline job queue): one worker, its account jobs dispatched in order; the request (started by upload,
`?uploadLocator=`) and the run job (which queues the accounts) are outside the measured stretch. Per size, a
fresh tenant.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any

from _in_process import use_emulated_aws

use_emulated_aws()

from billing import Bench, dispatch_all, measure, session  # noqa: E402  (after the environment)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, nargs="+", default=[100, 1000], help="accounts per migration")
    parser.add_argument("--kill", action="store_true", help="also kill the worker in one account's staging")
    options = parser.parse_args()
    with session() as (api, token, bench):
        as_deployed_with_json_bodies()
        for size in options.accounts:
            migrate(api, token, bench, size)
        if options.kill:
            killed(api, token, bench, min(options.accounts))


def as_deployed_with_json_bodies() -> None:
    """The DynamoDB client as deployed: `billing.session` took botocore's own serializer without validation; a
    tree whose clients write DynamoDB's JSON bodies themselves (storage/clients.json_bodies) gets that back."""
    from chalicelib.storage import clients

    install = getattr(clients, "json_bodies", None)
    if install is not None:
        install(clients.dynamodb())


def _month(n: int) -> str:
    """The first of the n-th month from 2025-06 (n from 0), at 04:00Z."""
    year, month = divmod(5 + n, 12)
    return f"{2025 + year}-{month + 1:02d}-01T04:00:00Z"


def account(original: str) -> dict[str, Any]:
    from decimal import Decimal

    from tests.api.migration.support import account_request, billed_policy

    installments = [
        {
            "id": f"{original}-I{n}",
            "invoiceId": f"{original}-INV{n // 4}",
            "startTime": _month(n),
            "generateTime": _month(n),
            "dueTime": _month(n),
        }
        for n in range(12)
    ]
    policy = billed_policy(f"{original}-p1", installments, [(n + 1, "12.00") for n in range(12)])
    policy["terms"][0]["transactions"] = policy["terms"][0]["transactions"][:1]  # the issuance alone
    invoices = [
        {
            "id": f"{original}-INV{k}",
            "startTime": _month(4 * k),
            "endTime": _month(4 * k + 4),
            "generateTime": _month(4 * k),
            "dueTime": _month(4 * k),
            "invoiceState": state,
        }
        for k, state in enumerate(("settled", "settled", "open"))
    ]
    payments = [
        {
            "id": f"{original}-P{k}",
            "paymentType": "Card",
            "paymentTime": _month(4 * k),
            "data": {},
            "currency": "USD",
            "paymentItems": [{"invoiceId": f"{original}-INV{k}", "amount": Decimal("48.00")}],
        }
        for k in range(2)
    ]
    return {**account_request(original, policies=[policy]), "invoices": invoices, "payments": payments}


def started(api: Any, token: str, bench: Bench, size: int, prefix: str) -> tuple[str, str]:
    """A fresh tenant's migration of `size` accounts, its run job done (the accounts queued)."""
    from chalicelib.runtime.jobs import JobMessage, dispatch
    from tests.api.migration.support import migrations
    from tests.api.uploads.support import by_reference, uploaded
    from tests.support.api import ok
    from tests.support.configs import configured_tenant, policy_model

    model = policy_model()
    model["payments"] = {"Card": {}}
    tenant = configured_tenant(api, token, model)
    content = json.dumps([account(f"{prefix}{n}") for n in range(size)], default=str).encode()
    upload = uploaded(api, token, "migration", content, tenant)  # 1,000 accounts are over the direct body's 1 MB
    migration = ok(by_reference(api, "POST", migrations(tenant), token, upload, content_type="application/json"))[
        "locator"
    ]
    dispatch(JobMessage.model_validate_json(bench.queue.messages.pop(0)))  # the run job: the accounts queued
    return tenant, migration


def migrate(api: Any, token: str, bench: Bench, size: int) -> None:
    from tests.api.migration.support import fetch

    tenant, migration = started(api, token, bench, size, "SRC-")
    tenth = max(1, size // 10)
    queued = list(bench.queue.messages)
    first, middle, last = queued[:tenth], queued[tenth:-tenth], queued[-tenth:]
    figures = []
    for part in (first, middle, last):
        bench.queue.messages[:] = list(part)
        _, took = measure(bench, lambda: dispatch_all(bench))
        figures.append(took)
    done = fetch(api, token, tenant, migration)
    assert (done["migrationState"], done["completedAccounts"]) == ("finished", size), done
    whole = sum(f.ours for f in figures)
    calls = sum((f.calls for f in figures), Counter())
    head, tail = figures[0], figures[2]
    by_operation = ", ".join(f"{name} {count / size:.2f}" for name, count in sorted(calls.items()))
    print(
        f"{size} accounts: our CPU {whole * 1000 / size:.1f} ms an account ({size / whole:.0f} accounts/s of our "
        f"CPU; of it botocore's client side {sum(f.botocore for f in figures) * 1000 / size:.1f} ms), "
        f"wall {sum(f.took.wall for f in figures) * 1000 / size:.1f} ms an account; DynamoDB calls an "
        f"account {sum(calls.values()) / size:.2f} ({by_operation}); "
        f"last tenth {tail.ours * 1000 / len(last):.1f} ms against the first's {head.ours * 1000 / len(first):.1f} "
        f"ms an account of our CPU; load average {tail.load}",
        flush=True,
    )


def killed(api: Any, token: str, bench: Bench, size: int) -> None:
    """A worker killed between two writes of one account (its pending records written, its final write not):
    the account is in error; recover migrates it; every account once."""
    from chalicelib.policies import service as policies
    from tests.api.migration.support import control, fetch
    from tests.support.api import call, ok

    tenant, migration = started(api, token, bench, size, "KILL-")
    real, calls = policies.add_migrated_policy, []

    def killed_once(*args: Any, **kwargs: Any) -> Any:
        answer = real(*args, **kwargs)
        calls.append(1)
        if len(calls) == size // 2:
            raise RuntimeError("worker killed")
        return answer

    policies.add_migrated_policy = killed_once
    try:
        dispatch_all(bench)
    finally:
        policies.add_migrated_policy = real
    assert fetch(api, token, tenant, migration)["errorAccounts"] == 1
    assert control(api, token, tenant, migration, "recover").status_code == 200
    dispatch_all(bench)
    done = fetch(api, token, tenant, migration)
    assert (done["migrationState"], done["completedAccounts"]) == ("finished", size), done
    accounts, offset = [], 0
    while True:
        page = ok(call(api, "GET", f"/policy/{tenant}/accounts/list?offset={offset}&count=100", token))["items"]
        accounts += page
        offset += len(page)
        if len(page) < 100:
            break
    held = sum(
        len(ok(call(api, "GET", f"/policy/{tenant}/accounts/{a['locator']}/policies/list", token))["items"])
        for a in accounts
    )
    print(
        f"killed mid-account among {size}: {len(accounts)} accounts and {held} policies after recover "
        f"(0 lost, 0 duplicated: {len(accounts) == size and held == size})",
        flush=True,
    )


if __name__ == "__main__":
    main()
