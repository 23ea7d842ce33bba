"""One account that is a fleet (issue 28 point 7, measured before the change): N monthly policies on one account,
its first invoice run. How many invoices it makes for one period and due time (the goal: one), their items and
total, the DynamoDB calls, and the writes that land on the account's billing partition, the one partition every
billing write of the account serialises on (its billing root) and its records share, as write units: what the
run costs the partition at 1,000 WCU (DynamoDB's per-partition write limit).

    .venv/bin/python benchmarks/billing_fleet.py [--policies 60 1000] [--items 2]

The setting of benchmarks/billing.py (one process, in-process moto, a fixed clock, the tests' inline job queue):
the billing test configuration (plan Monthly, premium 1,200.00 and tax 60.00 a year from 2026-02-01), every
policy on the same account, issued at 2026-01-15T09:30Z, their billing jobs run; then the due run at the first
generate time (2026-01-22T05:00Z), measured. Write units are counted as DynamoDB charges a transactional write:
2 per KB (rounded up) of each item put, 2 per updated or deleted item (their size is not in the request; at least
1 KB each), from the requests themselves; a BatchWriteItem's (not transactional) half as much. `--items N`: each
policy has N charges (premium, tax and N - 2 fees, their year's amounts 1,200.00, 60.00 and 12.00 each), so N
items a policy on the invoice. In each phase (generate, pay, reverse) the largest item written (a put's item, an
update's key and values: what it sets, an approximation of the item it leaves from below) and the largest
TransactWriteItems (its actions and the sum of those sizes) are reported against DynamoDB's limits (400 KB an
item, 100 actions and 4 MB a transaction).
"""

from __future__ import annotations

import argparse
import math
from collections import Counter
from datetime import datetime, timezone
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
    parser.add_argument("--items", type=int, default=2, help="charges a policy (>= 2): items a policy an invoice")
    parser.add_argument(
        "--delinquency",
        action="store_true",
        help="instead of paying the invoice: it falls due unpaid (one delinquency), its grace end lapses every policy",
    )
    options = parser.parse_args()
    with session() as (api, token, bench):
        for size in options.policies:
            fleet(api, token, bench, size, options.items, delinquency=options.delinquency)


class WriteProbe:
    """The writes of a stretch: on the account's billing partition (writes, units), and the largest item and
    TransactWriteItems (actions, bytes) of all of them."""

    def __init__(self, partition: str) -> None:
        self.partition = partition
        self.units: Counter[str] = Counter()
        self.largest_item = 0
        self.largest_item_sk = ""
        self.largest_transaction = (0, 0)

    def __enter__(self) -> WriteProbe:
        from chalicelib.storage import clients

        events = clients.dynamodb().meta.events
        events.register("before-parameter-build.dynamodb.TransactWriteItems", self.transaction)
        events.register("before-parameter-build.dynamodb.PutItem", self.single)
        events.register("before-parameter-build.dynamodb.UpdateItem", self.single)
        events.register("before-parameter-build.dynamodb.BatchWriteItem", self.batch)
        return self

    def __exit__(self, *_: object) -> None:
        from chalicelib.storage import clients

        events = clients.dynamodb().meta.events
        events.unregister("before-parameter-build.dynamodb.TransactWriteItems", self.transaction)
        events.unregister("before-parameter-build.dynamodb.PutItem", self.single)
        events.unregister("before-parameter-build.dynamodb.UpdateItem", self.single)
        events.unregister("before-parameter-build.dynamodb.BatchWriteItem", self.batch)

    def size(self, body: dict[str, Any]) -> int:
        from chalicelib.storage import codec

        if "Item" in body:
            found, key = codec.item_size(body["Item"]), body["Item"]
        else:
            key = body.get("Key") or {}
            found = codec.item_size(key) + codec.item_size(body.get("ExpressionAttributeValues") or {})
        if found > self.largest_item:
            self.largest_item, self.largest_item_sk = found, key.get("SK", {}).get("S", "")
        return found

    def single(self, params: dict[str, Any], **_: object) -> None:
        self.size(params)

    def batch(self, params: dict[str, Any], **_: object) -> None:
        """A BatchWriteItem: 1 write unit a KB of each item put, 1 a delete (not transactional)."""
        for requests in params.get("RequestItems", {}).values():
            for request in requests:
                body = request.get("PutRequest") or request.get("DeleteRequest") or {}
                size = self.size(body)
                key = body.get("Item") or body.get("Key") or {}
                if key.get("PK", {}).get("S") == self.partition:
                    self.units["writes"] += 1
                    self.units["units"] += math.ceil(size / 1024) if "Item" in body else 1
        self.units["batches"] += 1

    def transaction(self, params: dict[str, Any], **_: object) -> None:
        actions = params.get("TransactItems", [])
        total = 0
        for action in actions:
            [(_kind, body)] = action.items()
            size = self.size(body)
            total += size
            key = body.get("Item") or body.get("Key") or {}
            if key.get("PK", {}).get("S") != self.partition:
                continue
            self.units["writes"] += 1
            self.units["units"] += 2 * math.ceil(size / 1024) if "Item" in body else 2
        self.largest_transaction = max(self.largest_transaction, (len(actions), total), key=lambda t: t[1])
        self.units["transactions"] += 1

    def limits(self) -> str:
        actions, size = self.largest_transaction
        return (
            f"largest item {self.largest_item / 1000:.1f} KB ({self.largest_item_sk.split('#')[0]}#..., limit 400 KB), "
            f"largest TransactWriteItems {actions} actions, {size / 1e6:.2f} MB (limits 100, 4 MB)"
        )


