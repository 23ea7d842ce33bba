import io
import json
import zipfile

import pytest

from chalicelib.configuration.formatting import format_model, format_package
from chalicelib.configuration.package import PACKAGE_NOT_ZIP, PackageError, read_package
from tests.unit.configuration.zips import fixture_model, fixture_zip, zip_files


def test_mgt_charge_categories_are_put_in_the_specs_casing_and_nothing_else_changes():
    original = fixture_model("mgt-commercial")

    formatted = read_package(format_package(fixture_zip("mgt-commercial", "socotra-config")))

    expected = fixture_model("mgt-commercial")
    for charge in expected["charges"].values():
        charge["category"] = charge["category"].lower()
    assert formatted.model == expected
    assert formatted.model["charges"]["Premium"] == {"category": "premium"}
    assert original["charges"]["Premium"] == {"category": "Premium"}
    assert len(formatted.other_files) == 71


def test_a_package_already_in_canonical_casing_keeps_its_model():
    formatted = read_package(format_package(fixture_zip("iag-motor-demo")))

    assert formatted.model == fixture_model("iag-motor-demo")


def test_property_names_and_folders_are_put_in_canonical_casing():
    data = zip_files(
        {
            "config.json": json.dumps({"DefaultCurrency": "USD", "DEFAULTDURATIONBASIS": "MONTHS"}),
            "Accounts/Person/config.json": json.dumps(
                {"Data": {"FirstName": {"Type": "string", "MaxLength": 50}}, "NumberingTrigger": "Creation"}
            ),
            "Charges/Premium/config.json": json.dumps({"Category": "PREMIUM", "Handling": "Normal"}),
            "Charges/Expenses/config.json": json.dumps({"category": "nonfinancial", "displayName": "PREMIUM"}),
            "coverageTerms/Deductible/config.json": json.dumps(
                {"TYPE": "Deductible", "Options": {"*Ded_500": {"Value": 500}}}
            ),
            "documents/Declarations/config.json": json.dumps({"pageSize": "a4", "Format": "PDF"}),
            "workManagement/userAssociationRoles/clerk/config.json": json.dumps({"AppliesTo": ["QUOTE", "Policy"]}),
        }
    )

    model = read_package(format_package(data)).model

    assert model == {
        "defaultCurrency": "USD",
        "defaultDurationBasis": "months",
        "accounts": {
            "Person": {"data": {"FirstName": {"type": "string", "maxLength": 50}}, "numberingTrigger": "creation"}
        },
        "charges": {
            "Expenses": {"category": "nonFinancial", "displayName": "PREMIUM"},
            "Premium": {"category": "premium", "handling": "normal"},
        },
        "coverageTerms": {"Deductible": {"type": "deductible", "options": {"*Ded_500": {"value": 500}}}},
        "documents": {"Declarations": {"pageSize": "A4", "format": "pdf"}},
        "workManagement": {"userAssociationRoles": {"clerk": {"appliesTo": ["quote", "policy"]}}},
    }


def test_user_chosen_text_and_unknown_keys_are_left_alone():
    model = {
        "accounts": {"Person": {"numberingString": "CA", "Extra": {"Category": "PREMIUM"}}},
        "products": {"Auto": {"contents": ["Vehicle+"], "data": {"type": {"type": "String", "options": ["PREMIUM"]}}}},
        "defaultBillingTrigger": "ISSUE",
    }

    assert format_model(model) == model


def test_keys_differing_only_in_casing_merge_with_the_canonical_spelling_winning():
    model = {
        "Charges": {"fee": {"category": "fee"}},
        "charges": {"premium": {"Category": "PREMIUM", "category": "tax"}},
        "defaultCurrency": "USD",
        "DefaultCurrency": "EUR",
    }

    assert format_model(model) == {
        "charges": {"fee": {"category": "fee"}, "premium": {"category": "tax"}},
        "defaultCurrency": "USD",
    }


def test_the_formatted_package_is_in_the_download_layout_and_keeps_its_files():
    data = zip_files(
        {
            "config.json": json.dumps({"defaultCurrency": "USD", "charges": {"premium": {"category": "Premium"}}}),
            "plugins/python/rating.py": "def rate(request):\n    return {'items': []}\n",
        }
    )

    archive = zipfile.ZipFile(io.BytesIO(format_package(data)))

    assert sorted(archive.namelist()) == ["charges/premium/config.json", "config.json", "plugins/python/rating.py"]
    assert archive.read("charges/premium/config.json") == b'{\n  "category" : "premium"\n}'
    assert archive.read("plugins/python/rating.py") == b"def rate(request):\n    return {'items': []}\n"


def test_an_unreadable_package_is_refused_as_on_deploy():
    with pytest.raises(PackageError) as raised:
        format_package(b"not a zip")

    assert raised.value.code == PACKAGE_NOT_ZIP
