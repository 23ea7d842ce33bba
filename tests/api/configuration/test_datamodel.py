"""GET .../deployments/datamodel (resolve, byStaticLocator), the per-process model cache, and diff."""

from __future__ import annotations

import json
from urllib.parse import quote

from chalicelib.configuration import cache, service
from tests.api.configuration.support import (
    datamodel,
    download,
    get,
    minimal_model,
    new_configured_tenant,
    package,
    zip_json,
)
from tests.builders import system_ctx
from tests.support.api import assert_error, ok


def inheriting_model() -> dict:
    model = minimal_model()
    model["accounts"] = {
        "Base": {"abstract": True, "data": {"name": {"type": "string"}, "tier": {"type": "int?"}}},
        "Person": {"extend": "Base", "data": {"tier": {"type": "string"}, "email": {"type": "string?"}}},
    }
    return model


def test_the_data_model_is_answered_as_deployed_or_with_extend_chains_applied(api, admin_token):
    tenant, created = new_configured_tenant(api, admin_token, package(inheriting_model()))
    version = created["deploymentResult"]["metadata"]["latestVersion"]

    as_deployed = datamodel(api, admin_token, tenant)
    resolved = datamodel(api, admin_token, tenant, "?resolve=true")

    assert as_deployed["accounts"]["Person"] == {
        "extend": "Base",
        "data": {"tier": {"type": "string", "maxLength": 20000}, "email": {"type": "string?", "maxLength": 20000}},
    }
    assert resolved["accounts"]["Person"] == {
        "numberingTrigger": "validation",
        "extend": "Base",
        "data": {
            "name": {"type": "string", "maxLength": 20000},
            "tier": {"type": "string", "maxLength": 20000},
            "email": {"type": "string?", "maxLength": 20000},
        },
    }
    assert resolved["accounts"]["Base"] == as_deployed["accounts"]["Base"]
    assert datamodel(api, admin_token, tenant, f"/{version}?resolve=true") == resolved
    assert datamodel(api, admin_token, tenant, f"/{version}?resolve=false") == as_deployed
    assert datamodel(api, admin_token, tenant, f"/{version}?byStaticLocator=true&resolve=true") == resolved


def test_a_bad_boolean_parameter_answers_400(api, admin_token):
    tenant, _ = new_configured_tenant(api, admin_token)

    body = assert_error(
        get(api, f"/config/{tenant}/deployments/datamodel?resolve=maybe", admin_token), 400, "request.invalid"
    )
    assert [error["field"] for error in body["fieldErrors"]] == ["resolve"]


def test_a_deployed_model_is_read_from_s3_at_most_once_per_process(api, admin_token, s3_calls, ddb_calls):
    tenant, created = new_configured_tenant(api, admin_token)
    version = created["deploymentResult"]["metadata"]["latestVersion"]
    cache.clear()  # a process that did not deploy it
    s3_calls.clear()

    first = get(api, f"/config/{tenant}/deployments/datamodel", admin_token)
    assert s3_calls == ["GetObject"]
    s3_calls.clear()
    ddb_calls.clear()
    again = get(api, f"/config/{tenant}/deployments/datamodel", admin_token)
    by_version = get(api, f"/config/{tenant}/deployments/datamodel/{version}?resolve=true", admin_token)

    assert s3_calls == []
    assert first.body == again.body and by_version.status_code == 200
    assert ddb_calls.count("GetItem") == 1  # the current pointer; the version needs no read at all
    assert service.current_model(system_ctx().for_tenant(tenant)) == (version, json.loads(first.body))
    assert s3_calls == []


def test_the_deploying_process_already_holds_the_new_model(api, admin_token, s3_calls):
    tenant, created = new_configured_tenant(api, admin_token)
    s3_calls.clear()

    ok(get(api, f"/config/{tenant}/deployments/datamodel", admin_token))

    assert s3_calls == []


# --- diff ----------------------------------------------------------------------------------------


def diff(api, token, tenant, config) -> object:
    text = config if isinstance(config, str) else json.dumps(config)
    return get(api, f"/config/{tenant}/deployments/diff?config={quote(text)}", token)


