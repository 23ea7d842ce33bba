"""Tables that come with a tenant's configuration package load on tenant creation (the tables.bootstrap
job createTenant enqueues), from the real packages' CSVs; GET /resource/{tenantLocator}/resources/bootstrap
says how far loading them has come (OpenAPI getBootstrapStatus)."""

from __future__ import annotations

import json
from decimal import Decimal

from chalicelib.runtime.job_types import JobType
from chalicelib.tables import service
from tests.api.configuration.support import create_tenant, json_of, ok
from tests.api.tables.support import MGT_TABLES, bootstrap, bootstrap_results, record, statuses, value_of
from tests.builders import system_ctx
from tests.support.jobs import lose_every_message_until_given_up
from tests.unit.configuration.zips import FIXTURES, directory_files, fixture_zip, zip_files


def created_tenant(api, token, body: bytes, jobs) -> tuple[str, dict]:
    """createTenant, then run the jobs it queued; answers the tenant and the bootstrap steps' results
    added up."""
    tenant = ok(create_tenant(api, token, body))["locator"]
    (message,) = [m for m in jobs.sent if m.tenant == tenant]
    assert message.job_type == JobType.TABLES_BOOTSTRAP
    jobs.drain()
    return tenant, bootstrap_results(tenant, jobs)


def test_the_iag_package_loads_its_underwriting_rules(api, admin_token, jobs):
    tenant, result = created_tenant(api, admin_token, fixture_zip("iag-motor-demo"), jobs)

    assert result == {"created": 1, "failed": 0, "skipped": 0}
    assert statuses(api, admin_token, tenant) == {
        "UWRules01": ("table", "created", None),
        "invoiceDoc_v1": ("documentTemplate", "created", None),
        **{name: ("staticDocument", "created", None) for name in ("Disclosure01", "Forms01", "SR2201")},
    }
    rule = {
        "key": ".driver.convictedOfFraudArsonTheft",
        "condition": "=",
        "value": "YES",
        "decision": "reject",
        "message": "Convicted of fraud, arson, or theft",
    }
    assert value_of(record(api, admin_token, tenant, "table", "UWRules", key=["uwRule", "PersonalAuto", "6"])) == rule
    assert (
        value_of(
            record(
                api,
                admin_token,
                tenant,
                "table",
                "UWRules01",
                key=["uwRule", "PersonalAuto", "6"],
                byStaticName="false",
            )
        )
        == rule
    )
    download = api.http.get(
        f"/resource/{tenant}/tables/UWRules01",
        headers={"Authorization": f"Bearer {admin_token}", "Accept": "application/zip"},
    )
    assert download.status_code == 200
    assert service.load_bootstrap(system_ctx().for_tenant(tenant)) == {
        "created": 0,
        "failed": 0,
        "skipped": 1,
        "remaining": 0,
    }


def test_every_csv_of_mgt_commercial_loads(api, admin_token, jobs):
    tenant, result = created_tenant(api, admin_token, fixture_zip("mgt-commercial"), jobs)

    csvs = sorted(path.stem for path in MGT_TABLES.glob("*.csv"))
    assert len(csvs) == 71
    assert result == {"created": 71, "failed": 0, "skipped": 0}
    assert statuses(api, admin_token, tenant) == {name: ("table", "created", None) for name in csvs}
    territory = record(api, admin_token, tenant, "table", "Territory", key=["16055"], date="2021-06-01T00:00:00Z")
    assert value_of(territory) == {"city": "Sarver", "county": "Butler", "state": "PA", "territory": 513}
    assert value_of(record(api, admin_token, tenant, "table", "BaseLCv2", key=["0563", "Building", "Joisted Masonry"]))[
        "buildingGroup1"
    ] == Decimal("0.1180")


