"""A test configuration of our own for the policy domains, and deploying it through the API.

`policy_model()` is a ConfigurationRef as a dict: three account types (an abstract base, a person and
a prospect extending it, a company with constraint-table fields), data types with inheritance,
numbering plans (accounts numbered on validation and on creation; policies and quotes per product),
two products with element trees, coverage terms with default options, charges and a constraint table.
Tests change a copy (`policy_model()` answers a fresh one) and deploy it with `configured_tenant`.
"""

from __future__ import annotations

import copy
import hashlib
import io
import zipfile
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import simplejson

CITIES_CSV = "state,city\nCA,Los Angeles\nCA,San Diego\nNY,New York\nNY,Buffalo\n"

_POLICY_MODEL: dict[str, Any] = {
    "defaultCurrency": "USD",
    "defaultTimeZone": "America/New_York",
    "defaultTermDuration": 12,
    "defaultDurationBasis": "months",
    "contactRoles": ["primary", "billing", "broker"],
    "accounts": {
        "BaseAccount": {
            "abstract": True,
            "data": {
                "email": {"type": "string", "regex": "[^@ ]+@[^@ ]+\\.[a-z]+"},
                "tier": {"type": "string?", "options": ["gold", "silver"]},
            },
        },
        "PersonAccount": {
            "extend": "BaseAccount",
            "numberingPlan": "AccountNumbers",
            "numberingTrigger": "validation",
            "data": {
                "firstName": {"type": "string", "minLength": 1},
                "lastName": {"type": "string", "minLength": 2, "maxLength": 40},
                "birthDate": {"type": "date?", "min": "1900-01-01"},
                "income": {"type": "decimal?", "precision": 2, "roundingMode": "halfUp", "min": "0"},
                "dependents": {"type": "int?", "min": 0, "max": 20},
                "smoker": {"type": "boolean", "defaultValue": "false"},
                "address": {"type": "Address"},
                "previousAddresses": {"type": "Address*"},
                "nicknames": {"type": "string*"},
                "externalId": {"type": "guid?"},
                "lastContact": {"type": "datetime?"},
            },
        },
        "ProspectAccount": {"extend": "BaseAccount", "data": {"source": {"type": "string?"}}},
        "CompanyAccount": {
            "numberingPlan": "CompanyNumbers",
            "numberingTrigger": "creation",
            "data": {
                "companyName": {"type": "string"},
                "state": {"type": "string", "constraint": {"table": "Cities", "column": "state", "where": {}}},
                "city": {
                    "type": "string?",
                    "constraint": {
                        "table": "Cities",
                        "column": "city",
                        "where": {"state": {"key": "state", "values": []}},
                    },
                },
            },
        },
    },
    "dataTypes": {
        "BaseAddress": {"abstract": True, "data": {"line1": {"type": "string"}, "city": {"type": "string"}}},
        "Address": {"extend": "BaseAddress", "data": {"postcode": {"type": "string", "regex": "[0-9]{5}"}}},
        "Driver": {"data": {"name": {"type": "string"}, "licensed": {"type": "date"}}},
    },
    "numberingPlans": {
        "AccountNumbers": {"format": "\\A\\C-X###", "initialCoreNumber": "A998", "copyFromQuote": False},
        "CompanyNumbers": {"format": "\\C\\O-#####", "initialCoreNumber": "1", "copyFromQuote": False},
        "PolicyNumbers": {
            "format": "{product}-######",
            "initialCoreNumber": "1",
            "copyFromQuote": False,
            "quoteNumberFormat": "Q{product}-######",
        },
    },
    "constraintTables": {
        "Cities": {
            "columns": {
                "state": {"dataType": "string", "makeDistinct": True},
                "city": {"dataType": "string", "makeDistinct": True},
            }
        },
    },
    "products": {
        "PersonalAuto": {
            "eligibleAccountTypes": ["PersonAccount", "CompanyAccount"],
            "numberingPlan": "PolicyNumbers",
            "numberingString": "PA",
            "contents": ["Vehicle+"],
            "charges": ["premium", "tax"],
            "data": {"channel": {"type": "string?", "options": ["web", "agent"]}, "drivers": {"type": "Driver*"}},
        },
        "Homeowners": {
            "eligibleAccountTypes": ["PersonAccount"],
            "numberingPlan": "PolicyNumbers",
            "numberingString": "HO",
            "contents": ["Dwelling!"],
            "charges": ["premium"],
            "coverageTerms": ["Deductible?"],
        },
    },
    "exposures": {
        "BaseVehicle": {"abstract": True, "data": {"vin": {"type": "string", "minLength": 11}}},
        "Vehicle": {
            "extend": "BaseVehicle",
            "contents": ["Collision", "Glass?"],
            "data": {"value": {"type": "decimal", "precision": 2, "min": "0"}},
        },
        "Dwelling": {"contents": ["Fire"], "data": {"address": {"type": "Address"}}},
    },
    "coverages": {
        "Collision": {"coverageTerms": ["Deductible!", "Limit"]},
        "Glass": {},
        "Fire": {"coverageTerms": ["Limit"]},
    },
    "coverageTerms": {
        "Deductible": {"type": "deductible", "options": {"*d500": {"value": 500}, "d1000": {"value": 1000}}},
        "Limit": {"type": "limit", "options": {"l50k": {"value": 50000}, "*l100k": {"value": 100000}}},
    },
    "charges": {"premium": {"category": "premium"}, "tax": {"category": "tax"}},
}


