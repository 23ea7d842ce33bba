"""The layering rules of ARCHITECTURE.md, and the route table's own rules."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PUBLIC_ROUTES = {
    ("/auth/token", "POST"),
    ("/openapi.json", "GET"),
    ("/docs", "GET"),
    ("/docs/swagger-ui.css", "GET"),
    ("/docs/swagger-ui-bundle.js", "GET"),
    ("/docs/swagger-ui-standalone-preset.js", "GET"),
    ("/docs/openapi/{tag}", "GET"),
}


def test_import_linter_contracts_hold():
    linter = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(linter), "--config", str(ROOT / ".importlinter")], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def _routes(app):
    for path, methods in app.routes.items():
        for method, entry in methods.items():
            yield path, method, entry


def test_every_route_goes_through_endpoint_with_a_permission(app):
    missing = []
    for path, method, entry in _routes(app):
        spec = getattr(entry.view_function, "__endpoint__", None)
        if spec is None:
            missing.append(f"{method} {path}: no @endpoint")
        elif not spec.permissions and (path, method) not in PUBLIC_ROUTES:
            missing.append(f"{method} {path}: no permission")
        elif spec.public and (path, method) not in PUBLIC_ROUTES:
            missing.append(f"{method} {path}: public but not on the public list")
    assert not missing, "\n".join(missing)


def test_permissions_are_group_dot_action(app):
    pattern = re.compile(r"^[a-z][a-zA-Z-]*\.[a-z][a-zA-Z-]*$")
    bad = [
        (path, method, p)
        for path, method, entry in _routes(app)
        for p in entry.view_function.__endpoint__.permissions
        if not pattern.match(p)
    ]
    assert not bad


def test_sibling_path_variables_share_one_name(app):
    """API Gateway rejects `{id}` beside `{locator}` under one parent; chalice local would not notice."""
    names_by_parent: dict[str, set[str]] = defaultdict(set)
    for path in app.routes:
        parts = path.strip("/").split("/")
        for depth, part in enumerate(parts):
            if part.startswith("{"):
                names_by_parent["/".join(parts[:depth])].add(part)
    clashes = {parent: names for parent, names in names_by_parent.items() if len(names) > 1}
    assert not clashes


def test_route_function_names_are_unique(app):
    seen: dict[str, str] = {}
    duplicates = []
    for path, method, entry in _routes(app):
        name = entry.view_name
        if name in seen and seen[name] != f"{method} {path}":
            duplicates.append(name)
        seen[name] = f"{method} {path}"
    assert not duplicates


def test_tenant_scoped_routes_name_their_tenant_tenantLocator(app):
    """@endpoint checks tenant access on the `tenantLocator` path variable; another spelling would skip it."""
    bad = [path for path in app.routes if re.search(r"\{tenant(?!Locator\})[^}]*\}", path)]
    assert not bad


def _loaded_by_importing_the_app(modules: list[str]) -> list[str]:
    """Which of `modules` a fresh interpreter holds after `import app`."""
    probe = f"import sys, app; print(','.join(m for m in {modules!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return [name for name in result.stdout.strip().split(",") if name]


def test_importing_the_app_loads_no_aws_sdk_and_no_powertools():
    """Cold start: boto3, argon2 and Powertools load on first use, not at import."""
    assert _loaded_by_importing_the_app(["boto3", "botocore", "aws_lambda_powertools", "argon2"]) == []


LAZY_AT_COLD_START = [
    f"chalicelib.{domain}.{module}"
    for domain in (
        "identity",
        "accounts",
        "configuration",
        "events",
        "tables",
        "quotes",
        "quickquotes",
        "policies",
        "transactions",
    )
    for module in ("schemas", "service")
] + ["chalicelib.priceable.runner", "chalicelib.plugins.service", "chalicelib.tables.job_handlers"]
"""What route modules load on a request's first use (chalicelib/http/lazy.py), and the worker on its first
message (workers/handlers.py), not when the app is imported: the request and response models and the services
behind them (pydantic models are built at class creation)."""


def test_importing_the_app_builds_no_lazily_loaded_schemas_or_services():
    assert _loaded_by_importing_the_app(LAZY_AT_COLD_START) == []


def test_every_lazy_module_of_a_route_module_is_the_module_of_its_name():
    """`schemas, service = lazy_modules(...)` names its modules in strings: a typo would pass import-linter and
    mypy (which read the TYPE_CHECKING imports) and fail on the first request."""
    import importlib

    from chalicelib.http.lazy import LazyModule

    checked, wrong = 0, []
    for path in sorted((ROOT / "chalicelib").glob("*/routes.py")):
        routes = importlib.import_module(f"chalicelib.{path.parent.name}.routes")
        for name, value in vars(routes).items():
            if isinstance(value, LazyModule):
                checked += 1
                expected = f"chalicelib.{path.parent.name}.{name}"
                if value.__name__ != expected:
                    wrong.append(f"{routes.__name__}.{name} stands for {value.__name__}, not {expected}")
    assert checked >= 15
    assert not wrong
