"""Fixtures files (after Stripe's): a JSON or YAML list of API calls run in order, the way to script a demo or
a bug report. A file is a list of steps, or an object whose `fixtures` is that list. A step:

    name     what later steps call its answer: ${name.field.0.other} (list items by index, -1 the last)
    method   GET (the default), POST, PATCH, PUT, DELETE
    path     the path below the service's URL, e.g. /policy/${tenant.locator}/accounts
    query    query parameters (a list repeats its key)
    body     a JSON body; or `form` (form fields), or `package` (a folder zipped as a configuration package,
             relative to the fixtures file)
    until    {field path: value}: send the call again (every half second) until the answer has those values,
             e.g. {"status": "ready"} or {"items.11.invoiceState": "open"}; `timeout` seconds (300)
    status   the status the answer must have (an error answer is then the step's result); else any 2xx

Any string may refer to an earlier answer, `${name.path}`, or to the environment, `${env.NAME}` or
`${env.NAME:-default}`. A string that is one reference whole takes the value's type (a number stays a number).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from pas_cli import jsonio, packages
from pas_cli.client import ZIP, Client
from pas_cli.errors import CliError

STEP_KEYS = {"name", "method", "path", "query", "body", "form", "package", "until", "timeout", "status"}
METHODS = {"GET", "POST", "PATCH", "PUT", "DELETE"}
REFERENCE = re.compile(r"\$\{([^}]+)\}")
POLL_SECONDS = 0.5
DEFAULT_TIMEOUT = 300.0
MISSING = object()


class FixtureError(CliError):
    pass


def load(file: Path) -> list[dict[str, Any]]:
    """The file's steps, each checked for its keys (before any is run)."""
    text = file.read_text()
    try:
        document = jsonio.loads(text) if file.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as error:
        raise FixtureError(f"{file} is not valid {'JSON' if file.suffix == '.json' else 'YAML'}: {error}") from None
    steps = document.get("fixtures") if isinstance(document, dict) else document
    if not isinstance(steps, list) or not steps:
        raise FixtureError(f"{file}: expected a list of steps (or an object with a list `fixtures`)")
    names: set[str] = set()
    for number, step in enumerate(steps, start=1):
        where = f"{file}: step {number}"
        if not isinstance(step, dict) or not isinstance(step.get("path"), str):
            raise FixtureError(f"{where}: a step is an object with a `path`")
        unknown = set(step) - STEP_KEYS
        if unknown:
            raise FixtureError(
                f"{where}: unknown key(s) {', '.join(sorted(unknown))} (a step has {', '.join(sorted(STEP_KEYS))})"
            )
        if str(step.get("method", "GET")).upper() not in METHODS:
            raise FixtureError(f"{where}: method is one of {', '.join(sorted(METHODS))}")
        if len({"body", "form", "package"} & set(step)) > 1:
            raise FixtureError(f"{where}: one of body, form and package at most")
        if step.get("name") == "env" or step.get("name") in names:
            why = "reserved" if step["name"] == "env" else "taken"
            raise FixtureError(f"{where}: the name '{step['name']}' is {why}")
        if step.get("name"):
            names.add(step["name"])
    return steps


@dataclass(frozen=True)
class Result:
    name: str | None
    method: str
    path: str
    status: int
    body: Any
    raw_json: str

    def line(self) -> str:
        text = f"{self.name or '-'}  {self.method} {self.path}  {self.status}"
        if isinstance(self.body, dict) and "locator" in self.body:
            text += f"  locator={self.body['locator']}"
        elif isinstance(self.body, dict) and isinstance(self.body.get("items"), list):
            text += f"  {len(self.body['items'])} item(s)"
        elif isinstance(self.body, list):
            text += f"  {len(self.body)} item(s)"
        return text

    def json_line(self) -> str:
        envelope = jsonio.dumps({"name": self.name, "method": self.method, "path": self.path, "status": self.status})
        return f'{envelope[:-1]}, "body": {self.raw_json}}}'


def run(client: Client, steps: list[dict[str, Any]], base: Path, environ: Mapping[str, str]) -> Iterator[Result]:
    """Runs the steps in order, yielding each result; the first that fails raises FixtureError (or the
    service's error)."""
    answers: dict[str, Any] = {}
    for number, step in enumerate(steps, start=1):
        label = f"step {number}" + (f" ({step['name']})" if step.get("name") else "")
        resolved = Resolver(answers, environ, label)
        result = _run_step(client, step, resolved, base, label)
        if step.get("name"):
            answers[step["name"]] = result.body
        yield result


