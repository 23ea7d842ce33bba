import io
import time
import warnings
import zipfile
from decimal import Decimal

import pytest

from chalicelib.configuration.package import (
    MAX_COMPRESSED_BYTES,
    MAX_UNCOMPRESSED_BYTES,
    PACKAGE_CORRUPT,
    PACKAGE_INVALID,
    PACKAGE_INVALID_JSON,
    PACKAGE_LAYOUT_INVALID,
    PACKAGE_NOT_ZIP,
    PACKAGE_TOO_LARGE,
    PACKAGE_UNSAFE_PATH,
    PLUGIN_INVALID,
    BootstrapResource,
    ConfigPackage,
    PackageError,
    _Budget,
    _read_bounded,
    bootstrap_resources,
    dumps_json,
    implemented_plugins,
    python_modules,
    read_package,
    write_package,
)
from tests.unit.configuration.zips import (
    FIXTURES,
    PACKAGES,
    SERVER_DOWNLOAD,
    directory_files,
    fixture_model,
    fixture_zip,
    patch_central_directory,
    read_json,
    zip_files,
)

MINIMAL = {
    "config.json": '{"defaultCurrency": "USD"}',
    "charges/premium/config.json": '{"category": "premium"}',
}


def package_error(data: bytes, **limits: int) -> PackageError:
    with pytest.raises(PackageError) as raised:
        read_package(data, **limits)
    return raised.value


# The real packages ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PACKAGES)
@pytest.mark.parametrize("wrap", [None, "socotra-config"])
def test_real_package_merges_every_config_json_by_its_directory(name, wrap):
    package = read_package(fixture_zip(name, wrap))

    assert package.model == fixture_model(name)


@pytest.mark.parametrize("wrap", [None, "socotra-config"])
def test_real_package_keeps_its_resource_files_under_package_paths(wrap):
    package = read_package(fixture_zip("iag-motor-demo", wrap))

    assert sorted(package.other_files) == [
        "bootstrap/resources/resourceFiles/documentTemplates/invoiceDoc_v1.velocity",
        "bootstrap/resources/resourceFiles/staticDocuments/Disclosure01.pdf",
        "bootstrap/resources/resourceFiles/staticDocuments/Forms01.pdf",
        "bootstrap/resources/resourceFiles/staticDocuments/SR2201.pdf",
        "bootstrap/resources/resourceFiles/tables/UWRules01.csv",
    ]
    csv = FIXTURES / "iag-motor-demo/bootstrap/resources/resourceFiles/tables/UWRules01.csv"
    assert package.other_files["bootstrap/resources/resourceFiles/tables/UWRules01.csv"] == csv.read_bytes()
    assert package.plugins == {}


def test_entity_bodies_land_at_their_key_path():
    model = read_package(fixture_zip("iag-motor-demo")).model

    assert model["defaultCurrency"] == "USD"
    assert model["accounts"]["MemberAccount"]["extend"] == "BaseAccount"
    assert model["products"]["PersonalAuto"]["contents"] == ["PersonalVehicle+"]
    assert model["workManagement"]["activities"]["underwriting"]["vehicleScheduleReview"] == {
        "defaultDeadlineDays": 5,
        "blocksUnderwriting": False,
    }
    assert model["bootstrap"]["resources"]["resourceGroups"]["initialGroup"]["resourceNames"][0] == "Disclosure01"


def test_numbers_with_a_fraction_are_decimals():
    model = read_package(fixture_zip("itemcare")).model

    tolerances = model["shortfallTolerancePlans"]["basicPlan"]["currencyTolerances"]

    assert tolerances == {"USD": 1, "CAD": Decimal("1.35")}
    assert type(tolerances["CAD"]) is Decimal


def test_largest_real_package_reads_quickly():
    data = fixture_zip("mgt-commercial")
    started = time.perf_counter()

    package = read_package(data)

    assert time.perf_counter() - started < 1.0
    assert len(package.model["tables"]) == 83
    assert len([path for path in package.other_files if path.endswith(".csv")]) == 71


