"""Uploads that are refused: each answers 4xx with the error body, and the previous version stays in force."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.api.configuration.support import BOUNDARY
from tests.api.tables.support import (
    RATES_V1,
    ZIP,
    create,
    csv_zip,
    headers,
    record,
    replace,
    tables_tenant,
    value_of,
)
from tests.support.api import assert_error, ok
from tests.unit.configuration.zips import zip_files


@pytest.fixture
def rates(api, admin_token, clock):
    tenant = tables_tenant(api, admin_token)
    ok(create(api, admin_token, tenant, "table", "Rates2026", "Rates", RATES_V1))
    clock.advance(days=1)
    return tenant


def still_first_version(api, token, tenant):
    assert value_of(record(api, token, tenant, "table", "Rates", key=["CA", "18"]))["factor"] == Decimal("1.80")


def events_of(api, token, tenant):
    response = api.http.get(f"/event/{tenant}/events/list?type=resource.table.replace", headers=headers(token))
    return ok(response)["events"]


@pytest.mark.parametrize(
    ("csv", "status", "code", "message"),
    [
        (
            "state,age,factor\nCA,18,1.5\n",
            400,
            "table.columns_mismatch",
            "The CSV header does not match the columns of table Rates (state, age, factor, note): missing note",
        ),
        (
            "state,age,factor,note,extra\nCA,18,1.5,,x\n",
            400,
            "table.columns_mismatch",
            "The CSV header does not match the columns of table Rates (state, age, factor, note): unknown 'extra'",
        ),
        (
            "state,age,factor,note\nCA,18,1.5,\nCA,eighteen,1.5,\n",
            400,
            "table.invalid_value",
            "The CSV has values that do not fit their column: row 3, column 'age': 'eighteen' is not a int",
        ),
        (
            "state,age,factor,note\nCA,18,one,\n",
            400,
            "table.invalid_value",
            "The CSV has values that do not fit their column: row 2, column 'factor': 'one' is not a decimal",
        ),
        (
            "state,age,factor,note\nCA,18,1.5,\nNY,18,1,\nCA,018,2,\n",
            400,
            "table.duplicate_key",
            "The CSV has rows that cannot be stored: row 4: the key (CA, 18) is already on row 2",
        ),
        ("", 400, "table.columns_mismatch", "The CSV is empty: a header row naming the columns is required"),
    ],
)
def test_a_bad_csv_is_refused_and_the_previous_version_stays(api, admin_token, rates, csv, status, code, message):
    error = assert_error(replace(api, admin_token, rates, "table", "Rates2026", csv), status, code)

    assert error["message"] == message
    still_first_version(api, admin_token, rates)
    assert events_of(api, admin_token, rates) == []


def test_the_error_names_row_and_column_of_every_bad_value(api, admin_token, rates):
    error = assert_error(
        replace(api, admin_token, rates, "table", "Rates2026", "state,age,factor,note\nCA,x,1.5,\nCA,19,1.5.1,\n"),
        400,
        "table.invalid_value",
    )

    assert error["fieldErrors"] == [
        {"field": "rows[2].age", "message": "row 2, column 'age': 'x' is not a int"},
        {"field": "rows[3].factor", "message": "row 3, column 'factor': '1.5.1' is not a decimal"},
    ]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"state,age,factor,note\n", "table.file_not_zip"),
        (zip_files({"a.csv": RATES_V1, "b.csv": RATES_V1}), "table.file_invalid"),
        (zip_files({"rates.xlsx": "x"}), "table.file_invalid"),
        (b"", "table.file_not_zip"),
    ],
)
def test_a_body_that_is_not_a_zip_of_one_csv_is_refused(api, admin_token, rates, body, code):
    assert_error(replace(api, admin_token, rates, "table", "Rates2026", "", body=body), 400, code)
    still_first_version(api, admin_token, rates)


def test_a_multipart_body_without_the_file_part_is_refused(api, admin_token, rates):
    body = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="upload"; filename="r.zip"\r\n\r\n'.encode()
        + csv_zip(RATES_V1)
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )
    response = api.http.patch(
        f"/resource/{rates}/tables/Rates2026",
        body=body,
        headers=headers(admin_token, f"multipart/form-data; boundary={BOUNDARY}"),
    )

    assert_error(response, 400, "request.file_missing")


def test_unknown_tables_and_names_are_refused_at_create(api, admin_token, rates):
    unknown = assert_error(create(api, admin_token, rates, "table", "Fees1", "Fees", RATES_V1), 404, "table.not_found")
    assert unknown["message"] == "table Fees not found"
    assert_error(
        create(api, admin_token, rates, "rangeTable", "Rates1", "Rates", RATES_V1), 404, "rangeTable.not_found"
    )
    bad_name = assert_error(
        create(api, admin_token, rates, "table", "2026-rates", "Rates", RATES_V1), 400, "request.invalid"
    )
    assert bad_name["fieldErrors"][0]["field"] == "name"
    no_static = api.http.post(
        f"/resource/{rates}/tables?name=Rates9", headers=headers(admin_token, ZIP), body=csv_zip(RATES_V1)
    )
    assert assert_error(no_static, 400, "request.invalid")["fieldErrors"][0]["field"] == "staticName"
    still_first_version(api, admin_token, rates)


def test_a_table_the_configuration_declares_without_usable_columns_is_refused(api, admin_token):
    from tests.api.configuration.support import new_configured_tenant, package
    from tests.api.tables.support import tables_model

    model = tables_model()
    model["rangeTables"]["AgeBands"]["columns"]["minAge"]["dataType"] = "string"
    tenant, _ = new_configured_tenant(api, admin_token, package(model))

    error = assert_error(
        create(api, admin_token, tenant, "rangeTable", "Bands1", "AgeBands", "x\n"),
        409,
        "rangeTable.definition_invalid",
    )
    assert error["message"] == (
        "The configuration of rangeTable AgeBands cannot hold data: its range column minAge "
        "must be int, long or decimal"
    )
