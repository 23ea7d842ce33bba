"""Lookup tables: create, replace, download, record lookups by key, date, jurisdiction and name."""

from __future__ import annotations

import io
import zipfile
from decimal import Decimal

from tests.api.configuration.support import request_events
from tests.api.tables.support import (
    RATES_V1,
    RATES_V2,
    ZIP,
    create,
    headers,
    record,
    replace,
    tables_tenant,
    value_of,
)
from tests.support.api import assert_error, json_of, ok


def test_create_answers_the_basic_resource_response_and_records_the_event(api, admin_token, clock):
    tenant = tables_tenant(api, admin_token)

    response = create(api, admin_token, tenant, "table", "Rates2026", "Rates", RATES_V1, jurisdictions=("CA", "NV"))

    body = ok(response)
    assert body == {
        "name": "Rates2026",
        "staticName": "Rates",
        "resourceType": "table",
        "lookupTableLocator": body["lookupTableLocator"],
        "createdBy": body["createdBy"],
        "createdAt": "2026-01-15T09:30:00.000Z",
        "jurisdictions": ["CA", "NV"],
    }
    assert len(body["lookupTableLocator"]) == 26
    (event,) = request_events(api, admin_token, tenant, response)
    assert event["type"] == "resource.table.create"
    assert event["data"] == {
        "name": "Rates2026",
        "staticName": "Rates",
        "resourceType": "table",
        "locator": body["lookupTableLocator"],
        "jurisdictions": ["CA", "NV"],
        "rows": 3,
        "effectiveFrom": "2026-01-15T09:30:00.000Z",
        "source": "upload",
    }


def test_a_record_is_the_rows_other_columns_with_numbers_as_numbers(api, admin_token):
    tenant = tables_tenant(api, admin_token)
    ok(create(api, admin_token, tenant, "table", "Rates2026", "Rates", RATES_V1))

    assert value_of(record(api, admin_token, tenant, "table", "Rates", key=["CA", "18"])) == {
        "factor": Decimal("1.80"),
        "note": "young",
    }
    assert value_of(record(api, admin_token, tenant, "table", "Rates", key=["CA", "030"])) == {
        "factor": Decimal("1.00"),
        "note": "",
    }
    raw = record(api, admin_token, tenant, "table", "Rates", key=["NY", "18"]).body
    assert b'"factor":2.10' in raw  # a JSON number, exactly as uploaded


def test_an_unknown_key_is_404_and_a_missing_or_malformed_key_400(api, admin_token):
    tenant = tables_tenant(api, admin_token)
    ok(create(api, admin_token, tenant, "table", "Rates2026", "Rates", RATES_V1))

    assert_error(record(api, admin_token, tenant, "table", "Rates", key=["TX", "18"]), 404, "tableRecord.not_found")
    missing = assert_error(record(api, admin_token, tenant, "table", "Rates"), 400, "table.key_invalid")
    assert missing["message"] == "The key needs 2 value(s), one per key column (state, age); 0 given"
    assert_error(record(api, admin_token, tenant, "table", "Rates", key=["CA"]), 400, "table.key_invalid")
    malformed = assert_error(
        record(api, admin_token, tenant, "table", "Rates", key=["CA", "old"]), 400, "table.key_invalid"
    )
    assert malformed["fieldErrors"] == [{"field": "key[1]", "message": "'old' is not a int"}]
    assert_error(record(api, admin_token, tenant, "table", "Unknown", key=["CA", "18"]), 404, "table.not_found")


def test_a_replacement_is_in_force_from_its_upload_and_earlier_dates_keep_the_old_version(api, admin_token, clock):
    tenant = tables_tenant(api, admin_token)
    first = ok(create(api, admin_token, tenant, "table", "Rates2026", "Rates", RATES_V1))
    clock.advance(days=10)

    response = replace(api, admin_token, tenant, "table", "Rates2026", RATES_V2, multipart=True)

    second = ok(response)
    assert second["name"] == "Rates2026" and second["staticName"] == "Rates"
    assert second["lookupTableLocator"] != first["lookupTableLocator"]
    assert second["createdAt"] == "2026-01-25T09:30:00.000Z"
    assert [e["type"] for e in request_events(api, admin_token, tenant, response)] == ["resource.table.replace"]

    def factor(**query):
        return value_of(record(api, admin_token, tenant, "table", "Rates", key=["CA", "18"], **query))["factor"]

    assert factor() == Decimal("1.75")
    assert factor(date="2026-01-25T09:30:00Z") == Decimal("1.75")
    assert factor(date="2026-01-25T09:29:59.999Z") == Decimal("1.80")
    assert factor(date="2026-01-16T00:00:00") == Decimal("1.80")  # no offset: UTC
    assert factor(date="2020-01-01T00:00:00Z") == Decimal("1.80")  # before any upload: the first version
    assert_error(record(api, admin_token, tenant, "table", "Rates", key=["NY", "18"]), 404, "tableRecord.not_found")
    assert value_of(record(api, admin_token, tenant, "table", "Rates", key=["NY", "18"], date="2026-01-20T00:00:00Z"))[
        "factor"
    ] == Decimal("2.10")


