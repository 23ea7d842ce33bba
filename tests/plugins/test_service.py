"""The plugins service over deployed configurations: plugins come from the version deployed through
the API, a product without a plugin gets nothing, a failure raises, and a redeploy replaces the
tenant's process while a deployment that does not parse leaves the previous plugins serving."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest

from chalicelib.plugins import service
from chalicelib.plugins.local import Limits, LocalProcessRunner
from chalicelib.plugins.models import Charge, PluginFailure, ValidationItem
from tests.api.configuration.support import deploy, minimal_model, package
from tests.plugins.conftest import FakeHost
from tests.plugins.support import deployed, request
from tests.support.api import ok

PLUGINS = """
import os
import pas

def rate_Auto(request):
    vehicle = request["segment"]["element"]["elements"][0]
    row = pas.lookup("Rates", [vehicle["data"]["vin"][:3]])
    return {"items": [{"elementLocator": vehicle["locator"], "chargeType": "premium", "rate": row["rate"]}]}

def validate(request):
    return {"errors": [{"locator": e["locator"], "message": "vin too short"}
                       for e in request["segment"]["element"]["elements"] if len(e["data"]["vin"]) < 3]}

PROCESS = os.urandom(8).hex()  # every sandboxed process is PID 2 of its own namespace

def underwrite_Auto(request):
    return {"flags": [{"level": "block", "note": "process " + PROCESS}]}
"""


@pytest.fixture
def runner() -> Iterator[LocalProcessRunner]:
    local = LocalProcessRunner(Limits(timeout_seconds=2))
    service.use_runner(local)
    yield local
    service.use_runner(None)
    local.close()


def test_the_deployed_plugins_validate_rate_and_underwrite(api, admin_token, runner):
    ctx, version = deployed(api, admin_token, {"plugins/python/auto.py": PLUGINS.encode()})
    host = FakeHost(tables={"Rates": {("1HG",): {"rate": Decimal("1000.005")}}})
    charges = minimal_model()["charges"]

    errors = service.validate(ctx, version, request(ctx.tenant, "1H"), host)
    priced = service.rate(ctx, version, request(ctx.tenant, "1HGCM82633A004352"), host, charges)
    flags = service.underwrite(ctx, version, request(ctx.tenant, "1HGCM82633A004352"), host)

    assert errors == [ValidationItem("V1", "Vehicle", ("vin too short",))]
    assert priced == [Charge("V1", "SV1", "premium", "premium", Decimal("500.00"), Decimal("1000.005"))]
    assert [(flag.level, flag.element_locator) for flag in flags] == [("block", None)]
    assert runner.processes(ctx.tenant, version) == 1


def test_a_product_without_plugins_gets_no_errors_charges_or_flags(api, admin_token, runner):
    ctx, version = deployed(api, admin_token, None)

    assert service.validate(ctx, version, request(ctx.tenant, "x"), FakeHost()) == []
    assert service.rate(ctx, version, request(ctx.tenant, "x"), FakeHost(), minimal_model()["charges"]) == []
    assert service.underwrite(ctx, version, request(ctx.tenant, "x"), FakeHost()) == []
    assert runner.processes(ctx.tenant, version) == 0


def test_a_failing_plugin_raises_a_failure_with_a_clear_message(api, admin_token, runner):
    ctx, version = deployed(api, admin_token, {"plugins/python/auto.py": PLUGINS.encode()})

    with pytest.raises(PluginFailure) as raised:
        service.rate(ctx, version, request(ctx.tenant, "ZZZ"), FakeHost(tables={"Rates": {}}), {"premium": {}})

    assert raised.value.code == "plugin.failed"
    assert raised.value.message == (
        "The plugin function rate_Auto failed: TypeError: 'NoneType' object is not "
        "subscriptable (plugins/python/auto.py line 8)"
    )


def test_a_redeploy_replaces_the_process_and_a_module_that_does_not_parse_changes_nothing(api, admin_token, runner):
    ctx, first = deployed(api, admin_token, {"plugins/python/auto.py": PLUGINS.encode()})
    before = service.underwrite(ctx, first, request(ctx.tenant, "1HG"), FakeHost())

    broken = ok(
        deploy(
            api,
            admin_token,
            ctx.tenant,
            package(
                files={
                    "plugins/python/auto.py": PLUGINS.encode(),
                    "plugins/python/extra.py": b"def helper(:\n    pass\n",
                }
            ),
        )
    )
    unchanged = service.underwrite(ctx, first, request(ctx.tenant, "1HG"), FakeHost())
    redeployed = ok(
        deploy(
            api,
            admin_token,
            ctx.tenant,
            package(files={"plugins/python/auto.py": PLUGINS.replace('"block"', '"decline"').encode()}),
        )
    )
    second = redeployed["deploymentResult"]["metadata"]["latestVersion"]
    after = service.underwrite(ctx, second, request(ctx.tenant, "1HG"), FakeHost())

    assert broken["deploymentResult"]["isSuccess"] is False
    assert broken["deploymentResult"]["errors"] == ["plugins/python/extra.py line 1: invalid syntax"]
    assert broken["deploymentResult"]["metadata"]["latestVersion"] == first
    assert unchanged == before
    assert [flag.level for flag in after] == ["decline"]
    assert after[0].note != before[0].note  # another process: the note carries its identity
    assert (runner.processes(ctx.tenant, first), runner.processes(ctx.tenant, second)) == (0, 1)