def _run_step(client: Client, step: dict[str, Any], resolver: Resolver, base: Path, label: str) -> Result:
    method = str(step.get("method", "GET")).upper()
    path = resolver.text(step["path"])
    request: dict[str, Any] = {"query": resolver.value(step.get("query"))}
    if "body" in step:
        request["json_body"] = resolver.value(step["body"])
    elif "form" in step:
        request["form"] = {key: str(value) for key, value in resolver.value(step["form"]).items()}
    elif "package" in step:
        try:
            request.update(data=packages.package_bytes(base / resolver.text(step["package"])), content_type=ZIP)
        except FileNotFoundError as missing:
            raise FixtureError(f"{label}: {missing}") from None
    expected_status = step.get("status")
    until = resolver.value(step.get("until") or {})
    deadline = time.monotonic() + float(step.get("timeout", DEFAULT_TIMEOUT))
    while True:
        answer = client.call(method, path, accept_errors=expected_status is not None, **request)
        if expected_status is not None and answer.status != expected_status:
            raise FixtureError(
                f"{label}: {method} {path} answered {answer.status}, not {expected_status}"
                + (f": {client.error_of(answer).line()}" if answer.status >= 400 else "")
            )
        is_json = "json" in answer.content_type and answer.raw
        body = answer.json() if is_json else None
        unmet = _unmet(body, until)
        if not unmet:
            raw = answer.text().strip() if is_json else "null"
            return Result(step.get("name"), method, path, answer.status, body, raw)
        if time.monotonic() > deadline:
            field, wanted, actual = unmet
            raise FixtureError(
                f"{label}: after {step.get('timeout', DEFAULT_TIMEOUT)} s, {field} of {method} {path} "
                f"is {_shown(actual)}, not {_shown(wanted)}"
            )
        time.sleep(POLL_SECONDS)


def _unmet(body: Any, until: dict[str, Any]) -> tuple[str, Any, Any] | None:
    for field, wanted in until.items():
        actual = _walk(body, str(field).split("."))
        if not _same(actual, wanted):
            return field, wanted, actual
    return None


def _same(actual: Any, wanted: Any) -> bool:
    numbers = (int, float, Decimal)
    if (
        isinstance(actual, numbers)
        and isinstance(wanted, numbers)
        and not isinstance(actual, bool)
        and not isinstance(wanted, bool)
    ):
        return Decimal(str(actual)) == Decimal(str(wanted))
    return bool(actual == wanted)


def _shown(value: Any) -> str:
    return "missing" if value is MISSING else jsonio.dumps(value)


def _walk(value: Any, keys: list[str]) -> Any:
    for key in keys:
        if isinstance(value, list) and re.fullmatch(r"-?\d+", key) and -len(value) <= int(key) < len(value):
            value = value[int(key)]
        elif isinstance(value, dict) and key in value:
            value = value[key]
        else:
            return MISSING
    return value


class Resolver:
    """The ${...} references of one step, against the answers so far and the environment."""

    def __init__(self, answers: dict[str, Any], environ: Mapping[str, str], label: str) -> None:
        self.answers, self.environ, self.label = answers, environ, label

    def value(self, template: Any) -> Any:
        if isinstance(template, str):
            whole = REFERENCE.fullmatch(template)
            return self.lookup(whole.group(1)) if whole else self.text(template)
        if isinstance(template, dict):
            return {self.text(str(key)): self.value(item) for key, item in template.items()}
        if isinstance(template, list):
            return [self.value(item) for item in template]
        return template

    def text(self, template: str) -> str:
        def substituted(match: re.Match[str]) -> str:
            found = self.lookup(match.group(1))
            return found if isinstance(found, str) else jsonio.dumps(found)

        return REFERENCE.sub(substituted, template)

    def lookup(self, expression: str) -> Any:
        if expression.startswith("env."):
            name, has_default, default = expression.removeprefix("env.").partition(":-")
            if name in self.environ:
                return self.environ[name]
            if has_default:
                return default
            raise FixtureError(f"{self.label}: ${{{expression}}}: the environment has no {name}")
        name, *keys = expression.split(".")
        if name not in self.answers:
            raise FixtureError(f"{self.label}: ${{{expression}}}: no earlier step is named '{name}'")
        found = _walk(self.answers[name], keys)
        if found is MISSING:
            raise FixtureError(f"{self.label}: ${{{expression}}}: the answer of '{name}' has no {'.'.join(keys)}")
        return found
