import copy
from decimal import Decimal
from typing import Any

import pytest

from chalicelib.configuration.package import read_package
from chalicelib.configuration.validator import validate
from tests.unit.configuration.zips import (
    PACKAGES,
    SERVER_DOWNLOAD,
    directory_files,
    fixture_model,
    fixture_zip,
    zip_files,
)

BUILTINS = "string, int, long, decimal, date, datetime, boolean, guid"
ELEMENTS = "coverages, exposures, exposureGroups or policyLines"
NOT_A_TYPE = "is not a valid type: a built-in type or a data type, optionally followed by ?, * or +"


def minimal() -> dict[str, Any]:
    return {
        "defaultCurrency": "USD",
        "accounts": {"Person": {"data": {"name": {"type": "string"}}}},
        "products": {"Auto": {"eligibleAccountTypes": ["Person"], "contents": ["Vehicle+"], "charges": ["premium"]}},
        "exposures": {"Vehicle": {"contents": ["Collision?"], "data": {"vin": {"type": "string"}}}},
        "coverages": {"Collision": {"coverageTerms": ["Deductible!"]}},
        "coverageTerms": {"Deductible": {"type": "deductible", "options": {"*d500": {"value": 500}}}},
        "charges": {"premium": {"category": "premium"}},
    }


def errors_of(model: dict[str, Any]) -> list[str]:
    outcome = validate(model)
    assert outcome.is_success is (not outcome.errors)
    return outcome.errors


def test_minimal_model_is_valid():
    assert errors_of(minimal()) == []


# The real packages ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PACKAGES)
@pytest.mark.parametrize("wrap", [None, "socotra-config"])
def test_real_package_is_valid(name, wrap):
    outcome = validate(read_package(fixture_zip(name, wrap)).model)

    assert (outcome.is_success, outcome.errors) == (True, [])
    assert outcome.as_result() == {"isSuccess": True, "errors": []}


def test_capitalised_charge_categories_of_mgt_are_accepted_and_put_in_canonical_case():
    raw = fixture_model("mgt-commercial")["charges"]
    assert {charge["category"] for charge in raw.values()} == {"Premium", "Fee", "Tax", "fee"}

    charges = validate(fixture_model("mgt-commercial")).model["charges"]

    assert {name: charge["category"] for name, charge in charges.items()} == {
        "BrokerFee": "fee",
        "CarrierPolicyFee": "fee",
        "Fee": "fee",
        "InstallmentFee": "fee",
        "Premium": "premium",
        "StampingFee": "fee",
        "Tax": "tax",
        "Terrorism": "fee",
    }


def test_every_default_the_server_added_to_iag_is_in_the_normal_form():
    """_server-observed: what the real platform handed back after deploying iag-motor-demo."""
    upload = fixture_model("iag-motor-demo")
    server = read_package(zip_files(directory_files(SERVER_DOWNLOAD))).model
    added = list(_paths_only_in(server, upload))
    assert len(added) == 16  # maxLength x14, numberingTrigger, delinquencyLevel

    normal_form = validate(upload).model

    for path, value in added:
        assert _at(normal_form, path) == value, path


def test_validation_does_not_change_its_input():
    model = fixture_model("iag-motor-demo")
    before = copy.deepcopy(model)

    validate(model)

    assert model == before


# Defaults -------------------------------------------------------------------------------------------


