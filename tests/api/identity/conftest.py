import threading
from typing import Any

import pytest


@pytest.fixture
def admin_locator(api, admin_token) -> str:
    from tests.api.identity.support import whoami
    from tests.support.api import ok

    return ok(whoami(api, admin_token))["locator"]


@pytest.fixture
def one_dynamodb_call_at_a_time(aws, monkeypatch):
    """Each DynamoDB call atomic, as the service makes it (moto in process is not thread-safe)."""
    from chalicelib.storage import clients

    client = clients.dynamodb()
    lock = threading.Lock()
    original = client._make_api_call

    def atomic(*args: Any, **kwargs: Any) -> Any:
        with lock:
            return original(*args, **kwargs)

    monkeypatch.setattr(client, "_make_api_call", atomic)
