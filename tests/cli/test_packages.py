"""How `pas config deploy` finds the file of a deployment error: the config.json of the deepest folder on the
error's key path (a config.json in folder a/b is the object at key path a.b), the rest of the path its field."""

from __future__ import annotations

import zipfile
from pathlib import PurePosixPath

from pas_cli.packages import config_files, located, package_bytes
from tests.cli.conftest import GADGETCOVER

FILES = [
    PurePosixPath(p)
    for p in (
        "config.json",
        "products/GadgetCover/config.json",
        "exposures/Gadget/config.json",
        "bootstrap/config.json",
    )
]


def test_an_error_belongs_to_the_deepest_config_file_on_its_path():
    assert (
        located("products.GadgetCover.contents[0]: 'Gizmo' is not defined", FILES).line()
        == "products/GadgetCover/config.json: contents[0]: 'Gizmo' is not defined"
    )
    assert (
        located("exposures.Gadget.data.value.type: 'money' is not a type", FILES).line()
        == "exposures/Gadget/config.json: data.value.type: 'money' is not a type"
    )
    assert located("products.gadgetcover: is required", FILES).line() == "products/GadgetCover/config.json: is required"
    # no folder of its own: the root config.json holds it
    assert (
        located("charges.premium.category: is required", FILES).line()
        == "config.json: charges.premium.category: is required"
    )
    assert (
        located("bootstrap.resources.resourceInstances[2]: x", FILES).line()
        == "bootstrap/config.json: resources.resourceInstances[2]: x"
    )


def test_an_error_without_a_key_path_is_shown_as_it_is():
    for error in (
        "plugins/python/gadgets.py: line 3: invalid syntax",
        "the package has no product",
        "a message: with a colon",
    ):
        assert located(error, FILES).line() == error
    assert located("products.X.contents: bad", []).line() == "products.X.contents: bad"


def test_a_zip_with_one_wrapping_folder_is_read_below_it(tmp_path):
    wrapped = tmp_path / "wrapped.zip"
    with zipfile.ZipFile(wrapped, "w") as archive:
        archive.writestr("gadgetcover/config.json", "{}")
        archive.writestr("gadgetcover/products/GadgetCover/config.json", "{}")
    assert sorted(map(str, config_files(wrapped))) == ["config.json", "products/GadgetCover/config.json"]


def test_a_folder_is_zipped_with_its_config_json_at_the_root(tmp_path):
    folder = tmp_path / "package"
    (folder / "__pycache__").mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / ".DS_Store").write_text("junk")
    (folder / "__pycache__" / "x.pyc").write_text("junk")
    zipped = tmp_path / "package.zip"
    zipped.write_bytes(package_bytes(folder))
    with zipfile.ZipFile(zipped) as archive:
        assert archive.namelist() == ["config.json"]
    assert package_bytes(zipped) == zipped.read_bytes()
    (tmp_path / "example.zip").write_bytes(package_bytes(GADGETCOVER))
    with zipfile.ZipFile(tmp_path / "example.zip") as archive:
        assert {"config.json", "plugins/python/gadgets.py", "products/GadgetCover/config.json"} <= set(
            archive.namelist()
        )
