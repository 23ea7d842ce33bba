"""A warm `rate` call through the local plugin runner: 20 elements, 10 table lookups.

The plugin prices 20 vehicles with 5 lookups and 5 range lookups answered by an in-memory HostApi
(so the numbers are the runner's own cost: process channel, JSON both ways, the sandbox's audit
hook, and rating the answer into charges; on AWS add the table reads the HostApi makes). Prints the
first (cold) call, then the median and p99 of warm calls, with and without turning the answer into
charges. The same price through the quotes API, with and without the plugin, comes with quotes.

    .venv/bin/python benchmarks/plugins.py [--calls N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chalicelib.plugins.contract import apply_rating, build_request  # noqa: E402
from chalicelib.plugins.local import LocalProcessRunner  # noqa: E402

PLUGIN = b"""
import pas

def rate_Auto(request):
    state = request["account"]["data"]["state"]
    vehicles = request["segment"]["element"]["elements"]
    classes = {}
    for name in ("sedan", "truck", "coupe", "van", "suv"):
        classes[name] = pas.lookup("BaseRates", [state, name])
    factors = [pas.range_lookup("AgeBands", [state], age)["factor"] for age in (18, 25, 40, 60, 80)]
    items = []
    for position, vehicle in enumerate(vehicles):
        base = classes[vehicle["data"]["class"]]
        items.append({"elementLocator": vehicle["locator"], "chargeType": "premium",
                      "rate": base["rate"] * factors[position % 5]})
    return {"items": items}
"""
CLASSES = ("sedan", "truck", "coupe", "van", "suv")
NOW = datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)


class MemoryHost:
    def lookup(self, table: str, key: list[str], date: str | None) -> dict[str, Any]:
        return {"rate": Decimal("800") + CLASSES.index(key[1]) * 25}

    def range_lookup(self, table: str, key: list[str], bound: Decimal, date: str | None) -> dict[str, Any]:
        return {"factor": Decimal("1.5") - bound / 100}

    def now(self) -> datetime:
        return NOW


def rating_request() -> dict[str, Any]:
    vehicles = [
        {
            "locator": f"V{n:02d}",
            "staticLocator": f"S{n:02d}",
            "type": "Vehicle",
            "data": {"class": CLASSES[n % 5], "vin": f"1HGCM82633A{n:06d}", "year": 2010 + n % 15},
        }
        for n in range(20)
    ]
    return build_request(
        tenant_locator="bench",
        product_name="Auto",
        kind="quote",
        locator="Q1",
        transaction_category=None,
        start_time=NOW,
        end_time="2027-01-15T09:30:00.000Z",
        currency="USD",
        timezone="America/New_York",
        duration_basis="years",
        account={"locator": "A1", "type": "Person", "data": {"state": "NY"}},
        static={},
        segment_start=NOW,
        segment_end="2027-01-15T09:30:00.000Z",
        duration=Decimal("1"),
        element={"locator": "P1", "type": "Auto", "elements": vehicles},
    )


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="warm calls measured")
    calls = parser.parse_args().calls
    runner = LocalProcessRunner()
    files = {"plugins/python/rating.py": PLUGIN}
    host, request = MemoryHost(), rating_request()
    charges = {"premium": {"category": "premium"}}
    try:
        started = time.perf_counter()
        first = runner.call("bench", "v1", files, "rate_Auto", request, host)
        cold = time.perf_counter() - started
        assert isinstance(first, dict) and len(apply_rating(first, request, charges)) == 20, first
        for label, rate_it in (("warm rate call", False), ("warm rate call + charges", True)):
            times = []
            for _ in range(calls):
                started = time.perf_counter()
                result = runner.call("bench", "v1", files, "rate_Auto", request, host)
                if rate_it:
                    apply_rating(result, request, charges)
                times.append(time.perf_counter() - started)
            print(
                f"{label:<28} median {statistics.median(times) * 1000:6.2f} ms   "
                f"p99 {percentile(times, 0.99) * 1000:6.2f} ms   ({calls} calls)"
            )
        print(f"{'cold (process start + call)':<28} {cold * 1000:13.2f} ms")
    finally:
        runner.close()


if __name__ == "__main__":
    main()
