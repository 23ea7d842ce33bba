"""A client generated from the platform's OpenAPI definition (tests/support/platform_client.py) works against
our service as a platform user would use it: sign in, deploy a package and upload its rating tables, read the
data model, create an account and a quote, price and issue it, change the policy and cancel it. Every answer
must parse into the generated model: an answer of ours that the platform's clients cannot read fails here."""

from __future__ import annotations

import importlib
import io
import json
import zipfile
from collections.abc import Iterator
from datetime import datetime, timezone
from decimal import Decimal
from types import ModuleType
from typing import Any
from urllib.parse import urlencode
from uuid import UUID

import httpx
import pytest

from tests.support.configs import BASE_RATES_CSV, QUOTE_PLUGINS, VALUE_BANDS_CSV, package_with_files, quotes_model
from tests.support.platform_client import PLATFORM_DEFINITION, generated_client, with_free_form_maps
from tests.support.wsgi import wsgi_app
from tests.unit.configuration.zips import PACKAGES, fixture_model, fixture_zip

BASE_URL = "http://pas.test"
START = datetime(2026, 2, 1, 5, tzinfo=timezone.utc)
"""Midnight in New York; the clock stands at 2026-01-15T09:30Z, and the policy runs a year from here."""
AUGUST = datetime(2026, 8, 1, 4, tzinfo=timezone.utc)
NOVEMBER = datetime(2026, 11, 1, 4, tzinfo=timezone.utc)
SHOWN = 2000
"""How much of an answer a failure shows."""


@pytest.fixture(scope="module")
def platform() -> ModuleType:
    return generated_client(with_free_form_maps(json.loads(PLATFORM_DEFINITION.read_text())))


class Session:
    """A signed-in user's generated AuthenticatedClient over our app, in this process (no network), and the
    answers it received."""

    def __init__(self, platform: ModuleType, transport: httpx.BaseTransport, token: str):
        self.package = platform.__name__
        self.models = importlib.import_module(f"{self.package}.models")
        self.answers: list[httpx.Response] = []
        self.client = platform.AuthenticatedClient(
            base_url=BASE_URL,
            token=token,
            raise_on_unexpected_status=True,
            httpx_args={"transport": transport, "event_hooks": {"response": [self._keep]}},
        )

    def _keep(self, response: httpx.Response) -> None:
        response.read()
        self.answers.append(response)

    def call(self, operation_name: str, *args: Any, **kwargs: Any) -> Any:
        """The generated operation's `sync_detailed(...)`; answers the parsed model of its 200."""
        operation = importlib.import_module(f"{self.package}.api.default.{operation_name}")
        received = len(self.answers)
        try:
            response = operation.sync_detailed(*args, client=self.client, **kwargs)
        except Exception as error:
            if len(self.answers) == received:  # raised before sending: not about our answer
                raise
            answer = self.answers[-1]
            raise AssertionError(
                f"{answer.request.method} {answer.request.url.path} answered "
                f"{answer.text[:SHOWN]}\nwhich {operation_name} cannot parse: {error!r}"
            ) from error
        assert response.status_code == 200, response.content
        assert response.parsed is not None, response.content
        return response.parsed

    def create_tenant(self, package: bytes, name: str) -> Any:
        """The platform's createTenant takes the package as its body, but its definition describes that body
        as a ConfigurationRef in form fields, so the generated operation cannot send a ZIP: the package goes
        through the client's own httpx client, and the answer is parsed with the generated model."""
        answer = self.client.get_httpx_client().post(
            f"/config/createTenant?{urlencode({'name': name})}",
            content=package,
            headers={"Content-Type": "application/zip"},
        )
        assert answer.status_code == 200, answer.text
        result = self.models.TenantDeploymentResult.from_dict(answer.json())
        assert result.deployment_result.is_success is True, answer.text
        return result.locator

    def upload_table(self, operation_name: str, body_type: Any, name: str, csv_text: str, tenant: UUID) -> None:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr(f"{name}.csv", csv_text)
        buffer.seek(0)
        upload = importlib.import_module(f"{self.package}.types").File(
            payload=buffer, file_name=f"{name}.zip", mime_type="application/zip"
        )
        assert self.call(operation_name, tenant, body=body_type(file=upload), name=name, static_name=name).name == name


@pytest.fixture
def session(platform, app) -> Iterator[Session]:
    """Signed in as the administrator: our /auth/token is not in the platform's definition, so the sign-in goes
    through plain httpx over the same transport."""
    from chalicelib.settings import settings

    transport = httpx.WSGITransport(app=wsgi_app(app))
    with httpx.Client(transport=transport, base_url=BASE_URL) as plain:
        answer = plain.post(
            "/auth/token",
            data={
                "grant_type": "password",
                "username": settings().admin_username,
                "password": settings().admin_password,
            },
        )
    assert answer.status_code == 200, answer.text
    yield Session(platform, transport, answer.json()["access_token"])