def test_platform_defaults_fill_fields_real_packages_omit():
    normal_form = validate(fixture_model("mgt-commercial")).model

    assert normal_form["charges"]["Premium"] == {
        "category": "premium",
        "handling": "normal",
        "invoicing": "scheduled",
        "transactionBundlingEnabled": False,
    }
    assert normal_form["documents"]["BPPPropertyCoverage"]["selectionTimeBasis"] == "termStartTime"
    assert normal_form["documents"]["BPPPropertyCoverage"]["customFonts"] == []
    assert normal_form["tables"]["Construction"]["columns"]["group"] == {"dataType": "string", "isKey": False}
    assert normal_form["installmentPlans"]["SampleInstallmentPlan"]["maxInstallmentsPerTerm"] == 1000
    assert normal_form["installmentPlans"]["SampleInstallmentPlan"]["installmentWeights"] == []
    assert normal_form["numberingPlans"]["MGTPolicyNumberingPlan"] == {
        "initialCoreNumber": "0000000",
        "format": "\\M\\G\\T\\S-{product}-#######",
        "copyFromQuote": True,
        "termNumberFormat": "{policyNumber}",
        "initialQuoteCoreNumber": "0000000",
        "quoteNumberFormat": "\\M\\G\\T\\S-{product}-#######",
    }


def test_itemcare_defaults():
    normal_form = validate(fixture_model("itemcare")).model

    assert normal_form["accounts"]["Account"]["data"] == {}
    assert normal_form["accounts"]["Account"]["numberingTrigger"] == "validation"
    assert normal_form["retryPlans"]["Standard"] == {"attempts": 0, "hoursBetweenAttempts": []}
    assert normal_form["excessCreditPlans"]["Standard"]["negativeInvoiceHandling"] == {
        "automaticallySettleNegativeInvoices": "toCreditBalance",
        "prioritizeOverlappingCoveragePeriods": False,
        "processingMode": "accountLevel",
        "targetInvoicePriority": "earliestFirst",
        "targetInvoices": "allOpenInvoices",
        "yieldExcessToCreditBalance": True,
    }
    assert normal_form["excessCreditPlans"]["Standard"]["advanceDisbursementTo"] == "executed"


def test_string_fields_get_a_max_length_and_other_types_do_not():
    model = minimal()
    model["accounts"]["Person"]["data"] = {
        "untyped": {},
        "nickname": {"type": "string?"},
        "tags": {"type": "string+"},
        "short": {"type": "string", "maxLength": 20},
        "age": {"type": "int"},
    }

    data = validate(model).model["accounts"]["Person"]["data"]

    assert data == {
        "untyped": {"type": "string", "maxLength": 20000},
        "nickname": {"type": "string?", "maxLength": 20000},
        "tags": {"type": "string+", "maxLength": 20000},
        "short": {"type": "string", "maxLength": 20},
        "age": {"type": "int"},
    }


def test_installment_plan_defaults_come_from_the_deprecated_configuration_settings_when_present():
    model = minimal()
    model.update(defaultAnchorMode="DUEDAY", defaultDueLeadDays=3)
    model["installmentPlans"] = {"Monthly": {"cadence": "monthly"}}

    plan = validate(model).model["installmentPlans"]["Monthly"]

    assert plan == {
        "cadence": "monthly",
        "anchorMode": "dueDay",
        "dueLeadDays": 3,
        "generateLeadDays": 0,
        "maxInstallmentsPerTerm": 1000,
        "installmentWeights": [],
    }


def test_an_entity_that_extends_another_gets_no_defaults_of_its_own():
    model = minimal()
    model["accounts"] = {
        "Base": {"abstract": True, "data": {}, "numberingTrigger": "creation"},
        "Member": {"extend": "Base"},
    }
    model["products"]["Auto"]["eligibleAccountTypes"] = ["Member"]

    outcome = validate(model)

    assert outcome.errors == []
    assert outcome.model["accounts"]["Member"] == {"extend": "Base"}


# References -----------------------------------------------------------------------------------------