def test_an_itemcare_package_with_table_files_loads_its_constraint_and_lookup_tables(api, admin_token, jobs):
    files = directory_files(FIXTURES / "itemcare")
    files["bootstrap/config.json"] = json.dumps(
        {
            "resources": {
                "resourceInstances": {
                    "Counties01": {"staticName": "Counties"},
                    "StateTaxRates01": {"staticName": "StateTaxRates", "jurisdictions": ["CA"]},
                    "CountyCodes01": {"staticName": "CountyCodes"},
                },
                "resourceGroups": {
                    "launch": {
                        "selectionStartTime": "2025-07-01T00:00:00Z",
                        "resourceNames": ["Counties01", "StateTaxRates01", "CountyCodes01"],
                    }
                },
            }
        }
    )
    folder = "bootstrap/resources/resourceFiles"
    files[f"{folder}/constraintTables/Counties01.csv"] = "counties\nAlameda\nMarin\nAlameda\n"
    files[f"{folder}/tables/StateTaxRates01.csv"] = "key,stateTaxRate\nCA,0.0725\n"
    files[f"{folder}/tables/CountyCodes01.csv"] = "countyCode,name\n001,Alameda\n"

    tenant, result = created_tenant(api, admin_token, zip_files(files), jobs)

    assert result == {"created": 2, "failed": 1, "skipped": 0}
    loaded = statuses(api, admin_token, tenant)
    assert loaded["Counties01"] == ("constraintTable", "created", None)
    assert loaded["StateTaxRates01"] == ("table", "created", None)
    assert loaded["CountyCodes01"] == (
        "table",
        "failed",
        "table.columns_mismatch: The CSV header does not match "
        "the columns of table CountyCodes (countyCode, county): missing county; "
        "unknown 'name'",
    )
    counties = record(api, admin_token, tenant, "constraintTable", "Counties")
    assert json_of(counties) == {"counties": ["Alameda", "Marin"]}
    assert value_of(record(api, admin_token, tenant, "table", "StateTaxRates", key=["CA"], jurisdiction="CA")) == {
        "stateTaxRate": Decimal("0.0725")
    }
    properties = {"county": {"type": "string", "constraint": {"table": "Counties", "column": "counties", "where": {}}}}
    assert service.evaluate_constraints(system_ctx().for_tenant(tenant), properties, {}) == {
        "county": ["Alameda", "Marin"]
    }


def test_a_package_without_table_files_queues_no_bootstrap_job(api, admin_token, jobs):
    tenant = ok(create_tenant(api, admin_token, fixture_zip("itemcare")))["locator"]

    assert [m for m in jobs.sent if m.tenant == tenant] == []
    assert bootstrap(api, admin_token, tenant) == []


# --- the bootstrap's progress and outcome --------------------------------------------------------


IAG_DOCUMENT_RESOURCES = [
    {"name": name, "resourceType": kind, "status": "created", "updatedAt": "2026-01-15T09:30:00.000Z"}
    for name, kind in (
        ("invoiceDoc_v1", "documentTemplate"),
        ("Disclosure01", "staticDocument"),
        ("Forms01", "staticDocument"),
        ("SR2201", "staticDocument"),
    )
]
"""The iag package's other resources, in the record's order: stored with the deployment, so created then."""


def test_the_bootstrap_status_says_queued_until_the_job_loads_a_table_then_created(api, admin_token, jobs, clock):
    tenant = ok(create_tenant(api, admin_token, fixture_zip("iag-motor-demo")))["locator"]

    assert bootstrap(api, admin_token, tenant) == [
        *IAG_DOCUMENT_RESOURCES,
        {"name": "UWRules01", "resourceType": "table", "status": "queued", "updatedAt": "2026-01-15T09:30:00.000Z"},
    ]
    clock.advance(minutes=1)
    jobs.drain()

    assert bootstrap(api, admin_token, tenant) == [
        *IAG_DOCUMENT_RESOURCES,
        {"name": "UWRules01", "resourceType": "table", "status": "created", "updatedAt": "2026-01-15T09:31:00.000Z"},
    ]


def test_tables_whose_job_gave_up_are_failed_with_the_job_s_error(api, admin_token, jobs, clock):
    tenant = ok(create_tenant(api, admin_token, fixture_zip("iag-motor-demo")))["locator"]
    lose_every_message_until_given_up(tenant, jobs, clock)

    assert bootstrap(api, admin_token, tenant) == [
        *IAG_DOCUMENT_RESOURCES,
        {
            "name": "UWRules01",
            "resourceType": "table",
            "status": "failed",
            "updatedAt": "2026-01-16T01:15:06.000Z",  # 63 leases and 6 s on: the reaper gave up
            "error": "job.lease_expired: gave up after the last attempt",
        },
    ]
