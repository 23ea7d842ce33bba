"""One account that is a fleet (issue 28 point 7, measured before the change): N monthly policies on one account,
its first invoice run. How many invoices it makes for one period and due time (the goal: one), their items and
total, the DynamoDB calls, and the writes that land on the account's billing partition, the one partition every
billing write of the account serialises on (its billing root) and its records share, as write units: what the
run costs the partition at 1,000 WCU (DynamoDB's per-partition write limit).

    .venv/bin/python benchmarks/billing_fleet.py [--policies 60 1000]

The setting of benchmarks/billing.py (one process, in-process moto, a fixed clock, the tests' inline job queue):
the billing test configuration (plan Monthly, premium 1,200.00 and tax 60.00 a year from 2026-02-01), every
policy on the same account, issued at 2026-01-15T09:30Z, their billing jobs run; then the due run at the first
generate time (2026-01-22T05:00Z), measured. Write units are counted as DynamoDB charges a transactional write:
2 per KB (rounded up) of each item put, 2 per updated or deleted item (their size is not in the request; at least
1 KB each), from the requests themselves.
"""

from __future__ import annotations

import argparse
import math
from collections import Counter
from decimal import Decimal
from typing import Any

from _in_process import use_emulated_aws

use_emulated_aws()

from billing import (  # noqa: E402  (after the environment: it imports nothing of ours at import)
    FIRST_GENERATE,
    START,
    Bench,
    due_run,
    measure,
    ran_results,
    session,
)
from billing import drain as drain_jobs  # noqa: E402

WCU_PER_PARTITION = 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--policies", type=int, nargs="+", default=[60, 1000], help="policies on the one account of each run"
    )
    options = parser.parse_args()
    with session() as (api, token, bench):
        for size in options.policies:
            fleet(api, token, bench, size)


def fleet(api: Any, token: str, bench: Bench, size: int) -> None:
    from billing import ACCOUNT_DATA

    from chalicelib.accounts import service as accounts
    from chalicelib.accounts.models import AccountFields
    from chalicelib.billing.invoices import service as invoicing
    from chalicelib.core.paging import PageRequest
    from chalicelib.policies import service as policies
    from chalicelib.runtime import wiring
    from chalicelib.storage import clients, codec, keys
    from tests.api.billing.support import billing_tenant
    from tests.api.policies.support import issuance
    from tests.builders import system_ctx

    bench.clock.set(START)
    tenant = billing_tenant(api, token)
    bench.queue.messages.clear()
    ctx = system_ctx().for_tenant(tenant)
    account = accounts.create_account(ctx, AccountFields(type="PersonAccount", data=ACCOUNT_DATA)).locator
    for _ in range(size):  # one policy a write: an issued policy's records fill much of one TransactWriteItems
        uow = wiring.unit_of_work(ctx)
        policies.add_issued_policy(ctx, uow, issuance(tenant, account))
        uow.commit()
    drain_jobs(bench)

    partition = keys.billing_partition(tenant, account)
    units: Counter[str] = Counter()

    def count(params: dict[str, Any], **_: object) -> None:
        for action in params.get("TransactItems", []):
            [(kind, body)] = action.items()
            key = body.get("Item") or body.get("Key") or {}
            if key.get("PK", {}).get("S") != partition:
                continue
            size_kb = math.ceil(codec.item_size(body["Item"]) / 1024) if "Item" in body else 1
            units["writes"] += 1
            units["units"] += 2 * size_kb

    events = clients.dynamodb().meta.events
    events.register("before-parameter-build.dynamodb.TransactWriteItems", count)
    try:
        ran, took = measure(bench, lambda: due_run(bench, tenant, FIRST_GENERATE))
    finally:
        events.unregister("before-parameter-build.dynamodb.TransactWriteItems", count)
    generated = int(sum(r.get("invoicesGenerated", 0) for r in ran_results(ran)))
    listed = invoicing.invoices_of(ctx, "account", account, PageRequest(0, 1000), include_zero=True).items
    invoices = [invoicing.invoice(ctx, i.locator) for i in listed]  # a list shows no items: each read whole
    assert len(invoices) == generated and generated >= 1, (len(invoices), generated)
    items = [len(i.invoiceItems) for i in invoices]
    total = sum((i.totalAmount for i in invoices), Decimal(0))
    due_times = {i.dueTime for i in invoices}
    print(
        f"\none account, {size} monthly policies, first invoice run: {generated} invoices for "
        f"{len(due_times)} due time(s), {sum(items)} items ({min(items)}-{max(items)} an invoice), total {total}; "
        f"{took.count} calls ({took.per(1)}), {took.took.wall:.1f} s, our CPU {took.ours * 1000:.0f} ms; "
        f"the account's billing partition: {units['writes']} transactional writes, {units['units']} write units "
        f"({units['units'] / WCU_PER_PARTITION:.2f} s of a partition's {WCU_PER_PARTITION} WCU); "
        f"load average {took.load}",
        flush=True,
    )
    fleet_payment(bench, tenant, account, invoices)
    bench.clock.set(START)


def fleet_payment(bench: Bench, tenant: str, account: str, invoices: list[Any]) -> None:
    """The run's invoice read whole, paid in full by one payment and the payment reversed: calls and CPU each."""
    from chalicelib.billing.invoices import service as invoicing
    from chalicelib.billing.payments import service as payments
    from chalicelib.billing.payments.schemas import PaymentCreateRequest
    from tests.builders import system_ctx

    def ctx() -> Any:
        return system_ctx().for_tenant(tenant)

    total = sum((i.totalAmount for i in invoices), Decimal(0))
    read, reading = measure(bench, lambda: [invoicing.invoice(ctx(), i.locator) for i in invoices])
    request = PaymentCreateRequest(accountLocator=account, type="Check", amount=total, currency="USD")
    made = payments.create_payment(ctx(), request)
    posted, post = measure(bench, lambda: payments.post_payment(ctx(), made.locator))
    assert len(posted.applications) == len(invoices) and not posted.creditedAmount, posted
    settled = [invoicing.invoice(ctx(), i.locator) for i in invoices]
    assert all(i.totalRemainingAmount == 0 and i.invoiceState == "settled" for i in settled)
    _, reverse = measure(bench, lambda: payments.reverse_payment(ctx(), made.locator, None))
    reopened = [invoicing.invoice(ctx(), i.locator) for i in invoices]
    assert sum((i.totalRemainingAmount for i in reopened), Decimal(0)) == total
    assert all(item.remainingAmount == item.amount for i in reopened for item in i.invoiceItems)
    print(
        f"its {len(read)} invoice(s) read whole: {reading.count} calls ({reading.per(1)}), our CPU "
        f"{reading.ours * 1000:.0f} ms; paid in full ({total}): post {post.count} calls ({post.per(1)}), our CPU "
        f"{post.ours * 1000:.0f} ms; reversed: {reverse.count} calls ({reverse.per(1)}), our CPU "
        f"{reverse.ours * 1000:.0f} ms",
        flush=True,
    )


if __name__ == "__main__":
    main()
