"""What a change costs as its policy ages (issue 28, point 1): the bytes a change's requests read from
DynamoDB, their calls and our CPU, after 1, 10 and 30 earlier transactions.

    .venv/bin/python benchmarks/history_reads.py [--requests N] [--earlier 1 10 30] [--elements 50]

In one process, against one in-process moto (local/lean_moto.py) and through `chalice.test.Client`, with
the tests' fixed clock, as benchmarks/transactions.py: the quotes test configuration, a policy for a year
from 2026-02-01 with 50 elements (1 + 17 vehicles with Collision, 15 of them with Glass), its earlier
transactions the issuance and changes of the first vehicle's value every seventh day from 2026-03-01.
For each of N fresh policies per line, a change of that value effective 2026-12-15 (after every earlier
one) through `create`, `PATCH initialize`, `price` and `issue`, each request's DynamoDB calls counted and
what they answered measured: "read" is the sum of the DynamoDB item sizes of every item a call answered
(GetItem, BatchGetItem, Query: what read units are billed on; authentication's reads included, the same
in every request), "ours" the request's time outside its DynamoDB calls (botocore's before-call to
after-call), median over the N policies. Absolute times are moto's in one Python process: read the
bytes, the counts and the ratios. It runs as it is against a checkout from before issue 28 (copy it in).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from typing import Any

from _in_process import ROOT, json_sender, person_account, signed_in_admin, use_emulated_aws, vehicles

use_emulated_aws()

NOW = datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)
START = "2026-02-01T05:00:00Z"
LATEST_CHANGE = "2026-12-15T12:00:00Z"
STEPS = ("create", "initialize", "price", "issue")
ELEMENTS = {100: (34, 31), 50: (17, 15), 5: (2, 0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3, help="policies (measured changes) per line")
    parser.add_argument(
        "--earlier",
        type=int,
        nargs="+",
        default=[1, 10, 30],
        help="earlier transactions of the policy, the issuance included (at most 42)",
    )
    parser.add_argument("--elements", type=int, choices=sorted(ELEMENTS), default=50)
    options = parser.parse_args()

    import boto3
    from chalice.test import Client
    from moto import mock_aws

    from chalicelib.settings import reload
    from chalicelib.storage import clients, codec
    from local.lean_moto import lean_dynamodb
    from local.resources import create_all

    reload()
    with mock_aws(), lean_dynamodb():
        clients.reset()
        create_all(boto3.session.Session(region_name="us-east-1"))
        from app import app
        from chalicelib.core.clock import FixedClock
        from chalicelib.runtime import wiring
        from tests.support import configs

        wiring.override(clock=FixedClock(NOW))
        token, headers = signed_in_admin()
        calls: list[str] = []
        read = [0]
        inside = [0.0, 0.0]

        def before(event_name: str, **_: Any) -> None:
            calls.append(event_name.rsplit(".", 1)[-1])
            inside[1] = time.perf_counter()

        def after(parsed: dict[str, Any], **_: Any) -> None:
            inside[0] += time.perf_counter() - inside[1]
            answered = [parsed["Item"]] if parsed.get("Item") else list(parsed.get("Items") or [])
            answered += [
                item for found in (parsed.get("Responses") or {}).values() if isinstance(found, list) for item in found
            ]
            read[0] += sum(map(codec.item_size, answered))

        clients.dynamodb().meta.events.register("before-call.dynamodb", before)
        clients.dynamodb().meta.events.register("after-call.dynamodb", after)
        print(f"load average at start: {load()}; {options.requests} policies per line, {options.elements} elements\n")

        with Client(app, stage_name="test", project_dir=str(ROOT)) as api:
            send = json_sender(api, headers)
            tenant = configs.quotes_tenant(api, token)
            account = person_account(send, tenant)

            def change(policy: str, static: str, effective: str, value: int) -> str:
                return send(
                    "PATCH",
                    f"/policy/{tenant}/policies/{policy}/change",
                    [
                        {"action": "params", "effectiveTime": effective},
                        {"action": "modify", "staticLocator": static, "setData": {"value": str(value)}},
                    ],
                )["locator"]

            def policy_with(earlier: int) -> tuple[str, str]:
                quote = send(
                    "POST",
                    f"/policy/{tenant}/quotes",
                    {
                        "productName": "PersonalAuto",
                        "accountLocator": account,
                        "startTime": START,
                        "data": {"channel": "web"},
                        "elements": vehicles(*ELEMENTS[options.elements]),
                    },
                )
                policy = send("PATCH", f"/policy/{tenant}/quotes/{quote['locator']}/issue")["policyLocator"]
                issuance = send("GET", f"/policy/{tenant}/policies/{policy}")["issuedTransactionLocator"]
                segment = send("GET", f"/policy/{tenant}/transactions/{issuance}/segment")
                static = next(e for e in segment["element"]["elements"] if e["type"] == "Vehicle")["staticLocator"]
                first = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
                for n in range(earlier - 1):
                    effective = (first + timedelta(days=7 * n)).strftime("%Y-%m-%dT%H:%M:%SZ")
                    draft = change(policy, static, effective, 30000 + n)
                    send("PATCH", f"/policy/{tenant}/transactions/{draft}/issue")
                return policy, static

            def measured(request: Any, *arguments: Any) -> tuple[Any, tuple[int, float, Counter[str]]]:
                calls.clear()
                read[0] = 0
                inside[0] = 0.0
                started = time.perf_counter()
                answer = request(*arguments)
                return answer, (read[0], time.perf_counter() - started - inside[0], Counter(calls))

            print(f"  {'earlier':>7}  {'request':<10} {'read KiB':>9} {'ours ms':>8}  {'calls':>5}  operations")
            summary: dict[int, dict[str, tuple[float, float]]] = {}
            for earlier in options.earlier:
                lines: dict[str, list[tuple[int, float, Counter[str]]]] = {step: [] for step in STEPS}
                for _ in range(options.requests):
                    policy, static = policy_with(earlier)
                    draft, seen = measured(change, policy, static, LATEST_CHANGE, 39999)
                    lines["create"].append(seen)
                    for step in STEPS[1:]:
                        answer, seen = measured(send, "PATCH", f"/policy/{tenant}/transactions/{draft}/{step}")
                        lines[step].append(seen)
                    assert answer["transactionState"] == "issued", answer
                summary[earlier] = {}
                for step, seen in lines.items():
                    size = statistics.median(s[0] for s in seen) / 1024
                    ours = statistics.median(s[1] for s in seen) * 1000
                    counted = seen[-1][2]
                    summary[earlier][step] = (size, ours)
                    print(
                        f"  {earlier:>7}  {step:<10} {size:9.1f} {ours:8.1f}  {sum(counted.values()):>5}  "
                        + ", ".join(f"{name} {count}" for name, count in sorted(counted.items()))
                    )
            first, last = options.earlier[0], options.earlier[-1]
            print(
                f"\n  {last} / {first} earlier: "
                + ", ".join(
                    f"{step} read x{summary[last][step][0] / summary[first][step][0]:.2f} "
                    f"ours x{summary[last][step][1] / summary[first][step][1]:.2f}"
                    for step in STEPS
                )
            )
            print(f"\nload average at the end: {load()}")


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
