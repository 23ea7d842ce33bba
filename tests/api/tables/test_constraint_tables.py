"""Constraint tables: records with and without key filters, replace, download, and the engine's
service surface (evaluate_constraints, constraint_dependencies) over a stored table."""

from __future__ import annotations

import io
import zipfile

import pytest

from chalicelib.core.errors import NotFound
from chalicelib.tables import service
from tests.api.configuration.support import request_events
from tests.api.tables.support import VEHICLES, ZIP, create, headers, record, replace, tables_tenant
from tests.builders import system_ctx
from tests.support.api import assert_error, json_of, ok


@pytest.fixture
def vehicles(api, admin_token):
    tenant = tables_tenant(api, admin_token)
    body = ok(create(api, admin_token, tenant, "constraintTable", "Vehicles2026", "Vehicles", VEHICLES))
    assert body["resourceType"] == "constraintTable" and len(body["constraintTableLocator"]) == 26
    return tenant


def values(api, token, tenant, **query):
    response = record(api, token, tenant, "constraintTable", "Vehicles", **query)
    assert response.status_code == 200, response.body
    return json_of(response)


def test_without_filters_every_column_answers_its_values(api, admin_token, vehicles):
    assert values(api, admin_token, vehicles) == {
        "make": ["Ford", "Toyota"],
        "model": ["Mustang", "F150", "Camry"],
        "year": [2020, 2021, 2021, 2020],
    }


def test_key_filters_match_the_leading_columns_in_order(api, admin_token, vehicles):
    assert values(api, admin_token, vehicles, key=["Ford"]) == {
        "make": ["Ford"],
        "model": ["Mustang", "F150"],
        "year": [2020, 2021, 2021],
    }
    assert values(api, admin_token, vehicles, key=["Ford", "Mustang"])["year"] == [2020, 2021]
    assert values(api, admin_token, vehicles, key=["", "Camry"])["make"] == ["Toyota"]
    assert values(api, admin_token, vehicles, key=["Ford", "", "02021"])["model"] == ["Mustang", "F150"]
    assert values(api, admin_token, vehicles, key=["Tesla"]) == {"make": [], "model": [], "year": []}
    assert_error(
        record(api, admin_token, vehicles, "constraintTable", "Vehicles", key=["a", "b", "c", "d"]),
        400,
        "table.key_invalid",
    )


def test_replace_download_and_an_unknown_table(api, admin_token, vehicles, clock):
    clock.advance(minutes=5)
    response = replace(api, admin_token, vehicles, "constraintTable", "Vehicles2026", "make,model,year\nKia,Rio,2024\n")

    assert ok(response)["constraintTableLocator"]
    assert [e["type"] for e in request_events(api, admin_token, vehicles, response)] == [
        "resource.constraintTable.replace"
    ]
    assert values(api, admin_token, vehicles)["make"] == ["Kia"]
    assert values(api, admin_token, vehicles, date="2026-01-15T09:31:00Z")["make"] == ["Ford", "Toyota"]
    download = api.http.get(f"/resource/{vehicles}/constraints/Vehicles2026", headers=headers(admin_token, accept=ZIP))
    with zipfile.ZipFile(io.BytesIO(download.body)) as archive:
        assert archive.read("Vehicles2026.csv").decode() == "make,model,year\nKia,Rio,2024\n"
    assert_error(record(api, admin_token, vehicles, "constraintTable", "Nope"), 404, "constraintTable.not_found")
    assert_error(
        create(api, admin_token, vehicles, "constraintTable", "Rates1", "Rates", VEHICLES),
        404,
        "constraintTable.not_found",
    )


PROPERTIES = {
    "make": {"type": "string", "constraint": {"table": "Vehicles", "column": "make", "where": {}}},
    "model": {
        "type": "string",
        "constraint": {"table": "Vehicles", "column": "model", "where": {"make": {"key": "make", "values": []}}},
    },
    "year": {
        "type": "int",
        "constraint": {
            "table": "Vehicles",
            "column": "year",
            "where": {"make": {"key": "make", "values": []}, "model": {"key": "model", "values": []}},
        },
    },
    "vin": {"type": "string"},
}


def test_evaluate_constraints_answers_the_options_of_each_constrained_field(vehicles):
    ctx = system_ctx().for_tenant(vehicles)

    assert service.evaluate_constraints(ctx, PROPERTIES, {"make": "Ford", "model": "Mustang", "vin": "x"}) == {
        "make": ["Ford", "Toyota"],
        "model": ["Mustang", "F150"],
        "year": ["2020", "2021"],
    }
    assert service.evaluate_constraints(ctx, PROPERTIES, {"make": "Toyota"})["year"] == ["2020"]
    assert service.evaluate_constraints(ctx, {"vin": {"type": "string"}}, {}) == {}
    with pytest.raises(NotFound):
        service.evaluate_constraints(
            ctx, {"trim": {"constraint": {"table": "Trims", "column": "trim", "where": {}}}}, {}
        )


def test_constraint_dependencies_map_each_field_to_the_fields_it_reads(vehicles):
    ctx = system_ctx().for_tenant(vehicles)

    dependencies = service.constraint_dependencies(
        ctx, PROPERTIES, static_locators={"make": "01JELEMENT00000000000000000"}
    )

    assert set(dependencies) == {"make", "model", "year"}
    assert dependencies["year"] == {
        "column": "year",
        "table": "Vehicles",
        "where": {
            "make": {"staticLocator": "01JELEMENT00000000000000000", "fieldName": "make", "values": []},
            "model": {"staticLocator": "", "fieldName": "model", "values": []},
        },
    }
