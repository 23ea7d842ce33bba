"""What the in-process benchmarks share (quotes.py, transactions.py, auto_renewal.py): the environment of
an emulated AWS in this process, the vehicles of the quotes test configuration, a JSON request through
`chalice.test.Client` by a signed-in admin, a person account, and a counter of AWS calls (tables.py,
config_deploy.py). A module, not a benchmark: `make bench` runs the scripts whose names do not start with
`_`."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def use_emulated_aws() -> None:
    """Credentials and a region for moto, the test stage (no event settling), no endpoint of a running
    `make run`, and the repository importable. Call before importing anything of the service."""
    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
            "AWS_SESSION_TOKEN": "bench",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1",
            "PAS_STAGE": "test",
            "PAS_EVENT_SETTLE_MS": "0",
        }
    )
    os.environ.pop("PAS_AWS_ENDPOINT_URL", None)
    sys.path.insert(0, str(ROOT))


def vehicles(count: int, with_glass: int) -> list[dict[str, Any]]:
    """PersonalAuto vehicles worth 5,000 + 3,000 n, each with Collision, the first `with_glass` with Glass."""
    return [
        {
            "type": "Vehicle",
            "data": {"vin": f"1HGCM82633A{n:06d}", "value": str(5000 + 3000 * n)},
            "elements": [{"type": "Collision", "coverageTerms": {"Limit": "l50k"}}]
            + ([{"type": "Glass"}] if n < with_glass else []),
        }
        for n in range(count)
    ]


def json_sender(api: Any, headers: dict[str, str]) -> Callable[..., dict[str, Any]]:
    """send(method, path, body=None): the answer of a request that must succeed (200), Decimals kept."""
    import simplejson

    def send(method: str, path: str, body: Any = None) -> dict[str, Any]:
        response = api.http.request(
            method, path, headers=headers, body=b"" if body is None else simplejson.dumps(body).encode()
        )
        assert response.status_code == 200, response.body
        return simplejson.loads(response.body, use_decimal=True)

    return send


def signed_in_admin() -> tuple[str, dict[str, str]]:
    """The settings' admin signed in (at the system's time): its token, and the headers of a JSON request with it.
    Call inside the emulated AWS, once its tables are created."""
    from chalicelib.core.clock import SystemClock
    from chalicelib.core.ids import new_locator
    from chalicelib.identity import service as identity
    from chalicelib.settings import settings

    token, _ = identity.sign_in(
        settings().admin_username, settings().admin_password, SystemClock().now(), new_locator()
    )
    return token, {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}


def person_account(send: Callable[..., dict[str, Any]], tenant: str) -> str:
    """A PersonAccount of the quotes test configuration, created: its locator."""
    return send(
        "POST",
        f"/policy/{tenant}/accounts",
        {
            "type": "PersonAccount",
            "data": {
                "firstName": "Ada",
                "lastName": "Lovelace",
                "email": "ada@example.com",
                "address": {"line1": "12 St James's Square", "city": "London", "postcode": "12345"},
            },
        },
    )["locator"]


class Calls:
    """AWS operations made, per service, counted by a botocore before-call hook."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def attach(self, client: Any, service: str) -> None:
        client.meta.events.register(
            f"before-call.{service}",
            lambda event_name, **_: self.counts.update([f"{service}:{event_name.rsplit('.', 1)[-1]}"]),
        )

    def of(self, service: str) -> dict[str, int]:
        return {name.split(":", 1)[1]: n for name, n in sorted(self.counts.items()) if name.startswith(service)}
