"""docs/plugins.md's worked example: the configuration package docs/examples/gadgetcover/ deployed through
the API, quoted, priced, issued and changed. The charges, validation errors and plugin failure the page
shows are rendered here from the service's answers and must stand in the page as they are, so the page
cannot drift from what the service does; the plugin limits it gives are the runner's."""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import fields
from decimal import Decimal
from typing import Any

import pytest

from chalicelib.plugins.local import MB, Limits
from tests.conftest import ROOT
from tests.support.api import call, ok
from tests.support.configs import deployed_tenant

EXAMPLE = ROOT / "docs" / "examples" / "gadgetcover"
PAGE = (ROOT / "docs" / "plugins.md").read_text()
PLUGIN = "plugins/python/gadgets.py"
START = "2027-01-01T05:00:00Z"
"""Midnight in New York (the package's default time zone): the policy runs the 12 months of 2027."""
CHANGED = "2027-07-01T04:00:00Z"
"""Midnight in New York, six whole months in."""
PHONE = {"type": "Gadget", "data": {"category": "phone", "value": 900}}
LAPTOP = {"type": "Gadget", "data": {"category": "laptop", "value": 1200}}


def example_package(plugin_edit: tuple[str, str] | None = None) -> bytes:
    """The example folder as a ZIP, config.json at its root; `plugin_edit` (old, new) changes the plugin."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(EXAMPLE.rglob("*")):
            if path.is_file():
                name = path.relative_to(EXAMPLE).as_posix()
                content = path.read_text()
                if plugin_edit and name == PLUGIN:
                    assert plugin_edit[0] in content
                    content = content.replace(*plugin_edit)
                archive.writestr(name, content)
    return buffer.getvalue()


def gadget_cover(api, token, jobs, package: bytes) -> tuple[str, str]:
    """A tenant with the package deployed and its bootstrap table loaded, and a customer: (tenant, account)."""
    tenant = deployed_tenant(api, token, package, name="GadgetCover")
    jobs.drain()
    account = ok(
        call(api, "POST", f"/policy/{tenant}/accounts", token, {"type": "Customer", "data": {"name": "Ada Lovelace"}})
    )
    return tenant, account["locator"]


def quote(api, token, tenant, account, *gadgets) -> dict[str, Any]:
    return ok(
        call(
            api,
            "POST",
            f"/policy/{tenant}/quotes",
            token,
            {"productName": "GadgetCover", "accountLocator": account, "startTime": START, "elements": list(gadgets)},
        )
    )


def table_after(caption: str) -> list[str]:
    """The lines of the page's first Markdown table after the line that holds `caption`."""
    lines = PAGE[PAGE.index(caption) :].splitlines()[1:]
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return lines[start:end]


def charge_table(charges: list[dict[str, Any]], labels: dict[str, str]) -> list[str]:
    """The charges as the page's tables show them, `labels` naming the elements by locator."""
    rows = [
        f"| {labels[c['elementLocator']]} | {c['chargeType']} | {'reversal' if c.get('reversalOfLocator') else ''}"
        f" | {c['rate']} | {c['amount']} |"
        for c in charges
    ]
    return ["| element | chargeType | reverses | rate | amount |", "| --- | --- | --- | --- | --- |", *sorted(rows)]


