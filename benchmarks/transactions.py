"""Policy transactions' cost (issue 12, "Measured"): DynamoDB round trips and median latency of a change
through create, initialize, price and issue, and of an out-of-sequence issue.

    .venv/bin/python benchmarks/transactions.py [--requests N] [--paging 100 30] [--profile]

In one process, against one in-process moto (local/lean_moto.py) and through `chalice.test.Client`, with
the tests' fixed clock (2026-01-15T09:30Z); the tenant has the quotes test configuration with its rating
plugin (tests/support/configs.py: PersonalAuto, a premium rate per vehicle from two rating tables and a
tax of 25). A policy runs a year from 2026-02-01. Its elements: the root and vehicles, each with its
Collision coverage and some with Glass: 50 = 1 + 17 + 17 + 15, 5 = 1 + 2 + 2. Its earlier transactions:
the issuance and changes of the first vehicle's value effective every seventh day from 2026-03-01, each
created and issued.

- A change: for each of N fresh policies with the given elements and issued transactions, a change of
  the first vehicle's value effective 2026-12-15 (after every earlier one), then `PATCH initialize`,
  `PATCH price`, `PATCH issue` (underwrite, accept, issue), each request timed and its DynamoDB
  operations counted (a botocore `before-call` hook, as the tests' `ddb_calls`).
- An out-of-sequence issue: on each of N fresh policies with the given later changes, a change effective
  2026-02-15 (before all of them) is created and priced, then `PATCH issue` is measured: the later
  changes are reversed and reapplied in one aggregate.

Each line also gives the size of the policy's item collection (the one strongly consistent Query every
transaction request reads; DynamoDB's item size, in which read units and the Query's 1 MB pages count)
before the measured request, and each group what the collection holds. "ours" is the median of the
request's time outside its DynamoDB calls (botocore's before-call to after-call: moto's work and
botocore's), which is what the service itself spends. The counts of the first policy of a line are shown
apart when they differ from the others' (cold caches). Absolute times are moto's in one Python process:
read the counts and the ratios.

`--paging 100 30` adds one change on a 100-element policy (1 + 34 + 34 + 31) with 30 issued transactions,
whose item collection is past DynamoDB's 1 MB page. `--profile` only profiles (cProfile) the four
requests of one change on a 50-element policy with 10 issued transactions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from _in_process import ROOT, json_sender, person_account, signed_in_admin, use_emulated_aws, vehicles

use_emulated_aws()

NOW = datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)
START = "2026-02-01T05:00:00Z"
LATEST_CHANGE = "2026-12-15T12:00:00Z"
EARLY_CHANGE = "2026-02-15T12:00:00Z"
STEPS = ("create", "initialize", "price", "issue")
ELEMENTS = {100: (34, 31), 50: (17, 15), 5: (2, 0)}
"""elements -> (vehicles, of which with Glass)"""


@dataclass
class Measured:
    """One request's latencies and DynamoDB operations over the policies of a line."""

    times: list[float] = field(default_factory=list)
    ours: list[float] = field(default_factory=list)
    calls: list[Counter[str]] = field(default_factory=list)
    sizes: list[tuple[int, int]] = field(default_factory=list)

    def add(self, seconds: float, in_dynamodb: float, calls: list[str], size: tuple[int, int]) -> None:
        self.times.append(seconds)
        self.ours.append(seconds - in_dynamodb)
        self.calls.append(Counter(calls))
        self.sizes.append(size)