def test_unknown_references_are_reported_with_their_path():
    model = minimal()
    model["products"]["Auto"].update(
        eligibleAccountTypes=["Person", "Company"],
        contents=["Vehicle+", "Trailer*"],
        charges=["premium", "tax"],
        documents=["Declarations"],
        defaultDelinquencyPlan="Strict",
    )
    model["exposures"]["Vehicle"]["coverageTerms"] = ["Limit?"]
    model["accounts"]["Person"]["numberingPlan"] = "AccountNumbers"
    model.update(defaultInstallmentPlan="Monthly", defaultInvoiceDocument="Invoice")

    assert errors_of(model) == [
        "accounts.Person.numberingPlan: 'AccountNumbers' is not defined in numberingPlans",
        "products.Auto.eligibleAccountTypes[1]: 'Company' is not defined in accounts",
        f"products.Auto.contents[1]: 'Trailer' is not defined in {ELEMENTS}",
        "products.Auto.charges[1]: 'tax' is not defined in charges",
        "products.Auto.documents[0]: 'Declarations' is not defined in documents",
        "products.Auto.defaultDelinquencyPlan: 'Strict' is not defined in delinquencyPlans",
        "exposures.Vehicle.coverageTerms[0]: 'Limit' is not defined in coverageTerms",
        "defaultInstallmentPlan: 'Monthly' is not defined in installmentPlans",
        "defaultInvoiceDocument: 'Invoice' is not defined in documents",
    ]


@pytest.mark.parametrize("quantifier", ["", "?", "*", "+", "!"])
def test_contents_take_every_quantifier(quantifier):
    model = minimal()
    model["products"]["Auto"]["contents"] = [f"Vehicle{quantifier}"]

    assert errors_of(model) == []


def test_coverage_terms_take_only_optional_and_required_quantifiers():
    model = minimal()
    model["coverages"]["Collision"]["coverageTerms"] = ["Deductible+"]

    assert errors_of(model) == [
        "coverages.Collision.coverageTerms[0]: 'Deductible+': the quantifier '+' is not allowed here (allowed: ?, !)"
    ]


def test_plain_name_lists_take_no_quantifier():
    model = minimal()
    model["products"]["Auto"]["charges"] = ["premium?"]

    assert errors_of(model) == [
        "products.Auto.charges[0]: 'premium?': the quantifier '?' is not allowed here (a plain name is expected)"
    ]


def test_abstract_entities_cannot_be_used_directly():
    model = minimal()
    model["exposures"]["Vehicle"]["abstract"] = True
    model["accounts"]["Person"]["abstract"] = True

    assert errors_of(model) == [
        "products.Auto.eligibleAccountTypes[0]: 'Person' is abstract and cannot be used directly",
        "products.Auto.contents[0]: 'Vehicle' is abstract and cannot be used directly",
    ]


def test_a_name_listed_twice_is_reported():
    model = minimal()
    model["exposures"]["Vehicle"]["contents"] = ["Collision?", "Collision+"]

    assert errors_of(model) == ["exposures.Vehicle.contents[1]: 'Collision' is listed more than once"]


def test_lapse_and_renewal_types_must_have_the_right_category_or_name_it():
    model = minimal()
    model["transactionTypes"] = {"AddDriver": {"category": "change"}, "NonPay": {"category": "cancellation"}}
    model["delinquencyPlans"] = {
        "Standard": {"gracePeriodDays": 7, "lapseTransactionType": "cancellation"},
        "Custom": {"gracePeriodDays": 7, "lapseTransactionType": "NonPay"},
        "Wrong": {"gracePeriodDays": 7, "lapseTransactionType": "AddDriver"},
    }
    model["autoRenewalPlans"] = {"Auto": {"generateAutoRenewals": True, "renewalTransactionType": "NonPay"}}

    assert errors_of(model) == [
        "delinquencyPlans.Wrong.lapseTransactionType: 'AddDriver' is a change transaction type, not cancellation",
        "autoRenewalPlans.Auto.renewalTransactionType: 'NonPay' is a cancellation transaction type, not renewal",
    ]


def test_constraint_references_resolve_to_a_constraint_table_and_its_column():
    model = minimal()
    model["constraintTables"] = {"Counties": {"columns": {"county": {"dataType": "string", "makeDistinct": True}}}}
    model["accounts"]["Person"]["data"] = {
        "county": {"constraint": {"table": "Counties", "column": "county", "where": {}}},
        "state": {"constraint": {"table": "Counties", "column": "state", "where": {}}},
        "zip": {"constraint": {"table": "ZipCodes", "column": "zip", "where": {}}},
    }

    assert errors_of(model) == [
        "accounts.Person.data.state.constraint.column: 'state' is not a column of constraint table 'Counties'",
        "accounts.Person.data.zip.constraint.table: 'ZipCodes' is not defined in constraintTables",
    ]