# Layout rules ---------------------------------------------------------------------------------------


def test_both_bootstrap_forms_merge_into_one():
    data = zip_files(
        {
            **MINIMAL,
            "bootstrap/config.json": '{"resources": {"resourceInstances": {"A01": {"staticName": "A"}}}}',
            "bootstrap/resources/config.json": '{"resourceInstances": {"B01": {"staticName": "B"}},'
            ' "resourceGroups": {"g": {"resourceNames": ["A01", "B01"]}}}',
        }
    )

    resources = read_package(data).model["bootstrap"]["resources"]

    assert resources == {
        "resourceInstances": {"A01": {"staticName": "A"}, "B01": {"staticName": "B"}},
        "resourceGroups": {"g": {"resourceNames": ["A01", "B01"]}},
    }


def test_the_more_specific_file_wins_where_two_set_the_same_value():
    data = zip_files(
        {
            "config.json": '{"charges": {"premium": {"category": "fee", "handling": "flat"}}}',
            "charges/premium/config.json": '{"category": "premium"}',
        }
    )

    assert read_package(data).model == {"charges": {"premium": {"category": "premium", "handling": "flat"}}}


def test_directory_entries_desktop_junk_and_macos_forks_are_ignored():
    data = zip_files(
        {
            "socotra-config/config.json": "{}",
            "socotra-config/.DS_Store": b"\x00\x00\x00\x01Bud1",
            "socotra-config/charges/.DS_Store": b"\x00",
            "__MACOSX/socotra-config/._config.json": b"\x00\x05\x16\x07",
            "socotra-config/charges/premium/config.json": '{"category": "premium"}',
        },
        directories=("socotra-config/", "socotra-config/charges/", "socotra-config/charges/premium/"),
    )

    package = read_package(data)

    assert package.model == {"charges": {"premium": {"category": "premium"}}}
    assert package.other_files == {}


def test_plugin_files_are_kept_apart_and_never_merged():
    data = zip_files(
        {
            **MINIMAL,
            "plugins/python/rating.py": "def rate(request):\n    return {'items': []}\n",
            "plugins/python/config.json": '{"not": "configuration"}',
            "products/PersonalAuto/config.json": '{"contents": []}',
            "products/PersonalAuto/plugins/java/MyRatingPlugin.java": "class MyRatingPlugin {}",
            "bootstrap/resources/resourceFiles/secrets/config.json": '{"apiKey": "x"}',
            "README.md": "# notes",
        }
    )

    package = read_package(data)

    assert package.plugins == {
        "plugins/python/rating.py": b"def rate(request):\n    return {'items': []}\n",
        "plugins/python/config.json": b'{"not": "configuration"}',
        "products/PersonalAuto/plugins/java/MyRatingPlugin.java": b"class MyRatingPlugin {}",
    }
    assert package.other_files == {
        "bootstrap/resources/resourceFiles/secrets/config.json": b'{"apiKey": "x"}',
        "README.md": b"# notes",
    }
    assert set(package.model) == {"defaultCurrency", "charges", "products"}


def test_backslash_separators_are_read_as_folders():
    data = zip_files({"socotra-config\\config.json": "{}", "socotra-config\\charges\\premium\\config.json": "{}"})

    assert read_package(data).model == {"charges": {"premium": {}}}


def test_a_byte_order_mark_is_accepted():
    data = zip_files({"config.json": b"\xef\xbb\xbf" + b'{"defaultCurrency": "EUR"}'})

    assert read_package(data).model == {"defaultCurrency": "EUR"}


# Bad input ------------------------------------------------------------------------------------------


def test_bytes_that_are_not_a_zip_are_refused():
    error = package_error(b"<html>definitely not a zip</html>")

    assert error.code == PACKAGE_NOT_ZIP
    assert error.message == "the package is not a ZIP archive"