def effective_times(count: int) -> list[str]:
    """Every seventh day from 2026-03-01, `count` of them (at most 41: all before LATEST_CHANGE)."""
    assert count <= 41, count
    first = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
    return [(first + timedelta(days=7 * n)).strftime("%Y-%m-%dT%H:%M:%SZ") for n in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5, help="policies (measured requests) per line")
    parser.add_argument(
        "--paging",
        type=int,
        nargs=2,
        metavar=("ELEMENTS", "TRANSACTIONS"),
        help="also one change on one policy of 100, 50 or 5 elements with this many issued "
        "transactions (100 30: its item collection passes 1 MB, so the Query takes two pages)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="one line of each table, 5 elements (tests/architecture/test_benchmarks_run.py)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="only profile (cProfile) each request of one change on a 50-element policy with 10 issued transactions",
    )
    options = parser.parse_args()

    import boto3
    from chalice.test import Client
    from moto import mock_aws

    from chalicelib.settings import reload
    from chalicelib.storage import clients
    from local.lean_moto import lean_dynamodb
    from local.resources import create_all

    reload()
    with mock_aws(), lean_dynamodb():
        clients.reset()
        create_all(boto3.session.Session(region_name="us-east-1"))
        from app import app
        from chalicelib.core.clock import FixedClock
        from chalicelib.runtime import wiring
        from chalicelib.storage import codec, keys, table
        from tests.support import configs

        wiring.override(clock=FixedClock(NOW))
        token, headers = signed_in_admin()
        calls: list[str] = []
        inside = [0.0, 0.0]  # seconds inside DynamoDB calls since cleared; when the current call began

        def before(event_name: str, **_: Any) -> None:
            calls.append(event_name.rsplit(".", 1)[-1])
            inside[1] = time.perf_counter()

        def after(**_: Any) -> None:
            inside[0] += time.perf_counter() - inside[1]

        clients.dynamodb().meta.events.register("before-call.dynamodb", before)
        clients.dynamodb().meta.events.register("after-call.dynamodb", after)
        print(f"load average at start: {load()}; {options.requests} policies per line\n")

        with Client(app, stage_name="test", project_dir=str(ROOT)) as api:
            send = json_sender(api, headers)

            tenant = configs.quotes_tenant(api, token)
            account = person_account(send, tenant)

            def items_of(policy: str) -> list[dict[str, Any]]:
                """The policy's item collection as DynamoDB answers it (typed attribute values)."""
                found: list[dict[str, Any]] = []
                start: dict[str, Any] | None = None
                while True:
                    answer = clients.dynamodb().query(
                        TableName=table.gateway().table_name,
                        KeyConditionExpression="PK = :pk",
                        ConsistentRead=True,
                        ExpressionAttributeValues={":pk": {"S": keys.policy_partition(tenant, policy)}},
                        **({"ExclusiveStartKey": start} if start else {}),
                    )
                    found += answer["Items"]
                    start = answer.get("LastEvaluatedKey")
                    if not start:
                        return found

            def collection(policy: str) -> tuple[int, int]:
                """(items, bytes by DynamoDB's item size) of the policy's item collection."""
                items = items_of(policy)
                return len(items), sum(map(codec.item_size, items))

            def composition(policy: str) -> None:
                """What the policy's item collection holds: KiB by kind of item, and by attribute."""
                by_entity: Counter[str] = Counter()
                count: Counter[str] = Counter()
                by_field: Counter[str] = Counter()
                for item in items_of(policy):
                    entity = item.get("entity", {}).get("S", "?")
                    by_entity[entity] += codec.item_size(item)
                    count[entity] += 1
                    for name, value in item.items():
                        by_field[f"{entity}.{name}"] += codec.item_size({name: value})
                print(
                    "  item collection: "
                    + ", ".join(f"{count[e]} {e} {size / 1024:.0f} KiB" for e, size in by_entity.most_common())
                )
                print(
                    "  largest attributes: "
                    + ", ".join(f"{name} {size / 1024:.0f} KiB" for name, size in by_field.most_common(5))
                )

            def change(policy: str, static: str, effective: str, value: int, base: str | None = None) -> str:
                suffix = f"?baseLocator={base}" if base else ""
                return send(
                    "PATCH",
                    f"/policy/{tenant}/policies/{policy}/change{suffix}",
                    [
                        {"action": "params", "effectiveTime": effective},
                        {"action": "modify", "staticLocator": static, "setData": {"value": str(value)}},
                    ],
                )["locator"]

            def policy_with(elements: int, earlier_changes: list[str]) -> tuple[str, str]:
                """A fresh policy issued from a quote, with `earlier_changes` issued; (its locator, the first
                vehicle's static locator)."""
                quote = send(
                    "POST",
                    f"/policy/{tenant}/quotes",
                    {
                        "productName": "PersonalAuto",
                        "accountLocator": account,
                        "startTime": START,
                        "data": {"channel": "web"},
                        "elements": vehicles(*ELEMENTS[elements]),
                    },
                )
                policy = send("PATCH", f"/policy/{tenant}/quotes/{quote['locator']}/issue")["policyLocator"]
                issuance = send("GET", f"/policy/{tenant}/policies/{policy}")["issuedTransactionLocator"]
                segment = send("GET", f"/policy/{tenant}/transactions/{issuance}/segment")
                static = next(e for e in segment["element"]["elements"] if e["type"] == "Vehicle")["staticLocator"]
                for position, effective in enumerate(earlier_changes):
                    draft = change(policy, static, effective, 6000 + 1000 * position)
                    send("PATCH", f"/policy/{tenant}/transactions/{draft}/issue")
                return policy, static

            def timed(measured: Measured, policy: str, request: Callable[..., Any], *arguments: Any) -> Any:
                """request(*arguments), timed and its DynamoDB operations counted."""
                size = collection(policy)
                calls.clear()
                inside[0] = 0.0
                started = time.perf_counter()
                answer = request(*arguments)
                measured.add(time.perf_counter() - started, inside[0], list(calls), size)
                return answer

            def a_change(elements: int, transactions: int, policies: int) -> tuple[dict[str, Measured], str]:
                lines = {step: Measured() for step in STEPS}
                policy = ""
                for _ in range(policies):
                    policy, static = policy_with(elements, effective_times(transactions - 1))
                    draft = timed(lines["create"], policy, change, policy, static, LATEST_CHANGE, 30000)
                    for step in STEPS[1:]:
                        timed(lines[step], policy, send, "PATCH", f"/policy/{tenant}/transactions/{draft}/{step}")
                    state = send("GET", f"/policy/{tenant}/transactions/{draft}")["transactionState"]
                    assert state == "issued", state
                return lines, policy

            def out_of_sequence(elements: int, later: int) -> Measured:
                measured = Measured()
                for _ in range(options.requests):
                    policy, static = policy_with(elements, effective_times(later))
                    draft = change(policy, static, EARLY_CHANGE, 30000)
                    send("PATCH", f"/policy/{tenant}/transactions/{draft}/price")
                    issued = timed(measured, policy, send, "PATCH", f"/policy/{tenant}/transactions/{draft}/issue")
                    assert issued["transactionState"] == "issued", issued
                    aggregate = send("GET", f"/policy/{tenant}/policies/{policy}")["issuedTransactionLocator"]
                    parts = send("GET", f"/policy/{tenant}/transactions/{aggregate}")
                    assert parts["transactionCategory"] == "aggregate", parts
                return measured

            if options.profile:
                profile(policy_with, change, send, tenant)
                return
            print("A change on a policy (create, initialize, price, issue); DynamoDB operations of one request")
            print(
                f"  {'elements':>8} {'earlier':>7}  {'request':<10} {'median':>9} {'ours':>10}  {'calls':>5}  "
                f"{'operations':<60} collection"
            )
            shapes = [(50, 10, options.requests), (5, 10, options.requests), (50, 1, options.requests)]
            if options.smoke:
                shapes = [(5, 2, 1)]
            for elements, transactions, policies in shapes + ([(*options.paging, 1)] if options.paging else []):
                lines, last = a_change(elements, transactions, policies)
                for step, measured in lines.items():
                    report(f"  {elements:>8} {transactions:>7}  {step:<10}", measured)
                composition(last)
            print(f"\nAn out-of-sequence issue (effective {EARLY_CHANGE[:10]}, before every later change)")
            print(
                f"  {'elements':>8} {'later':>7}  {'request':<10} {'median':>9} {'ours':>10}  {'calls':>5}  "
                f"{'operations':<60} collection"
            )
            for elements, later in ((5, 1),) if options.smoke else ((50, 5), (5, 5), (50, 1)):
                report(f"  {elements:>8} {later:>7}  {'issue':<10}", out_of_sequence(elements, later))
            print(f"\nload average at the end: {load()}")


