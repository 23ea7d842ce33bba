"""Helpers of the documents API tests: the quotes test configuration (tests/support/configs.py) with
documents of our own: `Quotation`, a Liquid HTML page at `priced`; `Schedule`, a Velocity PDF (A4,
landscape, 10 mm margins) at `issued`; `Broken`, a Liquid text whose template can be replaced. The
insured is the account of tests/api/quotes/support.py (Ada Lovelace)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.support.api import call, ok
from tests.support.configs import (
    QUOTE_PLUGINS,
    package_with_files,
    quotes_model,
    rated_tenant,
)

QUOTATION = """<html><body><h1>Quotation for {{ account.data.firstName }} {{ account.data.lastName }}</h1>
<p>{{ productName }} quote {{ locator }}: {% for charge in charges %}{{ charge.chargeType }} {{ charge.amount }};
{% endfor %}total {{ totalAmount }} {{ currency }}</p><p>[{{ missing.variable }}]</p></body></html>"""
SCHEDULE = """<html><body><h1>Schedule: $account.data.firstName $account.data.lastName</h1>
#foreach($vehicle in $segment.element.elements)<p>Vehicle $vehicle.data.vin</p>#end
<p>Category $transactionCategory</p></body></html>"""


def documents_model(**documents: dict[str, Any]) -> dict[str, Any]:
    model = quotes_model()
    model["documents"] = {
        "Quotation": {
            "format": "html",
            "rendering": "dynamic",
            "scope": "policy",
            "trigger": "priced",
            "selectionTimeBasis": "currentTime",
            "displayName": "Quotation",
        },
        "Schedule": {
            "format": "pdf",
            "rendering": "dynamic",
            "scope": "transaction",
            "trigger": "issued",
            "selectionTimeBasis": "currentTime",
            "pageSize": "A4",
            "portrait": False,
            "margin": {"top": 10, "bottom": 10, "left": 10, "right": 10},
        },
        **documents,
    }
    model["products"]["PersonalAuto"]["documents"] = list(model["documents"])
    return model


def documents_tenant(
    api: Any,
    token: str,
    model: dict[str, Any] | None = None,
    templates: Mapping[str, str | bytes] | None = None,
    *,
    test_clock: bool = False,
) -> str:
    files = {
        "plugins/python/auto.py": QUOTE_PLUGINS.encode(),
        "documents/Quotation/template.liquid": QUOTATION.encode(),
        "documents/Schedule/template.vm": SCHEDULE.encode(),
    }
    files.update({path: text if isinstance(text, bytes) else text.encode() for path, text in (templates or {}).items()})
    return rated_tenant(api, token, package_with_files(model or documents_model(), files), test_clock=test_clock)


def redeploy(api: Any, token: str, tenant: str, model: dict[str, Any], templates: dict[str, str]) -> None:
    files = {
        "plugins/python/auto.py": QUOTE_PLUGINS.encode(),
        **{path: text.encode() for path, text in templates.items()},
    }
    response = api.http.post(
        f"/config/{tenant}/deployments/deploy",
        body=package_with_files(model, files),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/zip", "Accept": "application/json"},
    )
    assert response.status_code == 200, response.body


def documents(tenant: str, suffix: str) -> str:
    return f"/document/{tenant}/documents{suffix}"


def listed(api: Any, token: str, tenant: str, kind: str, locator: str, query: str = "") -> list[dict[str, Any]]:
    return ok(call(api, "GET", documents(tenant, f"/{kind}/{locator}/list{query}"), token))["items"]


def download(api: Any, token: str, tenant: str, locator: str) -> Any:
    response = api.http.get(documents(tenant, f"/{locator}/document"), headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.body
    return response


def multipart(content: bytes, part: str = "document", filename: str = "file.pdf") -> tuple[bytes, str]:
    boundary = "pas-test-boundary"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{part}"; filename="{filename}"\r\n'
            f"Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        + content
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


def pdf_text(content: bytes) -> str:
    import io

    from pypdf import PdfReader

    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


def events_of_type(api: Any, token: str, tenant: str, event_type: str) -> list[dict[str, Any]]:
    """The tenant's events of `event_type`, in order (every page of the stream)."""
    found: list[dict[str, Any]] = []
    query = "pageSize=100"
    while True:
        body = ok(call(api, "GET", f"/event/{tenant}/events/list?{query}", token))
        if not body["events"]:
            return found
        found += [event for event in body["events"] if event["type"] == event_type]
        query = f"pageSize=100&pagingToken={body['pagingToken']}"
