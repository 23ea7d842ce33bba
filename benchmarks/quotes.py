"""The quote flow's cost: DynamoDB round trips and median latency of creating an account, creating a
50-element quote, pricing it and issuing it, through the API; and a price through a warm rating
plugin (18 table lookups per call) against the same price without plugins.

    .venv/bin/python benchmarks/quotes.py [--requests N]

In one process, against one in-process moto and through `chalice.test.Client`; the quote is
PersonalAuto of the tests' configuration (tests/support/configs.py) with 17 vehicles, 15 of them with
a Glass coverage: 1 + 17 + 17 + 15 = 50 elements. Issuing is measured from `priced` (underwrite,
accept and issue in one request) for a 50-element and a 3-element quote: its round trips must not grow
with the tree. Absolute times are moto's; read the counts and the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from _in_process import ROOT, json_sender, person_account, signed_in_admin, use_emulated_aws, vehicles

use_emulated_aws()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=30)
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
        from tests.support import configs

        token, headers = signed_in_admin()
        calls: list[str] = []
        clients.dynamodb().meta.events.register(
            "before-call.dynamodb", lambda event_name, **_: calls.append(event_name.rsplit(".", 1)[-1])
        )

        with Client(app, stage_name="test", project_dir=str(ROOT)) as api:
            send = json_sender(api, headers)

            def measure(label: str, prepare: Callable[[], Any], request: Callable[[Any], Any]) -> None:
                times, per_call = [], Counter()
                for _ in range(options.requests):
                    argument = prepare()
                    calls.clear()
                    started = time.perf_counter()
                    request(argument)
                    times.append(time.perf_counter() - started)
                    per_call = Counter(calls)
                print(
                    f"  {label:<44} {statistics.median(times) * 1000:8.1f} ms   {sum(per_call.values()):3d}   "
                    f"{dict(sorted(per_call.items()))}"
                )

            plugged = configs.quotes_tenant(api, token)
            plain = configs.quotes_tenant(api, token, plugins=None)
            account = {tenant: person_account(send, tenant) for tenant in (plugged, plain)}
            big = {
                "productName": "PersonalAuto",
                "startTime": "2026-02-01T05:00:00Z",
                "data": {"channel": "web"},
                "elements": vehicles(17, 15),
            }
            small = {**big, "elements": vehicles(1, 1)}

            def quote(tenant: str, body: dict[str, Any], state: str | None = None) -> str:
                created = send("POST", f"/policy/{tenant}/quotes", {**body, "accountLocator": account[tenant]})
                locator = created["locator"]
                if state:
                    send("PATCH", f"/policy/{tenant}/quotes/{locator}/{state}")
                return locator

            priced = send("PATCH", f"/policy/{plugged}/quotes/{quote(plugged, big)}/price")
            assert len(priced["items"]) == 18, priced
            print(f"{options.requests} requests each; median latency, DynamoDB calls of one request\n")
            print(f"  {'request':<44} {'median':>11}   {'calls'}")
            measure("POST accounts", lambda: None, lambda _: person_account(send, plain))
            measure("POST quotes (50 elements)", lambda: None, lambda _: quote(plain, big))
            measure(
                "PATCH price, no plugin (50 elements)",
                lambda: quote(plain, big),
                lambda q: send("PATCH", f"/policy/{plain}/quotes/{q}/price"),
            )
            measure(
                "PATCH price, warm plugin (50 elements)",
                lambda: quote(plugged, big),
                lambda q: send("PATCH", f"/policy/{plugged}/quotes/{q}/price"),
            )
            measure(
                "PATCH price again, warm plugin (50 elements)",
                lambda: quote(plugged, big, "price"),
                lambda q: send("PATCH", f"/policy/{plugged}/quotes/{q}/price"),
            )
            measure(
                "PATCH issue from priced (50 elements)",
                lambda: quote(plain, big, "price"),
                lambda q: send("PATCH", f"/policy/{plain}/quotes/{q}/issue"),
            )
            measure(
                "PATCH issue from priced (3 elements)",
                lambda: quote(plain, small, "price"),
                lambda q: send("PATCH", f"/policy/{plain}/quotes/{q}/issue"),
            )
            measure(
                "PATCH issue from draft, warm plugin (50)",
                lambda: quote(plugged, big),
                lambda q: send("PATCH", f"/policy/{plugged}/quotes/{q}/issue"),
            )

            issued = send("PATCH", f"/policy/{plain}/quotes/{quote(plain, big, 'price')}/issue")
            policy = send("GET", f"/policy/{plain}/policies/{issued['policyLocator']}")
            transaction = policy["issuedTransactionLocator"]
            reads = {
                "GET policy snapshot (50 elements)": (
                    f"/policy/{plain}/policies/{policy['locator']}/snapshot?date=2026-06-01T00:00:00Z"
                ),
                "GET transaction": f"/policy/{plain}/transactions/{transaction}",
                "GET transaction segment (50 elements)": f"/policy/{plain}/transactions/{transaction}/segment",
                "GET segment (50 elements)": f"/policy/{plain}/transactions/segments/{policy['latestSegmentLocator']}",
                "GET term": f"/policy/{plain}/terms/{policy['latestTermLocator']}",
                "GET issued transactions": f"/policy/{plain}/policies/{policy['locator']}/issuedTransactions/list",
            }
            for label, path in reads.items():
                measure(label, lambda: None, lambda _, path=path: send("GET", path))


if __name__ == "__main__":
    main()
