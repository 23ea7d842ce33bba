import pytest

from tests.support.in_turns import InTurns, in_turns


@pytest.fixture
def admin_locator(api, admin_token) -> str:
    from tests.api.identity.support import whoami
    from tests.support.api import ok

    return ok(whoami(api, admin_token))["locator"]


@pytest.fixture
def dynamodb_in_turns(aws, monkeypatch) -> InTurns:
    return in_turns(monkeypatch)
