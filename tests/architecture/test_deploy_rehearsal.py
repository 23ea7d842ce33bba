"""The deploy rehearsal (issue 30, 5b): the deployment package that `chalice package` builds, with its real
dependencies, then split by infra/split_api.py as the README deploys it, holds everything its functions need and
nothing of this machine's: every function's handler imports from the unzipped package in a fresh virtual
environment that has nothing installed (no pip, no site-packages: Python's standard library and the package,
as Lambda's python3.11 runtime has), the API answers a request there, the Powertools Logger, Tracer and
metrics start, a PDF is made with the package's PDF libraries, and the package fits Lambda's 250 MB. The tenant
function (issue 30, 1), built there as its publish job builds it on Lambda (plugins/tenant_code.py: the task root's
own scripts and libraries), runs a plugin and renders a PDF with only its package and its layer on the path.

`chalice package` fetches the dependencies' Linux wheels from the package index once for each requirements.txt
and keeps them ($XDG_CACHE_HOME or ~/.cache, pas/rehearsal/: shared by every checkout on the machine); the app's
code is packaged afresh every run. A first run downloads about 55 MB; later ones take seconds."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import venv
import zipfile
from pathlib import Path
from typing import Any

import pytest

from local.resources import TEMPLATE

# the one test module allowed off loopback (pytest.ini): `chalice package` downloads the dependencies' wheels
pytestmark = [pytest.mark.rehearsal, pytest.mark.enable_socket]

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pas" / "rehearsal"
"""The wheels `chalice package` fetched, kept in the user's cache rather than the checkout, so a fresh clone on the
same machine (CI's, a second worktree) reuses them instead of downloading them again."""
LAMBDA_UNZIPPED_LIMIT = 250 * 1024 * 1024
"""Lambda's limit on a function's unzipped deployment package (layers included: the functions have none)."""


@pytest.fixture(scope="module")
def packaged(tmp_path_factory) -> Path:
    """`chalice package --stage prod` and `infra/split_api.py`, as the README's Deploying section says, of a copy
    of the app kept under CACHE/<hash of requirements.txt>/ (so chalice reuses its dependency bundle),
    one test process at a time; answers the output folder (sam.json, deployment.zip)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other pytest-xdist worker may package the same copy
        return _package(tmp_path_factory.mktemp("package") / "out")


def _package(out: Path) -> Path:
    requirements = (ROOT / "requirements.txt").read_bytes()
    home = CACHE / hashlib.sha256(requirements).hexdigest()[:16]
    for stale in CACHE.iterdir():
        if stale.is_dir() and stale != home:
            shutil.rmtree(stale, ignore_errors=True)  # the bundle of an earlier requirements.txt
    project = home / "project"
    for copied in ("chalicelib", "app.py", "requirements.txt"):
        target = project / copied
        if target.is_dir():
            shutil.rmtree(target)
        if (ROOT / copied).is_dir():
            shutil.copytree(ROOT / copied, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / copied, target)
    shutil.copytree(
        ROOT / ".chalice",
        project / ".chalice",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("deployments", "venv"),
    )
    chalice = Path(sys.executable).parent / "chalice"
    result = subprocess.run(
        [str(chalice), "package", "--stage", "prod", "--merge-template", str(TEMPLATE), str(out)],
        cwd=project,
        env={**os.environ, "AWS_DEFAULT_REGION": "us-east-1"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    split = subprocess.run(
        [sys.executable, str(ROOT / "infra" / "split_api.py"), str(out / "sam.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert split.returncode == 0, split.stdout + split.stderr
    return out


@pytest.fixture(scope="module")
def unzipped(packaged, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("task-root")
    with zipfile.ZipFile(packaged / "deployment.zip") as bundle:
        bundle.extractall(folder)
    return folder


def _handlers(packaged: Path) -> dict[str, str]:
    stack = json.loads((packaged / "sam.json").read_text())
    return {
        name: resource["Properties"]["Handler"]
        for name, resource in stack["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }


def test_the_unzipped_package_fits_lambda(packaged):
    with zipfile.ZipFile(packaged / "deployment.zip") as bundle:
        unzipped_bytes = sum(entry.file_size for entry in bundle.infolist())
    assert unzipped_bytes < LAMBDA_UNZIPPED_LIMIT, f"{unzipped_bytes / 2**20:.0f} MB"


def test_no_dependency_was_built_on_this_machine(unzipped):
    """A wheel chalice could not fetch for Lambda's platform it builds here (tag `linux_x86_64`): linked against
    this machine's libraries, it fails to import on Lambda (Pillow 13 did: libjpeg.so.62, libxcb)."""
    local = []
    for wheel in unzipped.glob("*.dist-info/WHEEL"):
        tags = [line.split(":", 1)[1].strip() for line in wheel.read_text().splitlines() if line.startswith("Tag:")]
        if not any("manylinux" in tag or tag.endswith("-any") for tag in tags):
            local.append(f"{wheel.parent.name}: {', '.join(tags)}")
    assert local == []


PROBE = """
import importlib, io, json, os, pkgutil, sys
sys.path.insert(0, TASK_ROOT)  # as Lambda puts the unzipped package first
installed = [p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p) and os.listdir(p)]
assert installed == [], installed  # nothing installed but the package
handlers = {}
for function, handler in HANDLERS.items():
    module, _, name = handler.rpartition(".")
    handlers[function] = getattr(importlib.import_module(module), name)
    assert callable(handlers[function]), function
import chalicelib
modules = [m.name for m in pkgutil.walk_packages(chalicelib.__path__, "chalicelib.")]
for name in modules:
    importlib.import_module(name)  # the modules the handlers load on first use too

from chalicelib.runtime import observability
observability.tracer()  # the X-Ray SDK is in the package
event = {"resource": "/openapi.json", "path": "/openapi.json", "httpMethod": "GET", "headers": {"Accept": "*/*"},
         "multiValueHeaders": {}, "queryStringParameters": None, "multiValueQueryStringParameters": None,
         "pathParameters": None, "stageVariables": None, "body": None, "isBase64Encoded": False,
         "requestContext": {"resourcePath": "/openapi.json", "httpMethod": "GET", "path": "/api/openapi.json",
                            "requestId": "rehearsal", "stage": "api", "identity": {"sourceIp": "127.0.0.1"}}}
answer = handlers["APIHandler"](event, None)
assert answer["statusCode"] == 200, answer
assert len(json.loads(answer["body"])["paths"]) > 100

from xhtml2pdf import pisa
pdf = io.BytesIO()
assert not pisa.CreatePDF("<p>rehearsed</p>", dest=pdf).err
assert pdf.getvalue().startswith(b"%PDF")

# the tenant function, built as the publish job builds it on Lambda (from the task root's own modules and
# libraries), runs a plugin and renders a PDF with nothing but its package and its layer on the path
import subprocess, tempfile, zipfile
from chalicelib.plugins import tenant_code
code_dir, layer_dir = tempfile.mkdtemp(), tempfile.mkdtemp()
plugin_source = b"import pas\\ndef rate(request):\\n    return {'at': pas.now().isoformat()}\\n"
code = tenant_code.package({"plugins/python/rating.py": plugin_source})
zipfile.ZipFile(io.BytesIO(code)).extractall(code_dir)
zipfile.ZipFile(io.BytesIO(tenant_code.libraries_layer())).extractall(layer_dir)
events = [{"message": json.dumps({"call": "rate", "request": {}, "now": "2026-01-15T09:30:00Z", "answers": []})},
          {"render": json.dumps({"engine": "liquid", "template": "<p>{{ name }}</p>", "snippets": {},
                                 "data": {"name": "Ada"}, "format": "pdf", "page": {}, "fonts": {},
                                 "limits": {"max_output_bytes": 1000000}}), "files": {}}]
runner = ("import json, sys; sys.path[:0] = [sys.argv[1], sys.argv[2] + '/python']; import tenant_handler; "
          "print(json.dumps([tenant_handler.handler(e, None) for e in json.loads(sys.stdin.read())]))")
ran = subprocess.run([sys.executable, "-I", "-c", runner, code_dir, layer_dir], input=json.dumps(events),
                     capture_output=True, text=True, env={"LAMBDA_TASK_ROOT": code_dir, "PATH": "/usr/bin:/bin"})
assert ran.returncode == 0, ran.stderr[-3000:]
plugin, render = json.loads(ran.stdout)
assert json.loads(plugin["message"]) == {"result": {"at": "2026-01-15T09:30:00+00:00"}}, plugin
import base64
assert base64.b64decode(json.loads(render["render"])["pdf"]).startswith(b"%PDF"), render["render"][:300]
tenant_unzipped = sum(entry.file_size for entry in zipfile.ZipFile(io.BytesIO(code)).infolist())
tenant_unzipped += tenant_code.libraries()[1]
print(json.dumps({"handlers": sorted(handlers), "modules": len(modules), "tenantFunctionBytes": tenant_unzipped}))
"""


def test_every_handler_imports_and_the_api_answers_from_the_package_alone(packaged, unzipped, tmp_path):
    """In a virtual environment without pip or site-packages, with the package as the only other code: what is
    dev-only (moto, pytest, chalice's CLI, ...) or only installed here cannot be reached."""
    environment = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(environment)
    handlers = _handlers(packaged)
    probe = f"TASK_ROOT = {str(unzipped)!r}\nHANDLERS = {handlers!r}\n{PROBE}"
    # what Lambda gives a function, as far as the imports go (no credentials are used)
    lambda_environment = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "rehearsal",
        "AWS_SECRET_ACCESS_KEY": "rehearsal",
        "PAS_STAGE": "prod",
        "PAS_PAGING_SECRET": "rehearsal",
        "POWERTOOLS_TRACE_DISABLED": "1",
        "HOME": str(tmp_path),
    }
    result = subprocess.run(
        [str(environment / "bin" / "python"), "-I", "-c", textwrap.dedent(probe)],
        cwd=tmp_path,
        env=lambda_environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    summary: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["handlers"] == sorted(handlers) and {"APIHandler", "RunJob", "ReapJobs"} <= set(handlers)
    assert summary["modules"] > 100
    assert summary["tenantFunctionBytes"] < LAMBDA_UNZIPPED_LIMIT  # the tenant function's package and its layer
    # the API's own EMF line, on stdout as Lambda would ship it to CloudWatch
    assert any(
        line.startswith('{"_aws"') and '"route":"GET /openapi.json"' in line for line in result.stdout.splitlines()
    )