def test_a_jurisdiction_selects_its_own_instance_and_falls_back_to_the_general_one(api, admin_token, clock):
    tenant = tables_tenant(api, admin_token)
    ok(create(api, admin_token, tenant, "table", "RatesGeneral", "Rates", RATES_V1))
    clock.advance(days=1)
    ok(create(api, admin_token, tenant, "table", "RatesWest", "Rates", RATES_V2, jurisdictions=("CA", "NV")))

    def factor(**query):
        return value_of(record(api, admin_token, tenant, "table", "Rates", key=["CA", "18"], **query))["factor"]

    assert factor(jurisdiction="CA") == Decimal("1.75")
    assert factor(jurisdiction="NV") == Decimal("1.75")
    assert factor(jurisdiction="TX") == Decimal("1.80")
    assert factor() == Decimal("1.80")
    assert factor(jurisdiction="CA", date="2026-01-15T12:00:00Z") == Decimal("1.80")  # before RatesWest began


def test_by_static_name_false_addresses_one_instance(api, admin_token, clock):
    tenant = tables_tenant(api, admin_token)
    ok(create(api, admin_token, tenant, "table", "RatesGeneral", "Rates", RATES_V1))
    clock.advance(days=1)
    ok(create(api, admin_token, tenant, "table", "RatesWest", "Rates", RATES_V2, jurisdictions=("CA",)))

    def factor(name, **query):
        return value_of(
            record(api, admin_token, tenant, "table", name, key=["CA", "18"], byStaticName="false", **query)
        )["factor"]

    assert factor("RatesGeneral") == Decimal("1.80")
    assert factor("RatesWest") == Decimal("1.75")
    assert factor("RatesWest", jurisdiction="TX") == Decimal("1.75")
    assert_error(record(api, admin_token, tenant, "table", "RatesWest", key=["CA", "18"]), 404, "table.not_found")
    assert_error(
        record(api, admin_token, tenant, "table", "Rates", key=["CA", "18"], byStaticName="false"),
        404,
        "table.not_found",
    )


def test_download_answers_a_zip_of_the_csv_last_uploaded(api, admin_token, clock):
    tenant = tables_tenant(api, admin_token)
    ok(create(api, admin_token, tenant, "table", "Rates2026", "Rates", RATES_V1))
    clock.advance(hours=1)
    ok(replace(api, admin_token, tenant, "table", "Rates2026", RATES_V2))

    response = api.http.get(f"/resource/{tenant}/tables/Rates2026", headers=headers(admin_token, accept=ZIP))

    assert response.status_code == 200
    assert response.headers["Content-Type"] == ZIP
    assert response.headers["Content-Disposition"] == 'attachment; filename="Rates2026.zip"'
    with zipfile.ZipFile(io.BytesIO(response.body)) as archive:
        assert archive.namelist() == ["Rates2026.csv"]
        assert archive.read("Rates2026.csv").decode() == RATES_V2
    missing = api.http.get(f"/resource/{tenant}/tables/Rates", headers=headers(admin_token, accept=ZIP))
    assert_error(missing, 404, "table.not_found")


def test_create_is_idempotent_with_a_key_and_a_name_is_taken_once(api, admin_token):
    tenant = tables_tenant(api, admin_token)
    from tests.unit.configuration.zips import zip_files

    body = zip_files({"r.csv": RATES_V1})
    send = {**headers(admin_token, ZIP), "X-Idempotency-Key": "upload-1"}
    path = f"/resource/{tenant}/tables?name=Rates2026&staticName=Rates"

    first = api.http.post(path, headers=send, body=body)
    again = api.http.post(path, headers=send, body=body)

    assert json_of(first) == json_of(again)
    taken = assert_error(
        create(api, admin_token, tenant, "table", "Rates2026", "Rates", RATES_V2), 409, "table.already_exists"
    )
    assert taken["message"] == "table Rates2026 already exists; replace it to upload a new version"
    assert value_of(record(api, admin_token, tenant, "table", "Rates", key=["CA", "18"]))["factor"] == Decimal("1.80")
    assert_error(replace(api, admin_token, tenant, "table", "Nothing", RATES_V2), 404, "table.not_found")
