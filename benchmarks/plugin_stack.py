"""A rating call through `make run`'s HTTP stack (local/run.py): the first price of a configuration version
(cold: its plugin process starts) against later ones (warm: the process is reused).

Starts the real local stack on free ports, creates N tenants with the quotes test configuration and its Python
plugins (tests/support/configs.py: a lookup and a range lookup per vehicle), and per tenant prices M fresh
one-vehicle quotes with `PATCH /quotes/{locator}/price` over HTTP. Each price runs the validation and the rating
plugin. The first price of each tenant is cold; the others are warm. Prints the medians with the load average.

    .venv/bin/python benchmarks/plugin_stack.py [--tenants 5] [--prices 20]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.api.quotes.support import auto, vehicle  # noqa: E402
from tests.e2e.support import LocalStack  # noqa: E402
from tests.support.configs import (  # noqa: E402
    BASE_RATES_CSV,
    QUOTE_PLUGINS,
    VALUE_BANDS_CSV,
    package_with_files,
    quotes_model,
)

PERSON = {
    "type": "PersonAccount",
    "data": {
        "firstName": "Ada",
        "lastName": "Lovelace",
        "email": "ada@example.com",
        "address": {"line1": "12 St James's Square", "city": "London", "postcode": "12345"},
    },
}


def _load() -> str:
    return f"[load {os.getloadavg()[0]:.1f}]"


def _csv_zip(name: str, text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{name}.csv", text)
    return buffer.getvalue()


def _ok(answer: tuple[int, object]) -> dict:
    status, body = answer
    assert status == 200, body
    assert isinstance(body, dict)
    return body


def tenant_with_plugins(stack: LocalStack, token: str) -> str:
    package = package_with_files(quotes_model(), {"plugins/python/auto.py": QUOTE_PLUGINS.encode()})
    tenant = _ok(stack.request("POST", "/config/createTenant?name=bench", token=token, package=package))["locator"]
    for collection, name, text in (
        ("tables", "BaseRates", BASE_RATES_CSV),
        ("rangeTables", "ValueBands", VALUE_BANDS_CSV),
    ):
        _ok(
            stack.request(
                "POST",
                f"/resource/{tenant}/{collection}?{urlencode({'name': name, 'staticName': name})}",
                token=token,
                package=_csv_zip(name, text),
            )
        )
    return tenant


def price_seconds(stack: LocalStack, token: str, tenant: str, account: str) -> float:
    """One fresh quote created (not timed), then priced over HTTP (timed)."""
    quote = _ok(stack.request("POST", f"/policy/{tenant}/quotes", token=token, json_body=auto(account, vehicle())))
    started = time.perf_counter()
    priced = _ok(stack.request("PATCH", f"/policy/{tenant}/quotes/{quote['locator']}/price", token=token))
    seconds = time.perf_counter() - started
    assert priced["quoteState"] == "priced" and len(priced["items"]) == 2, priced
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", type=int, default=5, help="cold calls: one per tenant")
    parser.add_argument("--prices", type=int, default=20, help="prices per tenant (the first one cold)")
    arguments = parser.parse_args()
    os.environ.update({"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "PAS_STAGE": "dev"})
    cold: list[float] = []
    warm: list[float] = []
    with tempfile.TemporaryDirectory() as directory:
        stack = LocalStack(Path(directory) / "state", Path(directory) / "stack.log")
        try:
            token = stack.sign_in()
            for _ in range(arguments.tenants):
                tenant = tenant_with_plugins(stack, token)
                account = _ok(stack.request("POST", f"/policy/{tenant}/accounts", token=token, json_body=PERSON))[
                    "locator"
                ]
                times = [price_seconds(stack, token, tenant, account) for _ in range(arguments.prices)]
                cold.append(times[0])
                warm += times[1:]
        finally:
            stack.kill()
    print(f"PATCH price through local/run.py {_load()}, {arguments.tenants} tenants x {arguments.prices} prices:")
    print(
        f"  cold (first price of a version): median {statistics.median(cold) * 1000:7.1f} ms "
        f"(min {min(cold) * 1000:.1f}, max {max(cold) * 1000:.1f}, n={len(cold)})"
    )
    print(
        f"  warm (later prices):             median {statistics.median(warm) * 1000:7.1f} ms "
        f"(min {min(warm) * 1000:.1f}, max {max(warm) * 1000:.1f}, n={len(warm)})"
    )


if __name__ == "__main__":
    main()
