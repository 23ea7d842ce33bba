"""The .importlinter contracts catch what they name: each forbidden import, added to a copy of chalicelib,
breaks its contract, also in a package nested below a domain (billing/invoices/...), and a package nobody
placed in the layers breaks them (test_layers.py checks that the real tree keeps them all)."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

VIOLATIONS = {
    # contract id: (module of the copy, relative to chalicelib/, created with its packages when missing; the import
    # appended to it)
    "layers": ("billing/invoices/generator.py", "import chalicelib.events.service"),
    "aws-only-in-storage": ("billing/invoices/repository.py", "import boto3"),
    "chalice-only-at-the-edge": ("billing/invoices/service.py", "import chalice"),
    "storage-through-repositories": ("billing/payments/service.py", "import chalicelib.storage.table"),
    "routes-never-touch-repositories": ("billing/invoices/routes.py", "import chalicelib.billing.invoices.repository"),
    "services-ignore-the-edge": ("billing/holds/service.py", "import chalicelib.http.responses"),
    "packages-through-their-surface": ("billing/writeoffs/service.py", "import chalicelib.policies.repository"),
    "priceable-pure-modules": ("priceable/rating.py", "import chalicelib.tables.models"),
    "typed-configuration-is-pure": ("configuration/billing_plans.py", "import chalicelib.core.money"),
    "pure-modules": ("billing/delinquency/models.py", "import chalicelib.accounts.service"),
    "priceable-host-is-internal": ("quotes/service.py", "import chalicelib.priceable.host"),
    "cli-through-the-api": ("../pas_cli/client.py", "import chalicelib.core.money"),
    "billing-layers": ("billing/delinquency/service.py", "import chalicelib.billing.holds.service"),
    "billing-through-their-surface": ("billing/writeoffs/service.py", "import chalicelib.billing.invoices.previews"),
    "billing-repositories-below-use-cases": (
        "billing/invoices/repository.py",
        "import chalicelib.billing.payments.service",
    ),
}

WILDCARD_OPTIONS = (
    "source_modules",
    "forbidden_modules",
    "protected_modules",
    "allowed_importers",
    "modules",
    "containers",
)
_ONE_LEVEL_ROLE = re.compile(r"(^|\.)\*\.")
"""A one-level wildcard with something after it (`chalicelib.*.service`): blind to nested packages."""


def _contracts() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    return config


def _contract(config: configparser.ConfigParser, contract: str) -> configparser.SectionProxy:
    return config[f"importlinter:contract:{contract}"]


def _values(section: configparser.SectionProxy, option: str) -> list[str]:
    return [
        line.strip()
        for line in section.get(option, "").splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]


def _copy_of_chalicelib(tmp_path: Path) -> Path:
    """chalicelib and pas_cli (the other root package the contracts name) copied; answers chalicelib's copy."""
    for package in ("chalicelib", "pas_cli"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "chalicelib"


def _add_import(package: Path, relative: str, line: str) -> None:
    """Appends `line` to the module, creating it and the packages above it (up to the copy's root) when missing."""
    root = package.parent
    module = Path(os.path.normpath(package / relative))
    module.parent.mkdir(parents=True, exist_ok=True)
    for directory in module.relative_to(root).parents:
        if directory != Path("."):
            (root / directory / "__init__.py").touch()
    with open(module, "a") as source:
        source.write(f"\n{line}\n")


def _lint(tmp_path: Path, *contracts: str) -> str:
    linter = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    contract_args = [arg for contract in contracts for arg in ("--contract", contract)]
    result = subprocess.run(
        [linter, "--config", str(ROOT / ".importlinter"), "--no-cache", *contract_args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path), "COLUMNS": "400"},
    )
    return result.stdout + result.stderr


def test_each_contract_breaks_on_the_import_it_forbids_also_in_nested_packages(tmp_path):
    package = _copy_of_chalicelib(tmp_path)
    for relative, line in VIOLATIONS.values():
        _add_import(package, relative, line)
    config = _contracts()
    assert {
        section.removeprefix("importlinter:contract:")
        for section in config.sections()
        if section.startswith("importlinter:contract:")
    } == set(VIOLATIONS)

    output = _lint(tmp_path, *VIOLATIONS)

    assert f"Contracts: 0 kept, {len(VIOLATIONS)} broken." in output, output


def test_a_package_nobody_placed_in_the_layers_breaks_them(tmp_path):
    package = _copy_of_chalicelib(tmp_path)
    _add_import(package, "ledger/service.py", "import chalicelib.core.money")

    output = _lint(tmp_path, "layers")

    assert "Contracts: 0 kept, 1 broken." in output, output
    assert "- chalicelib.ledger" in output


def test_the_layers_contract_names_every_package_and_the_domain_dag_once():
    layers = _contract(_contracts(), "layers")
    placed = [name.strip("()") for layer in _values(layers, "layers") for name in re.split(r"\s*[|:]\s*", layer)]
    packages = {path.parent.name for path in (ROOT / "chalicelib").glob("*/__init__.py")} | {
        path.stem for path in (ROOT / "chalicelib").glob("*.py") if path.stem != "__init__"
    }

    assert layers.getboolean("exhaustive") and _values(layers, "containers") == ["chalicelib"]
    assert len(placed) == len(set(placed))
    assert packages <= set(placed), packages - set(placed)
    # ARCHITECTURE.md's order of the domains, and the new ones: billing below events, clock the lowest domain (the
    # identity domain starts a tenant's clock), identity above the edge (which reaches it only through the
    # authenticator app.py wires: http/auth.py)
    order = [
        name
        for name in placed
        if name
        in (
            "identity",
            "configuration",
            "clock",
            "tables",
            "policies",
            "transactions",
            "schedules",
            "documents",
            "billing",
            "events",
            "http",
            "runtime",
        )
    ]
    assert order == [
        "events",
        "billing",
        "documents",
        "schedules",
        "transactions",
        "policies",
        "tables",
        "configuration",
        "identity",
        "clock",
        "http",
        "runtime",
    ]


def test_no_contract_uses_a_one_level_wildcard_for_a_role():
    """`chalicelib.*.service` would let chalicelib/billing/invoices/service.py through; `*` stands only for
    whole packages (`chalicelib.*`)."""
    config = _contracts()
    patterns = [
        value
        for section in config.sections()
        for option in WILDCARD_OPTIONS
        for value in _values(config[section], option)
    ]
    patterns += [
        part.strip()
        for section in config.sections()
        for value in _values(config[section], "ignore_imports")
        for part in value.split("->")
    ]

    assert any("**" in pattern for pattern in patterns)
    assert [pattern for pattern in patterns if _ONE_LEVEL_ROLE.search(pattern)] == []


def test_every_package_is_reached_only_through_its_surface():
    surface = _contract(_contracts(), "packages-through-their-surface")

    assert _values(surface, "protected_modules") == ["chalicelib.*"]
    assert {"chalicelib.** -> chalicelib.**.service", "chalicelib.** -> chalicelib.**.models"} <= set(
        _values(surface, "ignore_imports")
    )
