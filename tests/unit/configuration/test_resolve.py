import copy

import pytest

from chalicelib.configuration.resolve import resolve
from chalicelib.configuration.validator import validate
from tests.unit.configuration.zips import fixture_model


@pytest.fixture(scope="module")
def iag() -> dict:
    return validate(fixture_model("iag-motor-demo")).model


def test_a_child_account_gets_its_parents_data_first_and_keeps_its_own_settings(iag):
    member = resolve(iag)["accounts"]["MemberAccount"]

    assert list(member["data"]) == ["tier", "firstName", "middleName", "lastName", "email"]
    assert member["data"]["tier"] == iag["accounts"]["BaseAccount"]["data"]["tier"]
    assert member["numberingTrigger"] == "creation"
    assert member["abstract"] is False
    assert member["extend"] == "BaseAccount"
    assert list(member)[:2] == ["data", "numberingTrigger"]


def test_data_types_and_exposures_inherit_their_bases_fields(iag):
    resolved = resolve(iag)

    person_fields = ["firstName", "middleName", "lastName", "dateOfBirth", "email", "phoneNumber"]
    assert list(resolved["dataTypes"]["Driver"]["data"]) == [*person_fields, "licenseNum", "driverDesignation"]
    vehicle = resolved["exposures"]["PersonalVehicle"]
    assert list(vehicle["data"])[:6] == ["makeSymbol", "modelSymbol", "year", "vin", "annualMileage", "value"]
    assert vehicle["data"]["year"] == {"displayName": "Year", "type": "int", "min": "1970", "max": "2025"}
    assert vehicle["contents"] == iag["exposures"]["PersonalVehicle"]["contents"]


def test_entities_without_extend_are_unchanged(iag):
    resolved = resolve(iag)

    assert resolved["accounts"]["BaseAccount"] == iag["accounts"]["BaseAccount"]
    assert resolved["products"] == iag["products"]
    assert resolved["charges"] == iag["charges"]


def test_a_model_without_inheritance_resolves_to_itself():
    mgt = validate(fixture_model("mgt-commercial")).model

    assert resolve(mgt) == mgt


def test_a_child_replaces_same_named_fields_and_lists_whole():
    model = {
        "coverages": {
            "Base": {
                "abstract": True,
                "charges": ["premium"],
                "coverageTerms": ["Deductible"],
                "data": {
                    "limit": {"type": "string", "maxLength": 5, "options": ["a"]},
                    "note": {"type": "string"},
                },
            },
            "Fire": {"extend": "Base", "coverageTerms": ["Limit"], "data": {"limit": {"type": "int"}}},
        }
    }

    fire = resolve(model)["coverages"]["Fire"]

    assert fire == {
        "charges": ["premium"],
        "coverageTerms": ["Limit"],
        "data": {"limit": {"type": "int"}, "note": {"type": "string"}},
        "extend": "Base",
    }


def test_abstract_is_not_inherited():
    model = {"coverages": {"Base": {"abstract": True, "charges": ["premium"]}, "Theft": {"extend": "Base"}}}

    assert resolve(model)["coverages"]["Theft"] == {"charges": ["premium"], "extend": "Base"}


def test_chains_resolve_through_every_level_whatever_the_order():
    model = {
        "dataTypes": {
            "Grandchild": {"extend": "Child", "data": {"c": {"type": "int"}}},
            "Child": {"extend": "Root", "data": {"b": {"type": "date"}}, "displayName": "Child"},
            "Root": {"data": {"a": {"type": "string"}}, "displayName": "Root"},
        }
    }

    grandchild = resolve(model)["dataTypes"]["Grandchild"]

    assert grandchild == {
        "data": {"a": {"type": "string"}, "b": {"type": "date"}, "c": {"type": "int"}},
        "displayName": "Child",
        "extend": "Child",
    }


def test_nested_collections_resolve_too():
    model = {
        "producerManagement": {
            "producers": {"Base": {"data": {"license": {"type": "string"}}}, "Agent": {"extend": "Base"}}
        }
    }

    agent = resolve(model)["producerManagement"]["producers"]["Agent"]

    assert agent == {"data": {"license": {"type": "string"}}, "extend": "Base"}


def test_the_input_is_untouched_and_the_result_shares_nothing_with_it(iag):
    before = copy.deepcopy(iag)

    resolved = resolve(iag)
    resolved["accounts"]["MemberAccount"]["data"]["tier"]["options"].append("Platinum")

    assert iag == before
    assert resolved["accounts"]["BaseAccount"]["data"]["tier"]["options"] == ["Gold", "Silver", "Bronze"]


def test_broken_chains_raise():
    with pytest.raises(ValueError, match=r"^accounts: the extend chain is circular: A -> B -> A$"):
        resolve({"accounts": {"A": {"extend": "B"}, "B": {"extend": "A"}}})
    with pytest.raises(ValueError, match=r"^accounts\.A: extends 'Ghost', which is not defined$"):
        resolve({"accounts": {"A": {"extend": "Ghost"}}})