def fleet_issuance(tenant: str, account: str, items: int) -> Any:
    """The issuance of one of the fleet's policies: the tests' (premium and tax) and `items - 2` fees."""
    from chalicelib.core.ids import new_locator
    from chalicelib.priceable.models import Charge
    from tests.api.policies.support import issuance

    issued = issuance(tenant, account)
    issued.charges = [
        *issued.charges,
        *(
            Charge(
                locator=new_locator(),
                elementLocator=issued.element.locator,
                elementStaticLocator=issued.element.staticLocator,
                chargeType=f"fee{n}",
                chargeCategory="fee",
                rate=Decimal("1"),
                amount=Decimal("12.00"),
            )
            for n in range(1, items - 1)
        ),
    ]
    return issued


def fleet(api: Any, token: str, bench: Bench, size: int, items: int = 2, *, delinquency: bool = False) -> None:
    from billing import ACCOUNT_DATA

    from chalicelib.accounts import service as accounts
    from chalicelib.accounts.models import AccountFields
    from chalicelib.billing.invoices import service as invoicing
    from chalicelib.core.paging import PageRequest
    from chalicelib.policies import service as policies
    from chalicelib.runtime import wiring
    from chalicelib.storage import keys
    from tests.api.billing.delinquency_support import delinquency_model
    from tests.api.billing.support import billing_tenant
    from tests.builders import system_ctx
    from tests.support.configs import quotes_tenant

    bench.clock.set(START)
    tenant = quotes_tenant(api, token, delinquency_model()) if delinquency else billing_tenant(api, token)
    bench.queue.messages.clear()
    ctx = system_ctx().for_tenant(tenant)
    account = accounts.create_account(ctx, AccountFields(type="PersonAccount", data=ACCOUNT_DATA)).locator
    for _ in range(size):  # one policy a write: an issued policy's records fill much of one TransactWriteItems
        uow = wiring.unit_of_work(ctx)
        policies.add_issued_policy(ctx, uow, fleet_issuance(tenant, account, items))
        uow.commit()
    drain_jobs(bench)

    with WriteProbe(keys.billing_partition(tenant, account)) as probe:
        ran, took = measure(bench, lambda: due_run(bench, tenant, FIRST_GENERATE))
    units = probe.units
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
        f"load average {took.load}; {probe.limits()}",
        flush=True,
    )
    if delinquency:
        fleet_delinquency(bench, tenant, account, invoices)
        bench.clock.set(START)
        return
    rendering_data_size(ctx, invoices[0].locator)
    fleet_payment(bench, tenant, account, invoices)
    bench.clock.set(START)


DUE = datetime(2026, 2, 1, 5, tzinfo=timezone.utc)
"""The first invoice's due time: the grace start of its delinquency (plan Standard: 10 days, issued lapses)."""
GRACE_END = datetime(2026, 2, 11, 5, tzinfo=timezone.utc)


