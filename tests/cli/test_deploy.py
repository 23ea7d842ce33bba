"""`pas config deploy`: a real package zipped, deployed and its bootstrap followed table by table; with --json the
service's answer; a broken package's errors each named by its file and field, on deploy and --validate-only."""

from __future__ import annotations

import json
import shutil
import zipfile

from tests.cli.conftest import GADGETCOVER
from tests.e2e.support import ROOT, big_package

IAG = ROOT / "tests" / "fixtures" / "socotra-configs" / "iag-motor-demo"


def test_a_real_package_deploys_and_its_table_loads_with_progress(signed_in, local_stack):
    done = signed_in("config", "deploy", str(IAG), "--create", "IAG Motor")

    assert done.returncode == 0, done.stdout + done.stderr
    first, *progress = done.stdout.splitlines()
    assert first.startswith("deployed version ") and " to tenant IAG Motor (" in first
    tenant = first.rsplit("(", 1)[1].rstrip(")")
    status, resources = local_stack.request(
        "GET", f"/resource/{tenant}/resources/bootstrap", token=local_stack.sign_in()
    )
    assert status == 200 and [
        (r["resourceType"], r["name"], r["status"]) for r in resources if r["resourceType"] == "table"
    ] == [("table", "UWRules01", "created")]
    shown = {f"{r['resourceType']} {r['name']}: created" for r in resources}
    assert {"table UWRules01: created", "staticDocument SR2201: created"} <= shown
    assert shown <= set(progress) <= shown | {"table UWRules01: queued"}


def test_with_json_it_prints_the_deployment_result_as_answered_and_redeploys_to_a_tenant(
    signed_in, local_stack, tmp_path
):
    created = signed_in("config", "deploy", str(GADGETCOVER), "--create", "GadgetCover", "--json")

    assert created.returncode == 0, created.stderr
    result = json.loads(created.stdout)
    assert set(result) == {"locator", "name", "bootstrapResult", "deploymentResult"}
    assert (result["name"], result["bootstrapResult"], result["deploymentResult"]["isSuccess"]) == (
        "GadgetCover",
        {"status": "queued", "error": ""},
        True,
    )
    assert (
        result["deploymentResult"]["metadata"]["implementedPlugins"]["rating:GadgetCover"]
        == "plugins/python/gadgets.py:rate_GadgetCover"
    )
    token = local_stack.sign_in()
    _, tables = local_stack.request("GET", f"/resource/{result['locator']}/resources/bootstrap", token=token)
    assert [t["status"] for t in tables] == ["created"]  # waited for before printing

    wrapped = tmp_path / "gadgetcover.zip"  # as `python3 -m zipfile -c` makes it: one wrapping folder
    with zipfile.ZipFile(wrapped, "w") as archive:
        for path in sorted(GADGETCOVER.rglob("*")):
            if path.is_file():
                archive.write(path, f"gadgetcover/{path.relative_to(GADGETCOVER).as_posix()}")
    again = signed_in("config", "deploy", str(wrapped), "--tenant", result["locator"], "--json")
    assert again.returncode == 0, again.stderr
    redeployed = json.loads(again.stdout)
    assert redeployed["locator"] == result["locator"]
    assert (
        redeployed["deploymentResult"]["metadata"]["latestVersion"]
        != result["deploymentResult"]["metadata"]["latestVersion"]
    )
    _, metadata = local_stack.request("GET", f"/config/{result['locator']}/deployments", token=token)
    assert metadata["metadata"]["latestVersion"] == redeployed["deploymentResult"]["metadata"]["latestVersion"]


def broken_package(tmp_path):
    """The example package with four mistakes, each in a file of its own."""
    package = tmp_path / "broken"
    shutil.copytree(GADGETCOVER, package)

    def edit(relative, change):
        path = package / relative
        body = json.loads(path.read_text())
        change(body)
        path.write_text(json.dumps(body, indent=2))

    edit("config.json", lambda body: body.update(defaultCurrency=5))
    edit("products/GadgetCover/config.json", lambda body: body.update(contents=["Gizmo+"]))
    edit("exposures/Gadget/config.json", lambda body: body["data"]["value"].update(type="money"))
    edit("installmentPlans/Monthly/config.json", lambda body: body.update(cadence="fortnightly"))
    return package


EXPECTED_ERRORS = [
    "config.json: defaultCurrency: expected a currency code, got number 5",
    "exposures/Gadget/config.json: data.value.type: 'money' is neither a built-in type",
    "installmentPlans/Monthly/config.json: cadence: 'fortnightly' is not one of none, fullPay,",
    "products/GadgetCover/config.json: contents[0]: 'Gizmo' is not defined in coverages, exposures,",
]


def test_a_broken_package_names_the_file_and_field_of_each_error(signed_in, local_stack, tmp_path):
    package = broken_package(tmp_path)

    validated = signed_in("config", "deploy", str(package), "--validate-only")
    deployed = signed_in("config", "deploy", str(package), "--create", "Broken")

    for done in (validated, deployed):
        assert done.returncode == 6
        summary, *lines = done.stderr.splitlines()
        assert summary == "error: the package has 4 error(s)"
        assert len(lines) == 4 and all(line.startswith(expected) for line, expected in zip(lines, EXPECTED_ERRORS)), (
            lines
        )
    assert "deployed" not in deployed.stdout

    as_json = signed_in("config", "deploy", str(package), "--validate-only", "--json")
    assert as_json.returncode == 6
    report = json.loads(as_json.stdout)
    assert report["isSuccess"] is False
    assert [error.split(":")[0] for error in report["errors"]] == [
        "defaultCurrency",
        "exposures.Gadget.data.value.type",
        "installmentPlans.Monthly.cadence",
        "products.GadgetCover.contents[0]",
    ]

    valid = signed_in("config", "deploy", str(GADGETCOVER), "--validate-only")
    assert (valid.returncode, valid.stdout) == (0, "the package is valid\n")
    neither = signed_in("config", "deploy", str(GADGETCOVER))
    assert neither.returncode == 1
    assert "give either --tenant LOCATOR or --create NAME" in neither.stderr


def test_a_package_over_the_direct_limit_is_validated_created_and_deployed_through_uploads(
    signed_in, local_stack, tmp_path
):
    big, notes = big_package()  # 11 MB: the service refuses it as a body (tests/e2e/test_uploads.py)
    source = tmp_path / "big.zip"
    source.write_bytes(big)

    valid = signed_in("config", "deploy", str(source), "--validate-only")
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert valid.stdout.strip() == "the package is valid"
    created = signed_in("config", "deploy", str(source), "--create", "Big tables", "--json")
    assert created.returncode == 0, created.stderr
    result = json.loads(created.stdout)
    token = local_stack.sign_in()
    _, row = local_stack.request(
        "GET",
        f"/resource/{result['locator']}/tables/GadgetRates2026/record?key=gadget3&byStaticName=false",
        token=token,
    )
    assert row["value"]["note"] == notes["gadget3"]  # the bootstrap table of the uploaded package, waited for
    deployed = signed_in("config", "deploy", str(source), "--tenant", result["locator"], "--json")
    assert deployed.returncode == 0, deployed.stderr
    assert json.loads(deployed.stdout)["deploymentResult"]["isSuccess"] is True
