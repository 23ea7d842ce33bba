import pytest


@pytest.fixture
def admin_locator(api, admin_token) -> str:
    from tests.api.identity.support import whoami
    from tests.support.api import ok

    return ok(whoami(api, admin_token))["locator"]
