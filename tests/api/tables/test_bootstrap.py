"""Tables that come with a tenant's configuration package load on tenant creation (the tables.bootstrap
job createTenant enqueues), from the real packages' CSVs."""
from __future__ import annotations

import json
from decimal import Decimal

from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import get_job
from chalicelib.tables import service
from tests.api.configuration.support import create_tenant, json_of, ok
from tests.api.tables.support import record, value_of
from tests.builders import system_ctx
from tests.unit.configuration.zips import FIXTURES, directory_files, fixture_zip, zip_files

MGT_TABLES = FIXTURES / "mgt-commercial" / "bootstrap" / "resources" / "resourceFiles" / "tables"


def created_tenant(api, token, body: bytes, jobs) -> tuple[str, dict]:
    """createTenant, then run the jobs it queued; answers the tenant and the bootstrap steps' results
    added up."""
    tenant = ok(create_tenant(api, token, body))["locator"]
    (message,) = [m for m in jobs.sent if m.tenant == tenant]
    assert message.job_type == JobType.TABLES_BOOTSTRAP
    jobs.drain()
    return tenant, bootstrap_results(tenant, jobs)


def bootstrap_results(tenant: str, jobs) -> dict[str, int]:
    """The created/failed/skipped counts of every bootstrap step the tenant ran (each must have finished)."""
    total = {"created": 0, "failed": 0, "skipped": 0}
    for locator in dict.fromkeys(m.job_locator for m in jobs.sent
                                 if m.tenant == tenant and m.job_type == JobType.TABLES_BOOTSTRAP):
        job = get_job(tenant, locator)
        assert job["status"] == "finished", job
        for outcome in total:
            total[outcome] += job["result"][outcome]
    return total


def statuses(tenant: str) -> dict[str, tuple[str, str, str | None]]:
    return {s.name: (s.resourceType.value, s.status, s.error)
            for s in service.bootstrap_status(system_ctx().for_tenant(tenant))}


def test_the_iag_package_loads_its_underwriting_rules(api, admin_token, jobs):
    tenant, result = created_tenant(api, admin_token, fixture_zip("iag-motor-demo"), jobs)

    assert result == {"created": 1, "failed": 0, "skipped": 0}
    assert statuses(tenant) == {"UWRules01": ("table", "created", None)}
    rule = {"key": ".driver.convictedOfFraudArsonTheft", "condition": "=", "value": "YES", "decision": "reject",
            "message": "Convicted of fraud, arson, or theft"}
    assert value_of(record(api, admin_token, tenant, "table", "UWRules", key=["uwRule", "PersonalAuto", "6"])) == rule
    assert value_of(record(api, admin_token, tenant, "table", "UWRules01", key=["uwRule", "PersonalAuto", "6"],
                           byStaticName="false")) == rule
    download = api.http.get(f"/resource/{tenant}/tables/UWRules01", headers={
        "Authorization": f"Bearer {admin_token}", "Accept": "application/zip"})
    assert download.status_code == 200
    assert service.load_bootstrap(system_ctx().for_tenant(tenant)) == {"created": 0, "failed": 0, "skipped": 1,
                                                                       "remaining": 0}


def test_every_csv_of_mgt_commercial_loads(api, admin_token, jobs):
    tenant, result = created_tenant(api, admin_token, fixture_zip("mgt-commercial"), jobs)

    csvs = sorted(path.stem for path in MGT_TABLES.glob("*.csv"))
    assert len(csvs) == 71
    assert result == {"created": 71, "failed": 0, "skipped": 0}
    assert statuses(tenant) == {name: ("table", "created", None) for name in csvs}
    territory = record(api, admin_token, tenant, "table", "Territory", key=["16055"], date="2021-06-01T00:00:00Z")
    assert value_of(territory) == {"city": "Sarver", "county": "Butler", "state": "PA", "territory": 513}
    assert value_of(record(api, admin_token, tenant, "table", "BaseLCv2", key=["0563", "Building", "Joisted Masonry"]))[
        "buildingGroup1"] == Decimal("0.1180")


def test_an_itemcare_package_with_table_files_loads_its_constraint_and_lookup_tables(api, admin_token, jobs):
    files = directory_files(FIXTURES / "itemcare")
    files["bootstrap/config.json"] = json.dumps({"resources": {
        "resourceInstances": {"Counties01": {"staticName": "Counties"},
                              "StateTaxRates01": {"staticName": "StateTaxRates", "jurisdictions": ["CA"]},
                              "CountyCodes01": {"staticName": "CountyCodes"}},
        "resourceGroups": {"launch": {"selectionStartTime": "2025-07-01T00:00:00Z",
                                      "resourceNames": ["Counties01", "StateTaxRates01", "CountyCodes01"]}}}})
    folder = "bootstrap/resources/resourceFiles"
    files[f"{folder}/constraintTables/Counties01.csv"] = "counties\nAlameda\nMarin\nAlameda\n"
    files[f"{folder}/tables/StateTaxRates01.csv"] = "key,stateTaxRate\nCA,0.0725\n"
    files[f"{folder}/tables/CountyCodes01.csv"] = "countyCode,name\n001,Alameda\n"

    tenant, result = created_tenant(api, admin_token, zip_files(files), jobs)

    assert result == {"created": 2, "failed": 1, "skipped": 0}
    loaded = statuses(tenant)
    assert loaded["Counties01"] == ("constraintTable", "created", None)
    assert loaded["StateTaxRates01"] == ("table", "created", None)
    assert loaded["CountyCodes01"][:2] == ("table", "failed")
    assert loaded["CountyCodes01"][2].startswith("table.columns_mismatch: The CSV header does not match")
    counties = record(api, admin_token, tenant, "constraintTable", "Counties")
    assert json_of(counties) == {"counties": ["Alameda", "Marin"]}
    assert value_of(record(api, admin_token, tenant, "table", "StateTaxRates", key=["CA"], jurisdiction="CA")) == {
        "stateTaxRate": Decimal("0.0725")}
    properties = {"county": {"type": "string", "constraint": {"table": "Counties", "column": "counties", "where": {}}}}
    assert service.evaluate_constraints(system_ctx().for_tenant(tenant), properties, {}) == {
        "county": ["Alameda", "Marin"]}


def test_a_package_without_table_files_queues_no_bootstrap_job(api, admin_token, jobs):
    tenant = ok(create_tenant(api, admin_token, fixture_zip("itemcare")))["locator"]

    assert [m for m in jobs.sent if m.tenant == tenant] == []
    assert service.bootstrap_status(system_ctx().for_tenant(tenant)) == []