def elements_of(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    root = body["element"]
    return {root["locator"]: root, **{child["locator"]: child for child in root["elements"]}}


def label(element: dict[str, Any]) -> str:
    if element["type"] == "GadgetCover":
        return "GadgetCover (the policy)"
    return f"Gadget ({element['data']['category']}, {element['data']['value']})"


@pytest.fixture
def example(api, admin_token, jobs) -> tuple[str, str]:
    return gadget_cover(api, admin_token, jobs, example_package())


def test_a_quote_for_a_phone_gets_the_charges_the_page_shows(api, admin_token, example):
    tenant, account = example
    drafted = quote(api, admin_token, tenant, account, PHONE)

    priced = ok(call(api, "PATCH", f"/policy/{tenant}/quotes/{drafted['locator']}/price", admin_token))

    assert priced["quoteState"] == "priced"
    labels = {locator: label(element) for locator, element in elements_of(drafted).items()}
    assert charge_table(priced["items"], labels) == table_after("Pricing the quote answers")
    assert sum(Decimal(str(c["amount"])) for c in priced["items"]) == Decimal("66.00")


def test_a_change_adding_a_laptop_half_way_gets_the_charges_the_page_shows(api, admin_token, example):
    tenant, account = example
    drafted = quote(api, admin_token, tenant, account, PHONE)
    issued = ok(call(api, "PATCH", f"/policy/{tenant}/quotes/{drafted['locator']}/issue", admin_token))
    policy = issued["policyLocator"]

    change = ok(
        call(
            api,
            "PATCH",
            f"/policy/{tenant}/policies/{policy}/change",
            admin_token,
            [{"action": "params", "effectiveTime": CHANGED}, {"action": "add", "elements": [LAPTOP]}],
        )
    )
    priced = ok(call(api, "PATCH", f"/policy/{tenant}/transactions/{change['locator']}/price", admin_token))

    assert priced["transactionState"] == "priced"
    segment = ok(call(api, "GET", f"/policy/{tenant}/transactions/{change['locator']}/segment", admin_token))
    labels = {locator: label(element) for locator, element in {**elements_of(drafted), **elements_of(segment)}.items()}
    assert charge_table(priced["charges"], labels) == table_after("Pricing the change answers")


def test_validation_errors_are_the_ones_the_page_shows(api, admin_token, example):
    tenant, account = example
    drafted = quote(
        api,
        admin_token,
        tenant,
        account,
        {"type": "Gadget", "data": {"category": "phone", "value": 2000}},
        {"type": "Gadget", "data": {"category": "camera", "value": 300}},
    )

    validated = ok(call(api, "PATCH", f"/policy/{tenant}/quotes/{drafted['locator']}/validate", admin_token))

    assert validated["quoteState"] == "draft"
    labels = {
        locator: f"<the {element['data'].get('category', 'quote')}>"
        for locator, element in elements_of(drafted).items()
    }
    result = validated["validationResult"]
    assert result["success"] is False
    for item in result["validationItems"]:
        shown = json.dumps({**item, "locator": labels[item["locator"]]})
        assert shown in PAGE, shown


def test_a_plugin_that_raises_fails_the_step_with_the_message_the_page_shows(api, admin_token, jobs):
    typo = ('_rates(gadget)["monthlyRate"]', '_rates(gadget)["monthlyrate"]')
    tenant, account = gadget_cover(api, admin_token, jobs, example_package(plugin_edit=typo))
    drafted = quote(api, admin_token, tenant, account, PHONE)

    answered = ok(call(api, "PATCH", f"/policy/{tenant}/quotes/{drafted['locator']}/price", admin_token))

    assert answered["quoteState"] == "draft"  # what it was: nothing of the step is stored
    assert answered["validationResult"]["success"] is False
    [item] = answered["validationResult"]["validationItems"]
    assert (item["locator"], item["elementType"]) == (drafted["locator"], "GadgetCover")
    [message] = item["errors"]
    assert f"`{message}`" in PAGE, message


def test_the_limits_the_page_gives_are_the_runner_s():
    limits = Limits()
    shown = table_after("runs under these limits")

    assert len(shown) == 2 + len(fields(Limits)) - 1  # every limit a plugin meets (not the start-up wait)
    for name in (field.name for field in fields(Limits) if field.name != "startup_seconds"):
        value = getattr(limits, name)
        text = f"{value // MB} MB" if name.endswith("bytes") else f"{value:g} s" if "seconds" in name else str(value)
        assert any(line.startswith(f"| `{name}` | {text} |") for line in shown), (name, text)


def test_the_plugin_module_the_page_shows_is_the_example_s():
    assert f"```python\n{(EXAMPLE / PLUGIN).read_text()}```" in PAGE