def test_a_truncated_zip_is_corrupt():
    data = fixture_zip("itemcare")

    error = package_error(data[: len(data) // 2])

    assert error.code == PACKAGE_CORRUPT


def test_a_zip_whose_data_was_damaged_is_corrupt():
    content = b'{"defaultCurrency": "USD", "padding": "' + b"abcdefgh" * 200 + b'"}'
    data = bytearray(zip_files({"config.json": content}))
    data[60] ^= 0xFF  # inside the compressed data of the only entry

    error = package_error(bytes(data))

    assert error.code == PACKAGE_CORRUPT
    assert error.message.startswith("config.json: the ZIP entry is corrupt")


@pytest.mark.parametrize(
    "unsafe", ["../config.json", "socotra-config/../../etc/config.json", "/etc/passwd", "C:/x.json"]
)
def test_paths_leaving_the_package_are_refused(unsafe):
    error = package_error(zip_files({**MINIMAL, unsafe: "{}"}))

    assert error.code == PACKAGE_UNSAFE_PATH
    assert error.errors == [f"{unsafe}: absolute paths and '..' are not allowed"]


def test_more_than_one_top_level_folder_is_refused():
    data = zip_files({"one/config.json": "{}", "two/config.json": "{}"})

    error = package_error(data)

    assert error.code == PACKAGE_LAYOUT_INVALID
    assert error.message == (
        "no config.json at the ZIP root, and more than one top-level entry (one, two): "
        "put config.json at the root or wrap the package in exactly one folder"
    )


def test_a_package_wrapped_twice_is_refused():
    error = package_error(zip_files({"outer/inner/config.json": "{}"}))

    assert error.code == PACKAGE_LAYOUT_INVALID
    assert error.message == "no config.json at the ZIP root or directly inside the folder 'outer'"


def test_an_empty_zip_is_refused():
    error = package_error(zip_files({}, directories=("socotra-config/",)))

    assert (error.code, error.message) == (PACKAGE_LAYOUT_INVALID, "the package is empty")


def test_invalid_json_names_the_file_and_the_line():
    data = zip_files(
        {
            "socotra-config/config.json": "{}",
            "socotra-config/products/Auto/config.json": '{\n  "displayName": "Auto"\n  "contents": []\n}',
        }
    )

    error = package_error(data)

    assert error.code == PACKAGE_INVALID_JSON
    assert error.message == "socotra-config/products/Auto/config.json line 3 column 3: Expecting ',' delimiter"


def test_every_invalid_json_file_is_reported_at_once():
    data = zip_files(
        {
            "config.json": "{}",
            "charges/premium/config.json": '{"category": }',
            "accounts/Person/config.json": "",
            "accounts/Other/config.json": '["not", "an", "object"]',
            "tables/Rates/config.json": '{"factor": NaN}',
            "tables/Codes/config.json": b'{"name": "\xff"}',
        }
    )

    error = package_error(data)

    assert error.code == PACKAGE_INVALID_JSON
    assert error.errors == [
        "accounts/Other/config.json: must hold a JSON object",
        "accounts/Person/config.json line 1 column 1: Expecting value",
        "charges/premium/config.json line 1 column 14: Expecting value",
        "tables/Codes/config.json: not UTF-8 text (byte 10)",
        "tables/Rates/config.json: NaN is not a JSON number",
    ]
    assert error.message == "accounts/Other/config.json: must hold a JSON object (and 4 more)"


def test_a_package_over_50_mb_compressed_is_refused_before_it_is_opened():
    error = package_error(bytes(MAX_COMPRESSED_BYTES + 1))

    assert error.code == PACKAGE_TOO_LARGE
    assert error.message == f"package is {MAX_COMPRESSED_BYTES + 1} bytes; the limit is 52428800 bytes compressed"


def test_a_package_declaring_over_500_mb_uncompressed_is_refused_before_inflating():
    declared_size = 600 * 1024 * 1024
    bomb = patch_central_directory(zip_files({**MINIMAL, "big.csv": b"0" * 1000}), "big.csv", 24, declared_size)

    error = package_error(bomb)

    assert error.code == PACKAGE_TOO_LARGE
    declared = declared_size + sum(len(content) for content in MINIMAL.values())
    assert error.message == f"package inflates to {declared} bytes; the limit is 524288000 bytes uncompressed"
    assert MAX_UNCOMPRESSED_BYTES == 524288000


def test_the_declared_size_limit_counts_every_entry():
    data = zip_files({"config.json": b"{}" + b" " * 98, "charges/premium/config.json": b"{}" + b" " * 98})

    assert read_package(data, max_uncompressed_bytes=200).model == {"charges": {"premium": {}}}
    assert package_error(data, max_uncompressed_bytes=199).code == PACKAGE_TOO_LARGE


def test_inflated_bytes_are_counted_while_reading_whatever_the_headers_say():
    budget = _Budget(10)

    assert _read_bounded(io.BytesIO(b"x" * 6), budget) == b"x" * 6
    with pytest.raises(PackageError) as raised:
        _read_bounded(io.BytesIO(b"x" * 5), budget)

    assert raised.value.code == PACKAGE_TOO_LARGE
    assert raised.value.message == "package inflates to more than 10 bytes uncompressed"


def test_encrypted_entries_are_refused():
    data = patch_central_directory(zip_files(MINIMAL), "config.json", 8, 0x1, size=2)

    error = package_error(data)

    assert (error.code, error.message) == (PACKAGE_INVALID, "config.json: encrypted entries are not supported")


def test_a_path_stored_twice_is_refused():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = zip_files({"config.json": "{}"})
        buffer = io.BytesIO(data)
        with zipfile.ZipFile(buffer, "a") as archive:
            archive.writestr("config.json", '{"defaultCurrency": "USD"}')

    error = package_error(buffer.getvalue())

    assert (error.code, error.message) == (PACKAGE_INVALID, "config.json: the package holds this path twice")


# Writing --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PACKAGES)
def test_a_written_package_reads_back_to_the_same_model_and_files(name):
    package = read_package(fixture_zip(name))

    again = read_package(write_package(package))

    assert again == package


def test_written_layout_is_the_servers_download_layout():
    written = zipfile.ZipFile(io.BytesIO(write_package(read_package(fixture_zip("iag-motor-demo")))))

    config_files = {name for name in written.namelist() if name.endswith("config.json")}

    server_files = {path.relative_to(SERVER_DOWNLOAD).as_posix() for path in SERVER_DOWNLOAD.rglob("config.json")}
    assert config_files == server_files


@pytest.mark.parametrize(
    "path",
    [
        "config.json",
        "charges/Premium/config.json",
        "coverageTerms/PADeductible/config.json",
        "numberingPlans/CA_Policy_numbering_plan/config.json",
        "workManagement/assignmentRoles/powerUser/config.json",
        "workManagement/qualifications/config.json",
        "bootstrap/config.json",
    ],
)
def test_written_json_is_byte_for_byte_what_the_server_wrote(path):
    written = zipfile.ZipFile(io.BytesIO(write_package(read_package(fixture_zip("iag-motor-demo")))))

    assert written.read(path) == (SERVER_DOWNLOAD / path).read_bytes()


def test_values_that_cannot_be_folders_stay_in_their_parents_config_json():
    model = {
        "defaultCurrency": "USD",
        "tables": {},
        "charges": {"odd/name": {"category": "fee"}, "premium": {"category": "premium"}},
        "plugins": {"kept": True},
        "workManagement": {"qualifications": {"underwriting": ["UW-1"]}, "notes": "free text"},
    }
    written = write_package(ConfigPackage(model, {"plugins/python/p.py": b"x = 1\n"}))

    archive = zipfile.ZipFile(io.BytesIO(written))
    assert sorted(archive.namelist()) == [
        "charges/config.json",
        "charges/premium/config.json",
        "config.json",
        "plugins/python/p.py",
        "tables/config.json",
        "workManagement/config.json",
        "workManagement/qualifications/config.json",
    ]
    assert read_package(written).model == model


def test_json_is_written_in_the_servers_style_with_exact_decimals():
    value = {
        "rate": Decimal("1.35"),
        "big": Decimal("1E+3"),
        "on": True,
        "none": None,
        "list": [1, "a"],
        "empty": {},
    }

    assert dumps_json(value) == (
        '{\n  "rate" : 1.35,\n  "big" : 1E+3,\n  "on" : true,\n  "none" : null,\n'
        '  "list" : [ 1, "a" ],\n  "empty" : { }\n}'
    )
    assert dumps_json([{"a": []}]) == '[ {\n  "a" : [ ]\n} ]'
    assert dumps_json('£0 "quoted"') == '"£0 \\"quoted\\""'


# Plugins and bootstrap resources --------------------------------------------------------------------


def test_implemented_plugins_name_the_function_of_each_product_and_kind():
    functions = {
        "plugins/python/auto.py": ["rate_PersonalAuto", "validate_PersonalAuto", "rate_UnknownProduct", "rate_"],
        "plugins/python/common.py": ["underwrite", "rate"],
    }

    found = implemented_plugins(functions, ["PersonalAuto", "Homeowners"])

    assert found == {
        "rating:PersonalAuto": "plugins/python/auto.py:rate_PersonalAuto",
        "validation:PersonalAuto": "plugins/python/auto.py:validate_PersonalAuto",
        "underwriting:PersonalAuto": "plugins/python/common.py:underwrite",
        "rating:Homeowners": "plugins/python/common.py:rate",
        "underwriting:Homeowners": "plugins/python/common.py:underwrite",
    }


def test_the_python_modules_are_the_py_files_under_plugins_python():
    plugins = {
        "plugins/python/auto.py": b"",
        "plugins/python/sub/common.py": b"",
        "plugins/java/Rating.java": b"",
        "plugins/python/notes.txt": b"",
        "plugins/python.py": b"",
    }

    assert sorted(python_modules(plugins)) == ["plugins/python/auto.py", "plugins/python/sub/common.py"]


def test_a_plugin_function_defined_in_two_modules_is_refused():
    functions = {"plugins/python/a.py": ["rate_Auto"], "plugins/python/b.py": ["rate_Auto"]}

    with pytest.raises(PackageError) as raised:
        implemented_plugins(functions, ["Auto"])

    assert raised.value.code == PLUGIN_INVALID
    assert raised.value.errors == ["plugins/python/b.py:rate_Auto: rate_Auto is also defined in plugins/python/a.py"]


def test_bootstrap_resources_pair_instances_with_their_files():
    package = read_package(fixture_zip("iag-motor-demo"))

    resources = bootstrap_resources(package)

    assert [(r.instance, r.static_name, r.kind) for r in resources] == [
        ("invoiceDoc_v1", "InvoiceDoc", "documentTemplates"),
        ("Disclosure01", "Disclosure", "staticDocuments"),
        ("Forms01", "Forms", "staticDocuments"),
        ("SR2201", "SR22", "staticDocuments"),
        ("UWRules01", "UWRules", "tables"),
    ]
    assert resources[-1] == BootstrapResource(
        "UWRules01",
        "UWRules",
        "tables",
        "bootstrap/resources/resourceFiles/tables/UWRules01.csv",
        (FIXTURES / "iag-motor-demo/bootstrap/resources/resourceFiles/tables/UWRules01.csv").read_bytes(),
    )


def test_bootstrap_instances_without_a_file_are_skipped():
    package = read_package(fixture_zip("mgt-commercial"))
    instances = read_json(FIXTURES / "mgt-commercial/bootstrap/resources/config.json")["resourceInstances"]

    resources = bootstrap_resources(package)

    assert len(instances) == 174
    assert len(resources) == 71
    assert {r.kind for r in resources} == {"tables"}
    assert all(instances[r.instance]["staticName"] == r.static_name for r in resources)
    assert {r.path for r in resources} == {
        path for path in directory_files(FIXTURES / "mgt-commercial") if path.endswith(".csv")
    }