def policy_model() -> dict[str, Any]:
    return copy.deepcopy(_POLICY_MODEL)


def package(model: dict[str, Any]) -> bytes:
    """The model as a configuration package ZIP: scalars in config.json, one folder per entity. Built once per
    test process and model (the same JSON, key for key): a ZIP of the same files and bytes as a new one, only its
    entries' times older, which nothing reads (a tenant's setup asks for one per test, and its recipe's digest
    walks it: ~20 ms of CPU a tenant under cProfile)."""
    key = _model_key(model)
    built = _PACKAGES.get(key)
    if built is None:
        built = _PACKAGES[key] = _package(model)
    return built


_PACKAGES: dict[tuple[str, tuple[str, ...]], bytes] = {}
"""package()'s ZIPs by _model_key."""


def _model_key(model: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """What package() writes of `model`: its JSON as written (order kept) and which of its keys are folders."""
    return (
        simplejson.dumps(model, use_decimal=True),
        tuple(key for key, value in model.items() if isinstance(value, dict)),
    )


def _package(model: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "config.json",
            simplejson.dumps(
                {key: value for key, value in model.items() if not isinstance(value, dict)}, use_decimal=True
            ),
        )
        for collection, entities in model.items():
            if isinstance(entities, dict):
                for name, body in entities.items():
                    archive.writestr(f"{collection}/{name}/config.json", simplejson.dumps(body, use_decimal=True))
    return buffer.getvalue()


def configured_tenant(
    api: Any, token: str, model: dict[str, Any] | None = None, name: str = "Test insurer", *, test_clock: bool = False
) -> str:
    """A fresh tenant with `model` (default: `policy_model()`) deployed through POST /config/createTenant
    (`test_clock`: with a test clock); `token`'s user gets access to it. Answers the tenant locator."""
    return deployed_tenant(api, token, package(_POLICY_MODEL if model is None else model), name, test_clock=test_clock)


def table_zip(name: str, csv_text: str) -> bytes:
    """A table upload: a ZIP holding one CSV, `name`.csv."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{name}.csv", csv_text)
    return buffer.getvalue()


def upload_constraint_table(api: Any, token: str, tenant: str, name: str, csv_text: str) -> None:
    """A constraint table (a ZIP holding one CSV) uploaded as `name`, implementing the static name `name`."""
    upload_table(api, token, tenant, "constraints", name, csv_text)


# --- quotes: the shared configuration plus rating tables and Python plugins ------------------------

QUOTE_PLUGINS = """
import pas

UNDERWRITING = {"AP": "approve", "BL": "block", "DC": "decline", "RJ": "reject", "IN": "info"}


def _vehicles(request):
    return [e for e in request["segment"]["element"]["elements"] if e["type"] == "Vehicle"]


def validate_PersonalAuto(request):
    return {"errors": [{"locator": v["locator"], "message": "the VIN is not a real one"}
                       for v in _vehicles(request) if v["data"]["vin"].startswith("000")]}


def rate_PersonalAuto(request):
    root = request["segment"]["element"]
    base = pas.lookup("BaseRates", [root["data"].get("channel") or "web"])["rate"]
    items = []
    for vehicle in _vehicles(request):
        vin = vehicle["data"]["vin"]
        if vin.startswith("CRASH"):
            raise RuntimeError("rating exploded")
        if vin.startswith("SHAPE"):
            return {"charges": "all of them"}
        band = pas.range_lookup("ValueBands", ["auto"], vehicle["data"]["value"])
        items.append({"elementLocator": vehicle["locator"], "chargeType": "premium", "rate": base * band["factor"],
                      "referenceRate": base, "tag": "band " + str(band["factor"])})
    items.append({"elementLocator": root["locator"], "chargeType": "tax", "amount": 25})
    return {"items": items}


def underwrite_PersonalAuto(request):
    flags = []
    for vehicle in _vehicles(request):
        level = UNDERWRITING.get(vehicle["data"]["vin"][:2])
        if level:
            flags.append({"level": level, "note": "vin " + vehicle["data"]["vin"], "tag": "vin",
                          "elementLocator": vehicle["locator"]})
    return {"flags": flags}
"""
"""PersonalAuto's plugins: a VIN starting 000 fails validation; the premium rate per month is the channel's
base rate (lookup table BaseRates) times the factor of the vehicle's value band (range table ValueBands),
plus a flat tax of 25; a VIN starting AP, BL, DC, RJ or IN raises an approve, block, decline, reject or
info flag; CRASH makes rating raise, SHAPE makes it answer the wrong shape. Homeowners has no plugins."""

BASE_RATES_CSV = "channel,rate\nweb,100\nagent,120\n"
VALUE_BANDS_CSV = "product,low,high,factor\nauto,0,20000,1.0\nauto,20000,50000,1.5\nauto,50000,,2.0\n"


def quotes_model() -> dict[str, Any]:
    """policy_model() plus the tables PersonalAuto's rating plugin reads."""
    model = policy_model()
    model["tables"] = {
        "BaseRates": {
            "selectionTimeBasis": "policyStartTime",
            "columns": {
                "channel": {"dataType": "string", "isKey": True},
                "rate": {"dataType": "decimal", "isKey": False},
            },
        }
    }
    model["rangeTables"] = {
        "ValueBands": {
            "selectionTimeBasis": "policyStartTime",
            "rangeStart": "low",
            "rangeEnd": "high",
            "columns": {
                "product": {"dataType": "string", "isKey": True},
                "low": {"dataType": "decimal", "isKey": False},
                "high": {"dataType": "decimal", "isKey": False},
                "factor": {"dataType": "decimal", "isKey": False},
            },
        }
    }
    return model


def package_with_files(model: dict[str, Any], files: dict[str, bytes]) -> bytes:
    """package(model) plus `files` at their paths (plugins/python/rating.py, ...); built once per test process,
    model and files, as package() is."""
    if sum(map(len, files.values())) > _REMEMBERED_BYTES:
        return _package_with_files(model, files)
    key = (_model_key(model), tuple(files.items()))
    built = _PACKAGES_WITH_FILES.get(key)
    if built is None:
        built = _PACKAGES_WITH_FILES[key] = _package_with_files(model, files)
    return built


_PACKAGES_WITH_FILES: dict[tuple[Any, ...], bytes] = {}
"""package_with_files()'s ZIPs by model and files."""
_REMEMBERED_BYTES = 256 * 1024
"""Larger packages (a font, a large document template) are built and digested each time, not kept."""


def _package_with_files(model: dict[str, Any], files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(package(model))) as source,
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive,
    ):
        for info in source.infolist():
            archive.writestr(info, source.read(info))
        for path, content in files.items():
            archive.writestr(path, content)
    return buffer.getvalue()