def test_bootstrap_resources_name_tables_or_documents_and_groups_name_instances():
    model = minimal()
    model["tables"] = {"Rates": {"columns": {"code": {"dataType": "string", "isKey": True}}}}
    model["bootstrap"] = {
        "resources": {
            "resourceInstances": {"Rates01": {"staticName": "Rates"}, "Forms01": {"staticName": "Forms"}},
            "resourceGroups": {
                "initial": {"selectionStartTime": "2020-01-01T00:00:00Z", "resourceNames": ["Rates01", "Rates02"]},
                "later": {"selectionStartTime": "next year", "resourceNames": []},
            },
        }
    }

    assert errors_of(model) == [
        "bootstrap.resources.resourceInstances.Forms01.staticName: "
        "'Forms' is not defined in tables, rangeTables, constraintTables, documents, templateSnippets or secrets",
        "bootstrap.resources.resourceGroups.initial.resourceNames[1]: "
        "'Rates02' is not defined in bootstrap.resources.resourceInstances",
        "bootstrap.resources.resourceGroups.later.selectionStartTime: "
        "expected an ISO-8601 date-time, got string 'next year'",
    ]


def test_role_qualifications_name_a_defined_level_or_higher():
    model = minimal()
    model["workManagement"] = {
        "qualifications": {"underwriting": ["UW-1", "UW-2"]},
        "assignmentRoles": {
            "senior": {"qualification": {"underwriting": "UW-2+"}},
            "chief": {"qualification": {"underwriting": "UW-3"}},
            "clerk": {"qualification": {"claims": "CL-1"}},
        },
    }

    assert errors_of(model) == [
        "workManagement.assignmentRoles.chief.qualification.underwriting: "
        "'UW-3' is not a level of qualification 'underwriting'",
        "workManagement.assignmentRoles.clerk.qualification.claims: "
        "'claims' is not defined in workManagement.qualifications",
    ]


# extend ---------------------------------------------------------------------------------------------


def test_extend_must_name_an_entity_of_the_same_collection():
    model = minimal()
    model["exposures"]["Trailer"] = {"extend": "Collision"}

    assert errors_of(model) == ["exposures.Trailer.extend: 'Collision' is not defined in exposures"]


def test_circular_extend_chains_are_reported_on_each_member():
    model = minimal()
    model["dataTypes"] = {
        "A": {"extend": "B", "data": {}},
        "B": {"extend": "A", "data": {}},
        "C": {"extend": "A", "data": {}},
        "Self": {"extend": "Self", "data": {}},
    }

    assert errors_of(model) == [
        "dataTypes.A.extend: the extend chain is circular: A -> B -> A",
        "dataTypes.B.extend: the extend chain is circular: B -> A -> B",
        "dataTypes.Self.extend: the extend chain is circular: Self -> Self",
    ]


# Names and property types ---------------------------------------------------------------------------


def test_names_must_be_identifiers():
    model = minimal()
    model["charges"]["2x"] = {"category": "fee"}
    model["accounts"]["Person"]["data"].update({"class": {}, "first name": {}, "prénom": {}})
    model["coverageTerms"]["Deductible"]["options"].update({"d-1000": {"value": 1000}, "d_250": {"value": 250}})
    model["coverageTerms"]["x" * 129] = {"type": "limit"}

    assert errors_of(model) == [
        "accounts.Person.data.class: 'class' is a reserved word",
        "accounts.Person.data.first name: 'first name' is not a valid name: "
        "a letter or underscore, then letters, digits or underscores",
        "coverageTerms.Deductible.options.d-1000: 'd-1000' is not a valid name: "
        "a letter or underscore, then letters, digits or underscores",
        f"coverageTerms.{'x' * 129}: '{'x' * 20}...' is longer than 128 characters",
        "charges.2x: '2x' is not a valid name: a letter or underscore, then letters, digits or underscores",
    ]


