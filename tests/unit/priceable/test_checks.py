"""What a request to create or change a priceable thing names must exist in the configuration, with
errors named after the user; and the tenant's defaults for what it leaves out."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

from chalicelib.core.errors import InvalidRequest, InvalidState, PayloadTooLarge
from chalicelib.core.records import MAX_RECORD_BYTES
from chalicelib.http.errors import status_of
from chalicelib.priceable import checks
from chalicelib.priceable.models import Entity

WIDGET = Entity("quote", "widget")
MODEL: dict[str, Any] = {
    "products": {"Box": {"eligibleAccountTypes": ["business", "trust"]}, "Open": {}, "Shape": {"abstract": True}},
    "delinquencyPlans": {"Lenient": {}},
    "autoRenewalPlans": {"Yearly": {}},
    "regions": {"North": {}},
    "installmentPlans": {"Monthly": {}},
    "contactRoles": ["payer", "driver"],
}


@dataclass
class Contact:
    contactLocator: str
    roles: list[str]


def fields(**given: Any) -> SimpleNamespace:
    """A request's fields as check_references reads them (every one it looks at, None unless given)."""
    names = ["delinquencyPlanName", "autoRenewalPlanName", "region", "preferences", "timezone"]
    return SimpleNamespace(**{name: None for name in names} | given)


def preferences(plan: str | None) -> SimpleNamespace:
    return SimpleNamespace(installmentPreferences=SimpleNamespace(installmentPlanName=plan))


def test_a_configured_product_is_answered_typed():
    found = checks.configured_product(MODEL, "Box", WIDGET, in_request=True)
    assert (found.name, found.eligible_account_types) == ("Box", ("business", "trust"))
    assert checks.configured_product(MODEL, "Open", WIDGET).name == "Open"


@pytest.mark.parametrize(
    "name, code, what",
    [
        ("Nope", "quote.unknown_product", "is not a configured product"),
        ("Shape", "quote.abstract_product", "is abstract"),
    ],
)
def test_a_request_naming_an_unknown_or_abstract_product_is_a_400(name, code, what):
    with pytest.raises(InvalidRequest) as raised:
        checks.configured_product(MODEL, name, WIDGET, in_request=True)
    assert (status_of(raised.value), raised.value.code, raised.value.message) == (400, code, f"Product {name} {what}")
    assert [(e.field, e.message) for e in raised.value.field_errors] == [("productName", what)]


@pytest.mark.parametrize("name, what", [("Nope", "is not a configured product"), ("Shape", "is abstract")])
def test_a_stored_record_whose_product_is_gone_is_a_409(name, what):
    with pytest.raises(InvalidState) as raised:
        checks.configured_product(MODEL, name, WIDGET)
    assert (status_of(raised.value), raised.value.code, raised.value.message) == (
        409,
        "quote.product_not_configured",
        f"Product {name} {what} in this configuration",
    )


def test_a_product_for_some_account_types_refuses_the_others():
    box = checks.configured_product(MODEL, "Box", WIDGET)
    checks.check_eligible(box, "Box", "trust", WIDGET)
    checks.check_eligible(checks.configured_product(MODEL, "Open", WIDGET), "Open", "person", WIDGET)

    with pytest.raises(InvalidRequest) as raised:
        checks.check_eligible(box, "Box", "person", WIDGET)

    assert (raised.value.code, raised.value.message) == (
        "quote.account_not_eligible",
        "Product Box is not available to person accounts",
    )
    assert [(e.field, e.message) for e in raised.value.field_errors] == [
        ("accountLocator", "its type person is not among business, trust")
    ]


def test_references_the_configuration_has_pass():
    checks.check_references(
        MODEL,
        fields(
            delinquencyPlanName="Lenient",
            autoRenewalPlanName="Yearly",
            region="North",
            preferences=preferences("Monthly"),
            timezone="Europe/Paris",
        ),
        [Contact("C1", ["payer"]), Contact("C2", ["driver", "payer"])],
        WIDGET,
    )
    checks.check_references(MODEL, fields(preferences=preferences(None)), [], WIDGET)
    checks.check_references(MODEL, fields(preferences=SimpleNamespace(installmentPreferences=None)), [], WIDGET)
    checks.check_references(MODEL, SimpleNamespace(), [], WIDGET)  # a request without these fields at all


def test_every_reference_the_configuration_lacks_is_named():
    with pytest.raises(InvalidRequest) as raised:
        checks.check_references(
            {**MODEL, "regions": None},
            fields(
                delinquencyPlanName="Strict",
                autoRenewalPlanName="Never",
                region="North",
                preferences=preferences("Weekly"),
                timezone="Mars/Base",
            ),
            [Contact("C1", ["payer"]), Contact("C1", ["pilot"])],
            WIDGET,
        )

    assert (raised.value.code, raised.value.message) == (
        "quote.invalid_reference",
        "The widget names something the configuration does not have",
    )
    assert [(e.field, e.message) for e in raised.value.field_errors] == [
        ("delinquencyPlanName", "'Strict' is not defined in the configuration's delinquencyPlans"),
        ("autoRenewalPlanName", "'Never' is not defined in the configuration's autoRenewalPlans"),
        ("region", "'North' is not defined in the configuration's regions"),
        (
            "preferences.installmentPreferences.installmentPlanName",
            "'Weekly' is not defined in the configuration's installmentPlans",
        ),
        ("timezone", "'Mars/Base' is not an IANA time zone"),
        ("contacts.1.contactLocator", "is listed more than once"),
        ("contacts.1.roles", "pilot not in the configured contactRoles: payer, driver"),
    ]


def test_an_installment_plan_needs_configured_installment_plans():
    with pytest.raises(InvalidRequest) as raised:
        checks.check_references({}, fields(preferences=preferences("Monthly")), [Contact("C1", ["anyone"])], WIDGET)
    assert [e.field for e in raised.value.field_errors] == ["preferences.installmentPreferences.installmentPlanName"]


@pytest.mark.parametrize(
    "configured, zone", [("Asia/Tokyo", "Asia/Tokyo"), ("Mars/Base", "UTC"), ("", "UTC"), (7, "UTC"), (None, "UTC")]
)
def test_the_default_time_zone_is_the_configured_one_when_it_is_a_real_zone(configured, zone):
    assert checks.default_time_zone({"defaultTimeZone": configured}) == zone
    assert checks.default_time_zone({}) == "UTC"


def test_the_default_currency_is_the_configured_one_or_usd():
    assert checks.default_currency({"defaultCurrency": "EUR"}) == "EUR"
    assert checks.default_currency({"defaultCurrency": None}) == checks.default_currency({}) == "USD"


@pytest.mark.parametrize(
    "name, known", [("Europe/Paris", True), ("UTC", True), ("Mars/Base", False), ("", False), ("../etc/passwd", False)]
)
def test_a_time_zone_is_an_iana_name(name, known):
    assert checks.is_time_zone(name) is known


class Blob(BaseModel):
    text: str


def test_a_record_too_large_for_one_item_is_a_413_named_after_the_user():
    checks.check_size(Blob(text="x" * (MAX_RECORD_BYTES - 20)), WIDGET)
    with pytest.raises(PayloadTooLarge) as raised:
        checks.check_size(Blob(text="x" * MAX_RECORD_BYTES), WIDGET)
    assert (status_of(raised.value), raised.value.code) == (413, "quote.too_large")
    assert raised.value.message.startswith("The widget would take ")