def profile(
    policy_with: Callable[..., tuple[str, str]],
    change: Callable[..., str],
    send: Callable[..., dict[str, Any]],
    tenant: str,
) -> None:
    import cProfile
    import pstats

    policy, static = policy_with(50, effective_times(9))
    for step in STEPS:
        profiler = cProfile.Profile()
        profiler.enable()
        if step == "create":
            draft = change(policy, static, LATEST_CHANGE, 30000)
        else:
            send("PATCH", f"/policy/{tenant}/transactions/{draft}/{step}")
        profiler.disable()
        print(f"== {step}")
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)


def report(label: str, measured: Measured) -> None:
    steady = measured.calls[1:] or measured.calls
    distinct = sorted({tuple(sorted(c.items())) for c in steady})
    shown = "; ".join(", ".join(f"{name} {count}" for name, count in each) for each in distinct)
    totals = "/".join(str(sum(count for _, count in each)) for each in distinct)
    items, size = measured.sizes[-1]
    median, ours = statistics.median(measured.times) * 1000, statistics.median(measured.ours) * 1000
    print(f"{label} {median:7.1f} ms {ours:7.1f} ms  {totals:>5}  {shown:<60} {items} items, {size / 1024:.0f} KiB")
    if measured.calls[0] not in steady:
        first = ", ".join(f"{name} {count}" for name, count in sorted(measured.calls[0].items()))
        print(f"  {'':>8} {'':>7}  {'(first)':<10} {'':>20}  {sum(measured.calls[0].values()):>5}  {first}")


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