def test_a_coverage_term_has_at_most_one_default_option():
    model = minimal()
    model["coverageTerms"]["Deductible"]["options"]["*d1000"] = {"value": 1000}

    assert errors_of(model) == [
        "coverageTerms.Deductible.options: more than one default option (marked *): *d500, *d1000"
    ]


@pytest.mark.parametrize(
    "type_name",
    ["string", "long?", "decimal*", "date+", "datetime", "boolean?", "guid", "Address", "Address*", "Address!"],
)
def test_property_types_follow_the_grammar(type_name):
    model = minimal()
    model["dataTypes"] = {"Address": {"data": {"street": {}}}}
    model["accounts"]["Person"]["data"]["field"] = {"type": type_name}

    assert errors_of(model) == []


@pytest.mark.parametrize(
    ("type_name", "error"),
    [
        ("strng", f"'strng' is neither a built-in type ({BUILTINS}) nor defined in dataTypes"),
        ("String", f"'String' is neither a built-in type ({BUILTINS}) nor defined in dataTypes"),
        ("string??", f"'string??' {NOT_A_TYPE}"),
        ("Vehicle[]", f"'Vehicle[]' {NOT_A_TYPE}"),
        ("int!", "'int!': '!' applies to data types only"),
        (7, f"7 {NOT_A_TYPE}"),
    ],
)
def test_property_types_outside_the_grammar_are_reported(type_name, error):
    model = minimal()
    model["accounts"]["Person"]["data"]["field"] = {"type": type_name}

    assert errors_of(model) == [f"accounts.Person.data.field.type: {error}"]


# Enums, JSON types and required fields --------------------------------------------------------------


def test_enum_values_are_checked():
    model = minimal()
    model["charges"]["premium"].update(handling="prorated", invoicing="later")
    model["products"]["Auto"].update(defaultDurationBasis="fortnights", numberingTrigger="never")
    model["coverageTerms"]["Deductible"]["type"] = "excess"
    model["accounts"]["Person"]["data"]["amount"] = {"type": "decimal", "roundingMode": "bankers"}

    assert errors_of(model) == [
        "accounts.Person.data.amount.roundingMode: 'bankers' is not one of "
        "ceiling, down, floor, halfDown, halfEven, halfUp, up",
        "products.Auto.defaultDurationBasis: 'fortnights' is not one of years, months, weeks, days, hours",
        "products.Auto.numberingTrigger: 'never' is not one of creation, validation",
        "coverageTerms.Deductible.type: 'excess' is not one of splitLimit, deductible, limit",
        "charges.premium.handling: 'prorated' is not one of flat, normal, retention",
        "charges.premium.invoicing: 'later' is not one of immediate, next, scheduled",
    ]


def test_enum_values_are_accepted_in_any_casing_and_normalised():
    model = minimal()
    model["charges"]["premium"]["category"] = "PREMIUM"
    model["charges"]["expenses"] = {"category": "nonfinancial", "handling": "Flat"}
    model["defaultDurationBasis"] = "Months"

    outcome = validate(model)

    assert outcome.errors == []
    assert outcome.model["charges"]["premium"]["category"] == "premium"
    assert outcome.model["charges"]["expenses"]["category"] == "nonFinancial"
    assert outcome.model["charges"]["expenses"]["handling"] == "flat"
    assert outcome.model["defaultDurationBasis"] == "months"