def test_a_generated_platform_client_quotes_issues_changes_and_cancels_a_policy(session):
    models, call = session.models, session.call
    model = quotes_model()
    model["payments"] = {"Card": {"displayName": "Card"}}  # as every real package has one
    tenant = session.create_tenant(
        package_with_files(model, {"plugins/python/auto.py": QUOTE_PLUGINS.encode()}), "Generated client insurer"
    )
    session.upload_table("create_lookup_table", models.CreateLookupTableBody, "BaseRates", BASE_RATES_CSV, tenant)
    session.upload_table("create_range_table", models.CreateRangeTableBody, "ValueBands", VALUE_BANDS_CSV, tenant)

    datamodel = call("fetch_config_definition", tenant)
    assert sorted(datamodel.products.additional_properties) == ["Homeowners", "PersonalAuto"]
    assert (datamodel.payments["Card"].display_name, datamodel.payments["Card"].numbering_plan) == ("Card", "")

    account = call(
        "create_account",
        tenant,
        body=models.AccountCreateRequest(
            type_="PersonAccount",
            data=models.AccountCreateRequestData.from_dict(
                {
                    "firstName": "Ada",
                    "lastName": "Lovelace",
                    "email": "ada@example.com",
                    "address": {"line1": "12 St James's Square", "city": "London", "postcode": "12345"},
                }
            ),
        ),
    )
    assert (account.type_, account.data["firstName"]) == ("PersonAccount", "Ada")

    vehicle = models.ElementCreateRequest(
        type_="Vehicle",
        data=models.ElementCreateRequestData.from_dict({"vin": "1HGCM82633A004352", "value": 12000.5}),
        elements=[
            models.ElementCreateRequest(
                type_="Collision", coverage_terms=models.ElementCreateRequestCoverageTerms.from_dict({"Limit": "l50k"})
            )
        ],
    )
    quote = call(
        "create_quote",
        tenant,
        body=models.QuoteCreateRequest(
            product_name="PersonalAuto",
            account_locator=account.locator,
            start_time=START,
            contacts=[],
            invoice_fee_amount=0,
            data=models.QuoteCreateRequestData.from_dict({"channel": "web"}),
            elements=[vehicle],
        ),
    )
    assert quote.quote_state == "draft"

    assert call("validate_quote", tenant, quote.locator).quote_state == "validated"
    # a premium of 100 a month for a vehicle worth under 20,000, and a tax of 25
    assert amounts(call("price_quote", tenant, quote.locator).items) == [
        ("premium", Decimal("1200")),
        ("tax", Decimal("25")),
    ]
    assert call("underwrite_quote", tenant, quote.locator).quote_state == "underwritten"
    assert call("accept_quote", tenant, quote.locator).quote_state == "accepted"
    issued = call("issue_quote", tenant, quote.locator)
    assert issued.quote_state == "issued"
    policy = call("fetch_policy", tenant, issued.policy_locator)
    assert (policy.start_time, policy.end_time) == (START, START.replace(year=2027))

    segment = call("fetch_policy_segment", tenant, policy.latest_segment_locator)
    (insured,) = [element for element in segment.element.elements if element.type_ == "Vehicle"]
    change = call(
        "change_policy",
        tenant,
        policy.locator,
        body=[
            models.ParamsChangeInstructionCreateRequest(
                action=models.ParamsChangeInstructionCreateRequestAction.PARAMS, effective_time=AUGUST
            ),
            models.ModifyChangeInstructionCreateRequest(
                action=models.ModifyChangeInstructionCreateRequestAction.MODIFY,
                static_locator=insured.static_locator,
                set_data=models.ModifyChangeInstructionCreateRequestSetData.from_dict({"value": 25000}),
                remove_data=models.ModifyChangeInstructionCreateRequestRemoveData(),
                set_coverage_terms=models.ModifyChangeInstructionCreateRequestSetCoverageTerms(),
                remove_coverage_terms=models.ModifyChangeInstructionCreateRequestRemoveCoverageTerms(),
            ),
        ],
    )
    assert (change.transaction_category, change.transaction_state) == ("change", "draft")
    # six months at 150 and the new segment's tax; six months at 100 and half the tax taken back
    assert amounts(call("price_transaction", tenant, change.locator).charges) == [
        ("premium", Decimal("-600")),
        ("premium", Decimal("900")),
        ("tax", Decimal("-12.5")),
        ("tax", Decimal("25")),
    ]
    assert call("issue_transaction", tenant, change.locator).transaction_state == "issued"

    cancellation = call(
        "cancel_policy",
        tenant,
        policy.locator,
        body=models.ParamsChangeInstructionCreateRequest(
            action=models.ParamsChangeInstructionCreateRequestAction.PARAMS, effective_time=NOVEMBER
        ),
    )
    assert (cancellation.transaction_category, cancellation.effective_time) == ("cancellation", NOVEMBER)
    assert call("issue_transaction", tenant, cancellation.locator).transaction_state == "issued"
    issue_request = session.answers[-1].headers["X-Request-Id"]
    # three months at 150 and half the change segment's tax taken back
    assert amounts(call("fetch_transaction_pricing", tenant, cancellation.locator).charges) == [
        ("premium", Decimal("-450")),
        ("tax", Decimal("-12.5")),
    ]

    cancelled = call("fetch_policy", tenant, policy.locator)
    assert cancelled.issued_transaction_locator == cancellation.locator
    assert [transaction.locator for transaction in call("fetch_issued_transactions", tenant, policy.locator).items] == [
        policy.issued_transaction_locator,
        change.locator,
        cancellation.locator,
    ]
    assert set(cancelled.statuses) == {"pending", "cancelPending"}  # the clock stands before the policy starts
    events = call("fetch_events_for_a_request", tenant, issue_request)
    assert [event.type_ for event in events][-2:] == ["policy.cancellation.issue", "policy.status.update"]
    assert events[-2].data["policyLocator"] == policy.locator


@pytest.mark.parametrize("name", PACKAGES)
def test_the_generated_client_reads_the_data_model_of_every_real_package(session, name):
    tenant = session.create_tenant(fixture_zip(name), name)

    for resolve in (False, True):
        model = session.call("fetch_config_definition", tenant, resolve=resolve)
        assert model.products.additional_properties.keys() == fixture_model(name)["products"].keys()


def amounts(charges: list[Any]) -> list[tuple[str, Decimal]]:
    """(chargeType, amount) of each charge, sorted: the generated models hold amounts as floats."""
    return sorted((charge.charge_type, Decimal(str(charge.amount))) for charge in charges)