def fleet_delinquency(bench: Bench, tenant: str, account: str, invoices: list[Any]) -> None:
    """The run's invoice falls due unpaid: the due run at its due time opens one delinquency of every policy
    (delinquency/service.py `_opened_in_steps`: its record, then the policies' marks in writes of their own); the
    due run at its grace end lapses each policy (a cancellation from the grace start, issued, its refund billed).
    Each measured: calls, TransactWriteItems, the largest item and transaction, the write units on the account's
    billing partition, our CPU and wall; then the totals checked exactly (the invoice open, each policy's refund
    settled into the account's credit)."""
    from chalicelib.billing import repository as billing_repository
    from chalicelib.billing.delinquency import repository as delinquencies
    from chalicelib.billing.delinquency.models import DelinquencyState
    from chalicelib.billing.invoices import service as invoicing
    from chalicelib.core.paging import PageRequest
    from chalicelib.storage import keys
    from tests.builders import system_ctx

    [invoice] = invoices
    policies = set(invoice.policyLocators)
    partition = keys.billing_partition(tenant, account)

    def report(label: str, took: Any, probe: WriteProbe) -> None:
        print(
            f"  {label}: {took.count} calls ({took.per(1)}), {probe.units['transactions']} TransactWriteItems; "
            f"the billing partition {probe.units['writes']} writes, {probe.units['units']} write units "
            f"({probe.units['units'] / WCU_PER_PARTITION:.2f} s at {WCU_PER_PARTITION} WCU); {probe.limits()}; "
            f"our CPU {took.ours:.2f} s, wall {took.took.wall:.1f} s ({took.emulated.wall:.1f} s in moto); "
            f"load average {took.load}",
            flush=True,
        )

    print(f"the invoice of {len(policies)} policies ({invoice.totalAmount}) falls due unpaid:", flush=True)
    with WriteProbe(partition) as opening:
        ran, opened = measure(bench, lambda: due_run(bench, tenant, DUE))
    runs = ran_results(ran)
    assert not any(r.get("failed") for r in runs), runs
    assert sum(r.get("delinquenciesOpened", 0) for r in runs) == 1, runs
    report("due time: one delinquency opened", opened, opening)
    ctx = system_ctx().for_tenant(tenant)
    [record] = delinquencies.delinquencies_of_account(tenant, account, PageRequest(0, 10)).items
    assert record.delinquencyState == DelinquencyState.IN_GRACE, record
    assert {r.referenceLocator for r in record.references if r.referenceType == "policy"} == policies

    with WriteProbe(partition) as lapsing:
        ran, lapsed = measure(bench, lambda: due_run(bench, tenant, GRACE_END))
    ended = ran_results(ran)
    outcomes = [o for r in ended for o in r.get("graceEnded", [])]
    assert outcomes == ["lapsed"] and not any(r.get("failed") for r in ended), (outcomes, ended[:3])
    report("grace end: every policy lapsed (cancellation issued and billed)", lapsed, lapsing)
    with WriteProbe(partition) as rest:
        _, left = measure(bench, lambda: due_run(bench, tenant, GRACE_END))
    report("grace end, the due run again: what the lapses left due", left, rest)

    [done] = delinquencies.delinquencies_of_account(tenant, account, PageRequest(0, 10)).items
    assert done.delinquencyState == DelinquencyState.LAPSE_TRANSACTION_CREATED, done
    lapses = {r.referenceLocator: r.transactionLocator for r in done.references if r.referenceType == "policy"}
    assert set(lapses) == policies and all(lapses.values()), "a policy not lapsed"
    listed = invoicing.invoices_of(ctx, "account", account, PageRequest(0, 5000), include_zero=True).items
    # The refunds are checked by their sum (and the count printed): since stop 46 one credit invoice holds them all,
    # whether the lapses fit in one write or not (before, 60 policies and more: one a policy).
    opened = [i for i in listed if i.invoiceState == "open"]
    refunds = [i for i in listed if i.invoiceState != "open"]
    assert [i.totalAmount for i in opened] == [invoice.totalAmount], opened
    assert all(i.invoiceState == "settled" and i.totalAmount < 0 for i in refunds), refunds
    assert sum(i.totalAmount for i in refunds) == -invoice.totalAmount, refunds
    credit = billing_repository.credit_balance(tenant, account, "USD").balance
    assert credit == invoice.totalAmount, credit
    print(
        f"  totals: the invoice open ({invoice.totalAmount}), the {len(policies)} refunds settled in "
        f"{len(refunds)} credit invoices ({-invoice.totalAmount}), credit {credit}",
        flush=True,
    )