def deployed_tenant(
    api: Any, token: str, package_bytes: bytes, name: str = "Test insurer", *, test_clock: bool = False
) -> str:
    """A fresh tenant with the package deployed through POST /config/createTenant (`test_clock`: with a test
    clock); `token`'s user gets access to it. Answers the tenant locator."""
    return fresh_tenant(
        ("deployed", contents_of(package_bytes), name, test_clock, token),
        lambda: _deployed(api, token, package_bytes, name, test_clock=test_clock),
    )


def fresh_tenant(recipe: tuple[Any, ...], build: Callable[[], str]) -> str:
    """A tenant `build` makes (the same for the same `recipe`, clock, settings): built through the API the first
    time a test process asks for it, a copy of that one under fresh locators after (tests/support/snapshots.py
    TenantSnapshot: createTenant and two table uploads are ~1,000 DynamoDB calls of tests/api's setups). A
    recipe whose build cannot be copied honestly is built each time, and so is every build on a real clock
    (its time never comes back)."""
    from chalicelib.core.clock import FixedClock
    from chalicelib.runtime import wiring
    from chalicelib.settings import settings
    from tests.support.snapshots import TenantSnapshot

    clock = wiring.clock()
    if not isinstance(clock, FixedClock):
        return build()
    key = (*recipe, clock.now(), settings())
    if key in TENANT_SNAPSHOTS:
        snapshot = TENANT_SNAPSHOTS[key]
        return build() if snapshot is None else snapshot.restore()
    tenant, TENANT_SNAPSHOTS[key], problems = TenantSnapshot.of_build(build)
    if problems:
        NOT_COPIED[key] = problems
    return tenant