def test_diff_reports_what_deploying_a_configuration_would_add_modify_and_remove(api, admin_token):
    deployed = minimal_model()
    deployed["accounts"]["Company"] = {"data": {"name": {"type": "string"}}}
    tenant, _ = new_configured_tenant(api, admin_token, package(deployed))
    given = minimal_model()
    given["charges"]["fee"] = {"category": "Fee"}
    given["coverages"]["Collision"]["displayName"] = "Collision cover"
    given["defaultCurrency"] = "EUR"

    differences = ok(diff(api, admin_token, tenant, given))

    assert differences["charges"] == {
        "added": {
            "fee": {
                "category": "fee",
                "handling": "normal",
                "invoicing": "scheduled",
                "transactionBundlingEnabled": False,
            }
        },
        "modified": {},
        "removed": {},
    }
    assert differences["coverages"] == {
        "added": {},
        "removed": {},
        "modified": {"Collision": {"coverageTerms": ["Deductible!"], "displayName": "Collision cover"}},
    }
    assert differences["accounts"] == {
        "added": {},
        "modified": {},
        "removed": {
            "Company": {"numberingTrigger": "validation", "data": {"name": {"type": "string", "maxLength": 20000}}}
        },
    }
    assert differences["products"] == {"added": {}, "modified": {}, "removed": {}}
    assert differences["configuration"] == {"added": {}, "modified": {"defaultCurrency": "EUR"}, "removed": {}}


def test_diff_of_the_deployed_configuration_itself_is_empty(api, admin_token):
    tenant, _ = new_configured_tenant(api, admin_token)

    differences = ok(diff(api, admin_token, tenant, minimal_model()))

    assert all(change == {"added": {}, "modified": {}, "removed": {}} for change in differences.values())


def test_diff_needs_a_json_configuration(api, admin_token):
    tenant, _ = new_configured_tenant(api, admin_token)

    missing = assert_error(get(api, f"/config/{tenant}/deployments/diff", admin_token), 400, "request.invalid")
    assert [error["field"] for error in missing["fieldErrors"]] == ["config"]
    assert_error(diff(api, admin_token, tenant, "{not json"), 400, "request.malformed_json")
    assert_error(diff(api, admin_token, tenant, "[1, 2]"), 400, "request.invalid")


def test_the_data_model_carries_every_field_the_platform_requires_in_it(api, admin_token):
    """The platform's definition requires of a payment type its parent, numbering plan and `abstract`, of an
    excess credit plan its disbursement type, of an invoicing plan its installment grouping: a package may
    leave them out, and the answer (as deployed or resolved) carries them, where the download does not. It
    types a property's bounds as strings: one the package wrote as a number is answered as its text."""
    model = minimal_model()
    model["payments"] = {"Card": {"displayName": "Card"}}
    model["excessCreditPlans"] = {"Standard": {"disburseExcess": False}}
    model["invoicingPlans"] = {
        "Monthly": {"consolidateInvoicesOnCancellation": "none", "invoiceFeeHandling": "sum", "invoiceFeeAmounts": {}}
    }
    model["accounts"]["Person"]["data"]["age"] = {"type": "int?", "min": 18}
    tenant, _ = new_configured_tenant(api, admin_token, package(model))

    for answer in (datamodel(api, admin_token, tenant), datamodel(api, admin_token, tenant, "?resolve=true")):
        assert answer["payments"]["Card"] == {
            "displayName": "Card",
            "abstract": False,
            "defaultSearchable": False,
            "extend": "",
            "numberingPlan": "",
            "numberingTrigger": "validation",
        }
        assert answer["excessCreditPlans"]["Standard"]["disbursementType"] == ""
        assert answer["invoicingPlans"]["Monthly"]["installmentGrouping"] == {
            "matching": "generateTime",
            "window": "startAndEnd",
        }
        assert answer["accounts"]["Person"]["data"]["age"] == {"type": "int?", "min": "18"}
    downloaded = download(api, admin_token, tenant)
    assert "extend" not in zip_json(downloaded, "payments/Card/config.json")
    assert zip_json(downloaded, "accounts/Person/config.json")["data"]["age"]["min"] == 18
