"""Helpers of the tables API tests: a configuration declaring tables, uploads, lookups."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import get_job
from tests.api.configuration.support import BOUNDARY, ZIP, minimal_model, multipart_body, new_configured_tenant, package
from tests.support.api import json_of, ok
from tests.unit.configuration.zips import FIXTURES, zip_files

JSON = "application/json"
PATHS = {"table": "tables", "rangeTable": "rangeTables", "constraintTable": "constraints"}


def tables_model() -> dict[str, Any]:
    """The minimal configuration, plus one table of each kind."""
    model = minimal_model()
    model["tables"] = {
        "Rates": {
            "selectionTimeBasis": "termStartTime",
            "columns": {
                "state": {"dataType": "string", "isKey": True},
                "age": {"dataType": "int", "isKey": True},
                "factor": {"dataType": "decimal", "isKey": False},
                "note": {"dataType": "string", "isKey": False},
            },
        }
    }
    model["rangeTables"] = {
        "AgeBands": {
            "selectionTimeBasis": "policyStartTime",
            "rangeStart": "minAge",
            "rangeEnd": "maxAge",
            "columns": {
                "state": {"dataType": "string", "isKey": True},
                "minAge": {"dataType": "int", "isKey": False},
                "maxAge": {"dataType": "int", "isKey": False},
                "factor": {"dataType": "decimal", "isKey": False},
            },
        }
    }
    model["constraintTables"] = {
        "Vehicles": {
            "selectionTimeBasis": "currentTime",
            "columns": {
                "make": {"dataType": "string", "makeDistinct": True},
                "model": {"dataType": "string", "makeDistinct": True},
                "year": {"dataType": "int", "makeDistinct": False},
            },
        }
    }
    return model


def tables_tenant(api: Any, token: str) -> str:
    tenant, _ = new_configured_tenant(api, token, package(tables_model()))
    return tenant


RATES_V1 = "state,age,factor,note\nCA,18,1.80,young\nCA,30,1.00,\nNY,18,2.10,young\n"
RATES_V2 = "age,state,factor,note\n18,CA,1.75,young driver\n30,CA,0.95,\n"
BANDS = "state,minAge,maxAge,factor\nCA,16,25,1.8\nCA,25,65,1.0\nCA,65,,1.3\n"
VEHICLES = "make,model,year\nFord,Mustang,2020\nFord,Mustang,2021\nFord,F150,2021\nToyota,Camry,2020\n"


def csv_zip(text: str, name: str = "upload.csv") -> bytes:
    return zip_files({name: text})


def headers(token: str | None, content_type: str | None = None, accept: str = JSON) -> dict[str, str]:
    sent = {"Accept": accept}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    if content_type:
        sent["Content-Type"] = content_type
    return sent


def create(
    api: Any,
    token: str | None,
    tenant: str,
    kind: str,
    name: str,
    static_name: str,
    text: str,
    *,
    jurisdictions: tuple[str, ...] = (),
    multipart: bool = False,
    body: bytes | None = None,
) -> Any:
    query = urlencode([("name", name), ("staticName", static_name)] + [("jurisdiction", j) for j in jurisdictions])
    return _upload(
        api.http.post,
        f"/resource/{tenant}/{PATHS[kind]}?{query}",
        token,
        csv_zip(text) if body is None else body,
        multipart,
    )


def replace(
    api: Any,
    token: str | None,
    tenant: str,
    kind: str,
    name: str,
    text: str,
    *,
    multipart: bool = False,
    body: bytes | None = None,
) -> Any:
    return _upload(
        api.http.patch,
        f"/resource/{tenant}/{PATHS[kind]}/{name}",
        token,
        csv_zip(text) if body is None else body,
        multipart,
    )


def _upload(send: Any, path: str, token: str | None, body: bytes, multipart: bool) -> Any:
    if multipart:
        return send(
            path, headers=headers(token, f"multipart/form-data; boundary={BOUNDARY}"), body=multipart_body("file", body)
        )
    return send(path, headers=headers(token, ZIP), body=body)


def record(api: Any, token: str | None, tenant: str, kind: str, name: str, **query: Any) -> Any:
    """GET .../record; list values repeat the parameter (key=a&key=b)."""
    pairs = [
        (field, item)
        for field, value in query.items()
        for item in (value if isinstance(value, (list, tuple)) else [value])
    ]
    return api.http.get(f"/resource/{tenant}/{PATHS[kind]}/{name}/record?{urlencode(pairs)}", headers=headers(token))


def value_of(response: Any) -> Any:
    assert response.status_code == 200, response.body
    return json_of(response)["value"]


MGT_TABLES = FIXTURES / "mgt-commercial" / "bootstrap" / "resources" / "resourceFiles" / "tables"


def bootstrap_results(tenant: str, jobs) -> dict[str, int]:
    """The created/failed/skipped counts of every bootstrap step the tenant ran (each must have finished)."""
    total = {"created": 0, "failed": 0, "skipped": 0}
    for locator in dict.fromkeys(
        m.job_locator for m in jobs.sent if m.tenant == tenant and m.job_type == JobType.TABLES_BOOTSTRAP
    ):
        job = get_job(tenant, locator)
        assert job is not None and job["status"] == "finished", job
        for outcome in total:
            total[outcome] += job["result"][outcome]
    return total


def bootstrap(api, token, tenant) -> list[dict]:
    """GET /resource/{tenant}/resources/bootstrap: how far loading the package's tables has come."""
    return ok(api.http.get(f"/resource/{tenant}/resources/bootstrap", headers=headers(token)))


def statuses(api, token, tenant) -> dict[str, tuple[str, str, str | None]]:
    """By resource name: (resource type, status, error) of the bootstrap."""
    return {s["name"]: (s["resourceType"], s["status"], s.get("error")) for s in bootstrap(api, token, tenant)}
