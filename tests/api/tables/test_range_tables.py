"""Range tables: boundaries [start, end), open-ended ranges, versions, download."""

from __future__ import annotations

import io
import zipfile
from decimal import Decimal

import pytest

from tests.api.configuration.support import request_events
from tests.api.tables.support import BANDS, ZIP, create, headers, record, replace, tables_tenant, value_of
from tests.support.api import assert_error, ok


@pytest.fixture
def bands(api, admin_token):
    tenant = tables_tenant(api, admin_token)
    body = ok(create(api, admin_token, tenant, "rangeTable", "AgeBands2026", "AgeBands", BANDS))
    assert body["resourceType"] == "rangeTable" and len(body["rangeTableLocator"]) == 26
    return tenant


@pytest.mark.parametrize(
    ("bound", "factor"),
    [("16", "1.8"), ("24.999", "1.8"), ("25", "1.0"), ("64", "1.0"), ("65", "1.3"), ("120", "1.3"), ("1E+6", "1.3")],
)
def test_a_bound_falls_in_the_range_from_its_start_included_to_its_end_excluded(api, admin_token, bands, bound, factor):
    value = value_of(record(api, admin_token, bands, "rangeTable", "AgeBands", key=["CA"], boundValue=bound))

    assert value["factor"] == Decimal(factor)
    assert set(value) == {"minAge", "maxAge", "factor"}


def test_the_open_ended_range_answers_its_empty_end_as_null(api, admin_token, bands):
    assert value_of(record(api, admin_token, bands, "rangeTable", "AgeBands", key=["CA"], boundValue="70")) == {
        "minAge": 65,
        "maxAge": None,
        "factor": Decimal("1.3"),
    }


def test_a_bound_in_no_range_or_an_unknown_key_is_404(api, admin_token, bands):
    for query in ({"key": ["CA"], "boundValue": "15.99"}, {"key": ["NY"], "boundValue": "30"}):
        assert_error(
            record(api, admin_token, bands, "rangeTable", "AgeBands", **query), 404, "rangeTableRecord.not_found"
        )


def test_the_bound_value_is_required_and_must_be_a_number(api, admin_token, bands):
    for query in ({"key": ["CA"]}, {"key": ["CA"], "boundValue": "old"}, {"key": ["CA"], "boundValue": "NaN"}):
        error = assert_error(record(api, admin_token, bands, "rangeTable", "AgeBands", **query), 400, "request.invalid")
        assert error["fieldErrors"][0]["field"] == "boundValue"
    assert_error(record(api, admin_token, bands, "rangeTable", "AgeBands", boundValue="30"), 400, "table.key_invalid")


def test_a_replacement_changes_the_ranges_from_its_upload_on(api, admin_token, bands, clock):
    clock.advance(days=30)

    response = replace(
        api, admin_token, bands, "rangeTable", "AgeBands2026", "state,minAge,maxAge,factor\nCA,16,21,2.0\nCA,21,,1.1\n"
    )

    assert ok(response)["rangeTableLocator"]
    assert [e["type"] for e in request_events(api, admin_token, bands, response)] == ["resource.rangeTable.replace"]
    assert value_of(record(api, admin_token, bands, "rangeTable", "AgeBands", key=["CA"], boundValue="22")) == {
        "minAge": 21,
        "maxAge": None,
        "factor": Decimal("1.1"),
    }
    assert value_of(
        record(
            api, admin_token, bands, "rangeTable", "AgeBands", key=["CA"], boundValue="22", date="2026-01-20T00:00:00Z"
        )
    )["factor"] == Decimal("1.8")


def test_download_answers_the_csv_and_overlapping_ranges_leave_the_table_as_it_was(api, admin_token, bands):
    error = assert_error(
        replace(
            api,
            admin_token,
            bands,
            "rangeTable",
            "AgeBands2026",
            "state,minAge,maxAge,factor\nCA,16,30,1\nCA,25,65,1\n",
        ),
        400,
        "table.overlapping_ranges",
    )
    assert error["fieldErrors"] == [
        {
            "field": "rows[3].minAge",
            "message": ("row 3: the range starting at 25 overlaps the range of row 2 ([16, 30)) for the key (CA)"),
        }
    ]

    response = api.http.get(f"/resource/{bands}/rangeTables/AgeBands2026", headers=headers(admin_token, accept=ZIP))
    with zipfile.ZipFile(io.BytesIO(response.body)) as archive:
        assert archive.read("AgeBands2026.csv").decode() == BANDS
    assert value_of(record(api, admin_token, bands, "rangeTable", "AgeBands", key=["CA"], boundValue="26"))[
        "factor"
    ] == Decimal("1.0")
