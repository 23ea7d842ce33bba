"""Tenant source and archives are hostile input: a plugin module, the plugin folder and the package are
bounded before anything is parsed (413, stores nothing), and a module within the bounds is parsed in a
sandboxed process under kernel limits, never in the service's (a module that needs more memory to parse
is the package's error, in deploymentResult as a syntax error is)."""

from __future__ import annotations

import pytest

from chalicelib.configuration.package import (
    MAX_CONFIG_JSON_BYTES,
    MAX_MEMBERS,
    MAX_PLUGIN_FILES,
    MAX_PLUGIN_MODULE_BYTES,
    MAX_PLUGINS_BYTES,
)
from tests.api.configuration.support import (
    create_tenant,
    deploy,
    new_configured_tenant,
    package,
    stored_state,
    upload,
    validation_paths,
    zip_json,
)
from tests.support.api import assert_error, ok
from tests.unit.configuration.zips import zip_files

HEAVY_TO_PARSE = ("x = [" + "a," * 100_000 + "]\n").encode()
"""200 KB (within the module limit) that take about 150 MB to parse: over the parser's memory limit."""


def _members(count: int) -> bytes:
    return zip_files({"config.json": "{}", **{f"files/{number}.txt": "" for number in range(count)}})


TOO_LARGE = {
    "a module": (
        {"plugins/python/big.py": b"#" * (MAX_PLUGIN_MODULE_BYTES + 1)},
        "config.plugin_too_large",
        f"plugins/python/big.py has {MAX_PLUGIN_MODULE_BYTES + 1} bytes; a plugin module may have at most "
        f"{MAX_PLUGIN_MODULE_BYTES}",
    ),
    "the plugin folder": (
        {
            f"plugins/python/m{number}.py": b"#" * (MAX_PLUGIN_MODULE_BYTES - 10)
            for number in range(MAX_PLUGINS_BYTES // MAX_PLUGIN_MODULE_BYTES + 1)
        },
        "config.plugin_too_large",
        f"at most {MAX_PLUGINS_BYTES} bytes in all",
    ),
    "a data file in the plugin folder": (
        {"plugins/python/rates.json": b" " * (MAX_PLUGINS_BYTES + 1)},
        "config.plugin_too_large",
        f"at most {MAX_PLUGINS_BYTES} bytes in all",
    ),
    "too many plugin files": (
        {f"plugins/python/m{number}.txt": b"" for number in range(MAX_PLUGIN_FILES + 1)},
        "config.plugin_too_large",
        f"at most {MAX_PLUGIN_FILES} files",
    ),
}


@pytest.mark.parametrize("case", list(TOO_LARGE))
def test_plugin_sources_beyond_their_limits_are_refused_before_anything_is_parsed(api, admin_token, case):
    files, code, mentioned = TOO_LARGE[case]
    tenant, _ = new_configured_tenant(api, admin_token)
    body = package(files=files)
    before = stored_state(tenant)

    for path in [
        "/config/createTenant",
        f"/config/{tenant}/deployments/deploy",
        "/config/formatConfig",
        *validation_paths(tenant),
    ]:
        error = assert_error(upload(api, path, admin_token, body), 413, code)
        assert mentioned in error["message"], error

    assert stored_state(tenant) == before


@pytest.mark.parametrize(
    "body, mentioned",
    [
        (_members(MAX_MEMBERS + 1), f"at most {MAX_MEMBERS} files"),
        (
            zip_files({"config.json": '{"x": "' + " " * MAX_CONFIG_JSON_BYTES + '"}'}),
            f"at most {MAX_CONFIG_JSON_BYTES} bytes of config.json",
        ),
    ],
)
def test_an_archive_of_too_many_members_or_too_much_json_is_refused(api, admin_token, body, mentioned):
    error = assert_error(create_tenant(api, admin_token, body), 413, "config.package_too_large")

    assert mentioned in error["message"], error


def test_a_module_that_needs_more_memory_to_parse_than_the_parser_may_have_fails_the_deployment(api, admin_token):
    tenant, first = new_configured_tenant(api, admin_token)
    body = package(
        files={"plugins/python/heavy.py": HEAVY_TO_PARSE, "plugins/python/fine.py": b"def rate(r):\n    pass\n"}
    )

    deployed = ok(deploy(api, admin_token, tenant, body))
    validated = upload(api, f"/config/{tenant}/deployments/validate", admin_token, body)

    expected = ["plugins/python/heavy.py: cannot be parsed within the parser's limits (128 MB of memory)"]
    assert (deployed["deploymentResult"]["isSuccess"], deployed["deploymentResult"]["errors"]) == (False, expected)
    assert (
        deployed["deploymentResult"]["metadata"]["latestVersion"]
        == first["deploymentResult"]["metadata"]["latestVersion"]
    )
    assert zip_json(validated.body, "validation-result.json") == {"isSuccess": False, "errors": expected}


def test_modules_within_the_limits_deploy_and_name_their_plugins(api, admin_token):
    body = package(
        files={
            "plugins/python/auto.py": b"def rate_Auto(r):\n    pass\n\ndef validate(r):\n    pass\n",
            "plugins/python/broken.py": b"def helper(:\n",
        }
    )

    failed = ok(create_tenant(api, admin_token, body))
    deployed = ok(
        create_tenant(
            api,
            admin_token,
            package(files={"plugins/python/auto.py": b"def rate_Auto(r):\n    pass\n\ndef validate(r):\n    pass\n"}),
        )
    )

    assert failed["deploymentResult"]["errors"] == ["plugins/python/broken.py line 1: invalid syntax"]
    assert deployed["deploymentResult"]["metadata"]["implementedPlugins"] == {
        "rating:Auto": "plugins/python/auto.py:rate_Auto",
        "validation:Auto": "plugins/python/auto.py:validate",
    }
