from decimal import Decimal
from typing import Any

from chalicelib.configuration.diff import ROOT_PROPERTIES, diff, map_difference
from chalicelib.configuration.package import read_package
from tests.unit.configuration.zips import SERVER_DOWNLOAD, directory_files, fixture_model, zip_files

NO_CHANGE: dict[str, dict[str, Any]] = {"added": {}, "modified": {}, "removed": {}}


def test_identical_configurations_differ_nowhere():
    model = fixture_model("itemcare")

    differences = diff(model, fixture_model("itemcare"))

    assert set(differences) == {key for key, value in model.items() if isinstance(value, dict)} | {ROOT_PROPERTIES}
    assert all(difference == NO_CHANGE for difference in differences.values())


def test_added_modified_and_removed_entities_per_collection():
    deployed = {
        "products": {"Auto": {"displayName": "Auto"}, "Home": {"displayName": "Home"}},
        "charges": {"premium": {"category": "premium"}},
    }
    given = {
        "products": {"Auto": {"displayName": "Motor"}, "Boat": {"displayName": "Boat"}},
        "charges": {"premium": {"category": "premium"}},
    }

    assert diff(given, deployed) == {
        "products": {
            "added": {"Boat": {"displayName": "Boat"}},
            "modified": {"Auto": {"displayName": "Motor"}},
            "removed": {"Home": {"displayName": "Home"}},
        },
        "charges": NO_CHANGE,
    }


def test_collections_on_one_side_only_are_all_added_or_all_removed():
    given = {"tables": {"Rates": {"columns": {}}}}
    deployed = {"documents": {"Invoice": {"format": "pdf"}}}

    assert diff(given, deployed) == {
        "tables": {"added": {"Rates": {"columns": {}}}, "modified": {}, "removed": {}},
        "documents": {"added": {}, "modified": {}, "removed": {"Invoice": {"format": "pdf"}}},
    }


def test_configuration_properties_are_compared_under_their_own_key():
    given = {"defaultCurrency": "EUR", "defaultTermDuration": 12, "customFonts": ["Inter"]}
    deployed = {"defaultCurrency": "USD", "defaultTermDuration": Decimal("12"), "defaultTimeZone": "UTC"}

    assert diff(given, deployed) == {
        ROOT_PROPERTIES: {
            "added": {"customFonts": ["Inter"]},
            "modified": {"defaultCurrency": "EUR"},
            "removed": {"defaultTimeZone": "UTC"},
        }
    }


def test_a_map_difference_compares_values_deeply():
    assert map_difference({"a": {"x": [1, 2]}, "b": {"y": 1}}, {"a": {"x": [1, 2]}, "b": {"y": 2}}) == {
        "added": {},
        "modified": {"b": {"y": 1}},
        "removed": {},
    }


def test_iag_upload_against_what_the_server_handed_back():
    upload = fixture_model("iag-motor-demo")
    server = read_package(zip_files(directory_files(SERVER_DOWNLOAD))).model

    differences = diff(upload, server)

    changed = {collection: sorted(d["modified"]) for collection, d in differences.items() if d != NO_CHANGE}
    assert changed == {
        "accounts": ["BaseAccount", "MemberAccount"],
        "coverages": ["Theft"],
        "dataTypes": ["Redbook", "RollinApp"],
        "delinquencyPlans": ["Standard"],
        "exposures": ["PersonalVehicle"],
        "products": ["PersonalAuto"],
    }
    assert differences["coverages"]["modified"]["Theft"] == upload["coverages"]["Theft"]
