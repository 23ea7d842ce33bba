"""The .importlinter contracts catch what they name: each forbidden import, added to a copy of chalicelib,
breaks its contract (test_layers.py checks that the real tree keeps them all)."""
from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys

from tests.conftest import ROOT

DOMAINS_WITH_A_SURFACE = {"identity", "configuration", "tables", "plugins", "accounts", "policies", "quotes",
                          "quickquotes", "transactions", "events", "clock"}
"""Every domain package but priceable, the engine whose pure modules are its surface."""

VIOLATIONS = {
    # contract id: (file of the copy, the import appended to it)
    "runtime-above-storage": ("storage/keys.py", "import chalicelib.runtime.wiring"),
    "settings-are-a-leaf": ("settings.py", "import chalicelib.core.ids"),
    "quotes-and-quickquotes-are-siblings": ("quickquotes/models.py", "import chalicelib.quotes.models"),
    "pure-modules": ("tables/versions.py", "import chalicelib.tables.repository"),
    "tables-through-its-surface": ("accounts/service.py", "import chalicelib.tables.repository"),
    "configuration-through-its-surface": ("policies/service.py", "import chalicelib.configuration.repository"),
    "priceable-host-is-internal": ("quotes/service.py", "import chalicelib.priceable.host"),
}


def _contracts() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    return config


def test_every_domain_but_the_engine_is_reached_only_through_its_surface():
    config = _contracts()
    protected = {config[section]["protected_modules"].strip() for section in config.sections()
                 if config[section].get("type") == "protected"}
    domains = {path.parent.name for path in (ROOT / "chalicelib").glob("*/service.py")}
    assert domains == DOMAINS_WITH_A_SURFACE
    assert {f"chalicelib.{domain}" for domain in DOMAINS_WITH_A_SURFACE} <= protected


def test_each_contract_breaks_on_the_import_it_forbids(tmp_path):
    shutil.copytree(ROOT / "chalicelib", tmp_path / "chalicelib", ignore=shutil.ignore_patterns("__pycache__"))
    for relative, line in VIOLATIONS.values():
        with open(tmp_path / "chalicelib" / relative, "a") as module:
            module.write(f"\n{line}\n")
    config = _contracts()
    assert set(VIOLATIONS) <= {section.removeprefix("importlinter:contract:") for section in config.sections()}

    linter = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    contract_args = [arg for contract in VIOLATIONS for arg in ("--contract", contract)]
    result = subprocess.run([linter, "--config", str(ROOT / ".importlinter"), "--no-cache", *contract_args],
                            cwd=tmp_path, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(tmp_path), "COLUMNS": "400"})

    assert f"Contracts: 0 kept, {len(VIOLATIONS)} broken." in result.stdout, result.stdout + result.stderr