TENANT_SNAPSHOTS: dict[tuple[Any, ...], Any] = {}
"""This process's builds by recipe, clock time and settings: a TenantSnapshot, or None for a build not copied."""
NOT_COPIED: dict[tuple[Any, ...], list[str]] = {}
"""Why each build not copied was not."""


def contents_of(package_bytes: bytes) -> str:
    """A digest of a ZIP's files, names and bytes (not the times the ZIP was written at); remembered per ZIP."""
    if len(package_bytes) > _REMEMBERED_BYTES:
        return _contents_of(package_bytes)
    found = _CONTENTS.get(package_bytes)
    if found is None:
        found = _CONTENTS[package_bytes] = _contents_of(package_bytes)
    return found


_CONTENTS: dict[bytes, str] = {}


def _contents_of(package_bytes: bytes) -> str:
    digest = hashlib.sha256()
    with zipfile.ZipFile(io.BytesIO(package_bytes)) as archive:
        for info in sorted(archive.infolist(), key=lambda info: info.filename):
            for part in (info.filename.encode(), archive.read(info)):
                digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


def _deployed(api: Any, token: str, package_bytes: bytes, name: str = "Test insurer", *, test_clock: bool) -> str:
    query = urlencode({"name": name, **({"testClock": "true"} if test_clock else {})})
    response = api.http.post(
        f"/config/createTenant?{query}",
        body=package_bytes,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/zip", "Accept": "application/json"},
    )
    assert response.status_code == 200, response.body
    result = simplejson.loads(response.body)
    assert result["deploymentResult"]["isSuccess"] is True, result["deploymentResult"]["errors"]
    return str(result["locator"])


def upload_table(
    api: Any, token: str, tenant: str, collection: str, name: str, csv_text: str, static_name: str | None = None
) -> None:
    """A lookup (`tables`), range (`rangeTables`) or constraint (`constraints`) table uploaded as `name`,
    implementing the static name `static_name` (default: `name`)."""
    query = urlencode({"name": name, "staticName": static_name or name})
    response = api.http.post(
        f"/resource/{tenant}/{collection}?{query}",
        body=table_zip(name, csv_text),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/zip"},
    )
    assert response.status_code == 200, response.body


def quotes_tenant(
    api: Any,
    token: str,
    model: dict[str, Any] | None = None,
    plugins: str | None = QUOTE_PLUGINS,
    *,
    test_clock: bool = False,
) -> str:
    """A fresh tenant with quotes_model() (or `model`) and `plugins` as plugins/python/auto.py deployed, and
    the rating tables uploaded (`test_clock`: with a test clock)."""
    return rated_tenant(api, token, _quotes_package(model, plugins), test_clock=test_clock)


def rated_tenant(api: Any, token: str, package_bytes: bytes, *, test_clock: bool = False) -> str:
    """A fresh tenant with the package deployed and the rating tables (BaseRates, ValueBands) uploaded."""
    return fresh_tenant(
        ("rated", contents_of(package_bytes), test_clock, token),
        lambda: _rated(api, token, package_bytes, test_clock=test_clock),
    )


def _quotes_package(model: dict[str, Any] | None, plugins: str | None) -> bytes:
    files = {"plugins/python/auto.py": plugins.encode()} if plugins else {}
    return package_with_files(quotes_model() if model is None else model, files)


def _rated(api: Any, token: str, package_bytes: bytes, *, test_clock: bool) -> str:
    tenant = _deployed(api, token, package_bytes, test_clock=test_clock)
    upload_table(api, token, tenant, "tables", "BaseRates", BASE_RATES_CSV)
    upload_table(api, token, tenant, "rangeTables", "ValueBands", VALUE_BANDS_CSV)
    return tenant


def constrained_tenant(api: Any, token: str, plugins: str | None = QUOTE_PLUGINS) -> str:
    """quotes_tenant() with a garage state and city on PersonalAuto, constrained by the Cities table
    (CITIES_CSV, uploaded): the city's options depend on the state."""
    model = quotes_model()
    model["products"]["PersonalAuto"]["data"].update(
        {
            "garageState": {"type": "string?", "constraint": {"table": "Cities", "column": "state", "where": {}}},
            "garageCity": {
                "type": "string?",
                "constraint": {
                    "table": "Cities",
                    "column": "city",
                    "where": {"state": {"key": "garageState", "values": []}},
                },
            },
        }
    )
    package_bytes = _quotes_package(model, plugins)
    return fresh_tenant(
        ("constrained", contents_of(package_bytes), token),
        lambda: _constrained(api, token, package_bytes),
    )


def _constrained(api: Any, token: str, package_bytes: bytes) -> str:
    tenant = _rated(api, token, package_bytes, test_clock=False)
    upload_constraint_table(api, token, tenant, "Cities", CITIES_CSV)
    return tenant