def test_json_types_are_checked():
    model = minimal()
    model["products"]["Auto"].update(abstract="no", defaultTermDuration="12", contents="Vehicle+")
    model["accounts"]["Person"]["data"]["age"] = {
        "type": "int",
        "min": 18,
        "max": Decimal("120"),
        "precision": 1.5,
    }
    model["defaultCurrency"] = "usd"
    model["shortfallTolerancePlans"] = {"basic": {"currencyTolerances": {"USD": Decimal("1.5"), "euro": 1}}}

    assert errors_of(model) == [
        "defaultCurrency: expected a currency code, got string 'usd'",
        "accounts.Person.data.age.precision: expected an integer, got number 1.5",
        "products.Auto.contents: expected an array, got string",
        "products.Auto.abstract: expected a boolean, got string 'no'",
        "products.Auto.defaultTermDuration: expected a number, got string '12'",
        "shortfallTolerancePlans.basic.currencyTolerances.euro: 'euro' is not an ISO 4217 currency code",
    ]


def test_property_scope_is_a_list_of_qq_q_and_p():
    model = minimal()
    model["accounts"]["Person"]["data"] = {
        "a": {"scope": "Q, QQ, P"},
        "b": {"scope": "QQ,P"},
        "c": {"scope": "QQ,X"},
    }

    assert errors_of(model) == [
        "accounts.Person.data.c.scope: expected a comma-separated list of QQ, Q and P, got string 'QQ,X'"
    ]


def test_required_fields_are_reported():
    model = minimal()
    model["charges"]["fee"] = {"handling": "flat"}
    model["transactionTypes"] = {"AddDriver": {"costBearing": True}}
    model["numberingPlans"] = {"Policies": {"format": "P-#####"}}

    assert errors_of(model) == [
        "charges.fee.category: is required",
        "transactionTypes.AddDriver.category: is required",
        "numberingPlans.Policies.copyFromQuote: is required",
        "numberingPlans.Policies.initialCoreNumber: is required",
    ]


def test_the_minimum_content_is_an_account_type_a_product_and_a_premium_charge():
    assert errors_of({"charges": {"fee": {"category": "fee"}}}) == [
        "accounts: at least one account type is required",
        "products: at least one product is required",
        "charges: at least one charge with category 'premium' is required",
    ]


def test_unknown_and_deprecated_keys_are_kept_not_rejected():
    model = minimal()
    model["defaultBillingTrigger"] = "issue"
    model["accounts"]["Person"]["numberingString"] = "CA"

    outcome = validate(model)

    assert outcome.errors == []
    assert outcome.model["defaultBillingTrigger"] == "issue"
    assert outcome.model["accounts"]["Person"]["numberingString"] == "CA"


def test_every_error_is_reported_at_once():
    model = minimal()
    model["charges"]["premium"]["category"] = "bonus"
    model["products"]["Auto"]["contents"] = ["Ghost"]
    model["accounts"]["Person"]["data"]["x"] = {"type": "money"}

    assert errors_of(model) == [
        f"accounts.Person.data.x.type: 'money' is neither a built-in type ({BUILTINS}) nor defined in dataTypes",
        f"products.Auto.contents[0]: 'Ghost' is not defined in {ELEMENTS}",
        "charges.premium.category: 'bonus' is not one of "
        "cededPremium, credit, fee, invoiceFee, none, nonFinancial, premium, surcharge, tax",
        "charges: at least one charge with category 'premium' is required",
    ]


def test_legacy_configurations_are_refused_by_name():
    outcome = validate({"timezone": "America/New_York", "currency": "USD", "products": {}})

    assert outcome.is_success is False
    assert outcome.errors == [
        "this is a legacy (pre-Enterprise Core) Socotra configuration (root keys currency, timezone); "
        "it is not supported"
    ]


def test_a_configuration_that_is_not_an_object_is_refused():
    assert validate(["accounts"]).errors == ["the configuration must be a JSON object"]


# Helpers ----------------------------------------------------------------------------------------------


def _paths_only_in(left: Any, right: Any, path: tuple[str, ...] = ()):
    if isinstance(left, dict) and isinstance(right, dict):
        for key, value in left.items():
            if key not in right:
                yield (*path, key), value
            else:
                yield from _paths_only_in(value, right[key], (*path, key))


def _at(model: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        model = model[key]
    return model