def rendering_data_size(ctx: Any, locator: str) -> None:
    """The size (as DynamoDB counts it) of the rendering data an invoice document of the invoice would carry:
    over documents/repository.py's RENDERING_DATA_INLINE_BYTES it is kept in S3, not on the instance's record."""
    from chalicelib.billing.invoices import service as invoicing
    from chalicelib.documents import repository as documents_repository
    from chalicelib.documents import service as documents
    from chalicelib.storage import codec

    data = documents._invoice_data(invoicing.invoice_rendering_data(ctx, locator))
    size = codec.item_size(codec.serialize({"renderingData": data}))
    where = "S3" if size > documents_repository.RENDERING_DATA_INLINE_BYTES else "the instance's record"
    print(f"an invoice document's rendering data: {size / 1e6:.2f} MB, kept in {where}", flush=True)
    document_answer_size(data)


def document_answer_size(data: dict[str, Any]) -> None:
    """The size of `GET .../documents/invoices/{l}`'s answer for an instance with this rendering data, whole (as
    before) and as answered (documents/schemas.py: over RENDERING_DATA_RESPONSE_BYTES as stored, left out)."""
    import json

    from chalicelib.core.clock import SystemClock
    from chalicelib.documents import schemas
    from chalicelib.documents.models import Document, DocumentFormat, DocumentState, ReferenceType
    from chalicelib.http.responses import to_json
    from chalicelib.storage import codec

    stored = len(json.dumps(codec.serialize({"renderingData": data}), separators=(",", ":")).encode())
    document = Document(
        locator="01M00000000000000000000000",
        referenceType=ReferenceType.INVOICE,
        referenceLocator="01M00000000000000000000001",
        documentInstanceState=DocumentState.READY,
        documentFormat=DocumentFormat.PDF,
        external=False,
        createdAt=SystemClock().now(),
        renderingData=data,
    ).with_stored_rendering_data_bytes(stored)
    fields = document.model_dump(include=set(schemas.DocumentInstanceResponse.model_fields))
    whole = len(to_json(schemas.DocumentInstanceResponse(**fields)).encode())
    answered = len(to_json(schemas.DocumentInstanceResponse.of(document)).encode())
    print(
        f"its document's GET answer: {answered / 1e6:.4f} MB (whole it would be {whole / 1e6:.2f} MB; the data "
        f"{stored / 1e6:.2f} MB as S3 keeps it, bound {schemas.RENDERING_DATA_RESPONSE_BYTES / 1e6:.1f} MB; "
        "Lambda answers at most 6 MB)",
        flush=True,
    )


def fleet_payment(bench: Bench, tenant: str, account: str, invoices: list[Any]) -> None:
    """The run's invoice read whole, paid in full by one payment and the payment reversed: calls and CPU each."""
    from chalicelib.billing.invoices import service as invoicing
    from chalicelib.billing.payments import service as payments
    from chalicelib.billing.payments.schemas import PaymentCreateRequest
    from tests.builders import system_ctx

    def ctx() -> Any:
        return system_ctx().for_tenant(tenant)

    total = sum((i.totalAmount for i in invoices), Decimal(0))
    from chalicelib.storage import keys

    partition = keys.billing_partition(tenant, account)
    read, reading = measure(bench, lambda: [invoicing.invoice(ctx(), i.locator) for i in invoices])
    request = PaymentCreateRequest(accountLocator=account, type="Check", amount=total, currency="USD")
    made = payments.create_payment(ctx(), request)
    with WriteProbe(partition) as posting:
        posted, post = measure(bench, lambda: payments.post_payment(ctx(), made.locator))
    assert len(posted.applications) == len(invoices) and not posted.creditedAmount, posted
    settled = [invoicing.invoice(ctx(), i.locator) for i in invoices]
    assert all(i.totalRemainingAmount == 0 and i.invoiceState == "settled" for i in settled)
    with WriteProbe(partition) as reversing:
        _, reverse = measure(bench, lambda: payments.reverse_payment(ctx(), made.locator, None))
    reopened = [invoicing.invoice(ctx(), i.locator) for i in invoices]
    assert sum((i.totalRemainingAmount for i in reopened), Decimal(0)) == total
    assert all(item.remainingAmount == item.amount for i in reopened for item in i.invoiceItems)
    print(
        f"its {len(read)} invoice(s) read whole: {reading.count} calls ({reading.per(1)}), our CPU "
        f"{reading.ours * 1000:.0f} ms; paid in full ({total}): post {post.count} calls ({post.per(1)}), our CPU "
        f"{post.ours * 1000:.0f} ms, {posting.units['units']} write units on the partition, {posting.limits()}; "
        f"reversed: {reverse.count} calls ({reverse.per(1)}), our CPU {reverse.ours * 1000:.0f} ms, "
        f"{reversing.units['units']} write units on the partition, {reversing.limits()}",
        flush=True,
    )


if __name__ == "__main__":
    main()
