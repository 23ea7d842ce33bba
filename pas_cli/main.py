"""The `pas` commands (typer). Each takes `--profile` (or PAS_PROFILE) and `--json`, and ends with an exit code
of pas_cli.errors."""

from __future__ import annotations

import fnmatch
import getpass
import io
import os
import sys
import time
import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from pas_cli import errors, fixtures, jsonio, packages, profiles
from pas_cli.client import Client
from pas_cli.errors import CliError
from pas_cli.output import Output, plain_wanted

EXIT_CODES = (
    "Exit codes: 0 done; 1 the service answered an error (4xx) or a fixture step failed; 2 wrong arguments; "
    "3 the service cannot be reached; 4 not signed in or the token expired (pas login again); 5 the service "
    "failed (5xx); 6 a package did not validate or deploy, or a table of its bootstrap failed."
)
POLL_SECONDS = 0.5


def _commands(help_text: str) -> typer.Typer:
    """A command group; its help in rich boxes on a terminal, plain (click's) with NO_COLOR or into a pipe."""
    return typer.Typer(
        help=help_text,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None if plain_wanted() else "rich",
    )


app = _commands(f"The command line of the PAS API. {EXIT_CODES}")
config_app = _commands("Configuration packages: validate and deploy.")
tables_app = _commands("Lookup, range and constraint tables: upload and read.")
clock_app = _commands("A test-clock tenant's time: show it, move it forward.")
events_app = _commands("The tenant's event stream.")
app.add_typer(config_app, name="config")
app.add_typer(tables_app, name="tables")
app.add_typer(clock_app, name="clock")
app.add_typer(events_app, name="events")

ProfileOption = Annotated[str, typer.Option("--profile", envvar="PAS_PROFILE", help="The profile to use.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output: the service's answers as JSON.")]
TenantOption = Annotated[str, typer.Option("--tenant", envvar="PAS_TENANT", help="The tenant's locator.")]
TimeoutOption = Annotated[float, typer.Option("--timeout", help="Seconds to wait at most.")]
TABLE_KINDS = {"lookup": "tables", "range": "rangeTables", "constraint": "constraints"}


def main() -> None:
    app()


def _run(as_json: bool, action: Callable[[Output], int | None]) -> None:
    """Runs a command's body; a CliError becomes one line on stderr and the exit code of its kind."""
    out = Output(as_json)
    try:
        code = action(out) or errors.OK
    except CliError as error:
        out.error(error.line())
        code = error.exit_code
    except KeyboardInterrupt:
        code = errors.OK
    raise typer.Exit(code)


def _client(profile: str) -> Client:
    return Client.of(profiles.load(profile))


# --- profiles ----------------------------------------------------------------------------------------


@app.command()
def login(
    url: Annotated[str, typer.Option(help="The service's base URL, e.g. http://127.0.0.1:8000.")],
    username: Annotated[str, typer.Option(help="The user to sign in as.")],
    password: Annotated[
        str | None,
        typer.Option(
            envvar="PAS_PASSWORD",
            show_default=False,
            help="The password (else PAS_PASSWORD, else a prompt on the terminal, else a line of stdin).",
        ),
    ] = None,
    profile: ProfileOption = profiles.DEFAULT_PROFILE,
    as_json: JsonOption = False,
) -> None:
    """Sign in (the OAuth2 password grant) and keep URL, token and expiry as a named profile."""

    def action(out: Output) -> None:
        token, expires = Client(url).sign_in(username, password if password is not None else _ask_password())
        saved = profiles.Profile(
            name=profile, url=url.rstrip("/"), username=username, token=token, expiresAt=expires.isoformat()
        )
        where = profiles.save(saved)
        if out.as_json:
            out.json({"profile": profile, "url": saved.url, "username": username, "expiresAt": saved.expiresAt})
        out.say(
            f"signed in to {saved.url} as {username}: profile '{profile}' in {where}, "
            f"token valid until {saved.expiresAt}"
        )

    _run(as_json, action)


def _ask_password() -> str:
    """On a terminal a prompt without echo (on stderr: stdout stays the command's output); else stdin's first line."""
    if sys.stdin.isatty():
        return getpass.getpass("Password: ", stream=sys.stderr)
    return sys.stdin.readline().rstrip("\n")


@app.command("profiles")
def list_profiles(as_json: JsonOption = False) -> None:
    """The profiles kept, with their URL, user and whether their token is still valid."""

    def action(out: Output) -> None:
        found = profiles.load_all()
        if out.as_json:
            out.json(
                [
                    {
                        "profile": p.name,
                        "url": p.url,
                        "username": p.username,
                        "expiresAt": p.expiresAt,
                        "expired": p.expired(),
                    }
                    for p in found.values()
                ]
            )
        if not found:
            out.say(f"no profiles in {profiles.profiles_file()}: pas login --url URL --username USER")
        width = max((len(name) for name in found), default=0)
        for p in found.values():
            out.say(
                f"{p.name:<{width}}  {p.url}  {p.username}  {'expired' if p.expired() else 'valid until'} {p.expiresAt}"
            )

    _run(as_json, action)


# --- configuration ----------------------------------------------------------------------------------


@config_app.command("deploy")
def config_deploy(
    source: Annotated[
        Path, typer.Argument(help="The package: a folder with config.json at its root, or a .zip.", exists=True)
    ],
    tenant: Annotated[str | None, typer.Option("--tenant", envvar="PAS_TENANT", help="Deploy to this tenant.")] = None,
    create: Annotated[
        str | None, typer.Option("--create", metavar="NAME", help="Create a tenant of this name from the package.")
    ] = None,
    test_clock: Annotated[
        bool, typer.Option("--test-clock", help="With --create: the tenant has a test clock.")
    ] = False,
    validate_only: Annotated[bool, typer.Option("--validate-only", help="Only validate; nothing is stored.")] = False,
    wait: Annotated[bool, typer.Option(help="After --create, wait until its tables are loaded.")] = True,
    timeout: TimeoutOption = 300,
    profile: ProfileOption = profiles.DEFAULT_PROFILE,
    as_json: JsonOption = False,
) -> None:
    """Zip the package, validate and deploy it (to --tenant, or to a new tenant with --create), print each
    error with its file and field, then wait for the new tenant's tables with a progress bar each."""

    def action(out: Output) -> int:
        if not validate_only and (tenant is None) == (create is None):
            raise errors.CliError("give either --tenant LOCATOR or --create NAME")
        client = _client(profile)
        try:
            body = packages.package_bytes(source)
        except FileNotFoundError as missing:
            raise errors.CliError(str(missing)) from None
        if validate_only:
            return _validate(client, out, source, body, tenant)
        if create is not None:
            answer = client.send_file(
                "POST",
                "/config/createTenant",
                body,
                purpose="configuration",
                query={"name": create, "testClock": test_clock},
            )
        else:
            answer = client.send_file(
                "POST", f"/config/{tenant}/deployments/deploy", body, purpose="configuration", tenant=tenant
            )
        result = answer.json()
        deployment = result["deploymentResult"]
        if not deployment["isSuccess"]:
            _print_package_errors(out, source, deployment["errors"])
            if out.as_json:
                out.raw_json(answer.raw)
            return errors.REJECTED
        out.say(
            f"deployed version {deployment['metadata']['latestVersion']} to tenant {result['name']} "
            f"({result['locator']})",
            style="green",
        )
        code = errors.OK
        if create is not None and wait:
            code = _await_bootstrap(client, out, result, timeout)
        if out.as_json:
            out.raw_json(answer.raw)
        return code

    _run(as_json, action)


def _validate(client: Client, out: Output, source: Path, body: bytes, tenant: str | None) -> int:
    path = f"/config/{tenant}/deployments/validate" if tenant else "/config/validateConfig"
    answer = client.send_file("POST", path, body, purpose="configuration", tenant=tenant)
    with zipfile.ZipFile(io.BytesIO(answer.raw)) as archive:
        raw = archive.read("validation-result.json")
    report = jsonio.loads(raw)
    if out.as_json:
        out.raw_json(raw)
    if report["isSuccess"]:
        out.say("the package is valid", style="green")
        return errors.OK
    _print_package_errors(out, source, report["errors"])
    return errors.REJECTED


def _print_package_errors(out: Output, source: Path, found: list[str]) -> None:
    files = packages.config_files(source)
    out.error(f"the package has {len(found)} error(s)")
    for error in found:
        out.errors.print(packages.located(error, files).line(), style="red", markup=False, highlight=False)


def _await_bootstrap(client: Client, out: Output, result: dict[str, Any], timeout: float) -> int:
    """Waits until every resource of the new tenant's bootstrap (tables, templates, static documents, fonts) left
    `queued`; REJECTED when one failed."""
    if result["bootstrapResult"]["status"] == "failed":
        out.error(f"the bootstrap failed: {result['bootstrapResult']['error']}")
        return errors.REJECTED
    deadline = time.monotonic() + timeout
    with out.progress() as bars:
        while True:
            resources = client.call("GET", f"/resource/{result['locator']}/resources/bootstrap").json()
            for resource in resources:
                state = resource["status"] + (f": {resource['error']}" if resource.get("error") else "")
                bars.update(_resource_label(resource), state, completed=0 if resource["status"] == "queued" else 1)
            if all(resource["status"] != "queued" for resource in resources):
                break
            if time.monotonic() > deadline:
                raise errors.CliError(f"the bootstrap resources are still loading after {timeout:g} s")
            time.sleep(POLL_SECONDS)
    failed = [_resource_label(resource) for resource in resources if resource["status"] == "failed"]
    if failed:
        out.error(f"not loaded: {', '.join(failed)}")
        return errors.REJECTED
    return errors.OK


def _resource_label(resource: dict[str, Any]) -> str:
    return f"{resource['resourceType']} {resource['name']}"


# --- tables -----------------------------------------------------------------------------------------


KindOption = Annotated[str, typer.Option("--kind", help="lookup, range or constraint.")]


def _table_path(tenant: str, kind: str) -> str:
    if kind not in TABLE_KINDS:
        raise errors.CliError(f"--kind is one of {', '.join(TABLE_KINDS)}, not '{kind}'")
    return f"/resource/{tenant}/{TABLE_KINDS[kind]}"


@tables_app.command("upload")
def tables_upload(
    name: Annotated[str, typer.Argument(help="The table instance's name.")],
    csv: Annotated[
        Path, typer.Argument(help="The CSV file (its header row: the table's columns).", exists=True, dir_okay=False)
    ],
    tenant: TenantOption,
    static_name: Annotated[
        str | None,
        typer.Option("--static-name", help="The table of the configuration it is an instance of (to create one)."),
    ] = None,
    jurisdiction: Annotated[list[str] | None, typer.Option(help="Its jurisdictions (repeatable).")] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Replace the rows of an existing instance.")] = False,
    kind: KindOption = "lookup",
    profile: ProfileOption = profiles.DEFAULT_PROFILE,
    as_json: JsonOption = False,
) -> None:
    """Upload a CSV as a table instance (zipped as the service expects): a new one, or --replace its rows."""

    def action(out: Output) -> None:
        if not replace and static_name is None:
            raise errors.CliError("a new table needs --static-name (or --replace an existing one)")
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(csv, csv.name)
        client, path = _client(profile), _table_path(tenant, kind)
        if replace:
            answer = client.send_file("PATCH", f"{path}/{name}", buffer.getvalue(), purpose="table", tenant=tenant)
        else:
            answer = client.send_file(
                "POST",
                path,
                buffer.getvalue(),
                purpose="table",
                tenant=tenant,
                query={"name": name, "staticName": static_name, "jurisdiction": jurisdiction or []},
            )
        if out.as_json:
            out.raw_json(answer.raw)
        stored = answer.json()
        out.say(
            f"{kind} table {stored['name']} ({stored['staticName']}) stored: version "
            f"{stored.get(f'{kind}TableLocator')}",
            style="green",
        )

    _run(as_json, action)


@tables_app.command("get")
def tables_get(
    name: Annotated[str, typer.Argument(help="The table instance's name (or static name with --key).")],
    tenant: TenantOption,
    key: Annotated[list[str] | None, typer.Option(help="Look one record up by its key (repeatable).")] = None,
    bound: Annotated[str | None, typer.Option(help="With --key, of a range table: the bound value.")] = None,
    date: Annotated[str | None, typer.Option(help="With --key: the record valid at this time.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the CSV here, not to stdout.")] = None,
    kind: KindOption = "lookup",
    profile: ProfileOption = profiles.DEFAULT_PROFILE,
    as_json: JsonOption = False,
) -> None:
    """Print a table's CSV (as last uploaded), or with --key the value of one record."""

    def action(out: Output) -> None:
        client, path = _client(profile), _table_path(tenant, kind)
        if key:
            answer = client.call("GET", f"{path}/{name}/record", query={"key": key, "boundValue": bound, "date": date})
            if out.as_json:
                out.raw_json(answer.raw)
            else:
                out.console.out(jsonio.dumps(answer.json(), indent=2), highlight=False)
            return
        answer = client.call("GET", f"{path}/{name}")
        with zipfile.ZipFile(io.BytesIO(answer.raw)) as archive:
            [member] = archive.namelist()
            content = archive.read(member)
        if output is not None:
            output.write_bytes(content)
            out.say(f"{member} written to {output}")
        else:
            out.console.out(content.decode("utf-8").rstrip("\n"), highlight=False)

    _run(as_json, action)


# --- test clocks ------------------------------------------------------------------------------------


@clock_app.command("show")
def clock_show(
    tenant: TenantOption, profile: ProfileOption = profiles.DEFAULT_PROFILE, as_json: JsonOption = False
) -> None:
    """The tenant's time: its test clock's position and status, or the real time."""

    def action(out: Output) -> None:
        answer = _client(profile).call("GET", f"/clock/{tenant}")
        if out.as_json:
            out.raw_json(answer.raw)
        out.say(_clock_line(answer.json()))

    _run(as_json, action)


def _clock_line(clock: dict[str, Any]) -> str:
    if not clock["testClock"]:
        return f"{clock['now']} (the real time: the tenant has no test clock)"
    if clock["status"] == "advancing":
        return f"{clock['now']} (advancing to {clock['advancingTo']})"
    return f"{clock['now']} (ready)"


@clock_app.command("advance")
def clock_advance(
    to: Annotated[
        str, typer.Option("--to", help="Where to: an ISO-8601 time after the clock's now (without an offset: UTC).")
    ],
    tenant: TenantOption,
    wait: Annotated[bool, typer.Option(help="Wait until the advance is over.")] = True,
    timeout: TimeoutOption = 600,
    profile: ProfileOption = profiles.DEFAULT_PROFILE,
    as_json: JsonOption = False,
) -> None:
    """Move a test clock forward: everything scheduled in between runs; a progress bar until it is ready."""

    def action(out: Output) -> None:
        client = _client(profile)
        started = client.call("POST", f"/clock/{tenant}/advance", json_body={"to": to})
        clock = started.json()
        if wait:
            clock = _await_clock(client, out, tenant, clock, timeout)
        if out.as_json:
            out.json(clock)
        out.say(_clock_line(clock))

    _run(as_json, action)


def _await_clock(client: Client, out: Output, tenant: str, clock: dict[str, Any], timeout: float) -> dict[str, Any]:
    origin, target = _instant(clock["now"]), _instant(clock["advancingTo"])
    span = max((target - origin).total_seconds(), 1)
    deadline = time.monotonic() + timeout
    with out.progress() as bars:
        while clock["status"] == "advancing":
            done = (_instant(clock["now"]) - origin).total_seconds()
            bars.update(f"clock to {clock['advancingTo']}", f"at {clock['now']}", completed=done, total=span)
            if time.monotonic() > deadline:
                raise errors.CliError(f"the clock is still advancing after {timeout:g} s (at {clock['now']})")
            time.sleep(POLL_SECONDS)
            clock = client.call("GET", f"/clock/{tenant}").json()
        bars.update(f"clock to {_iso(target)}", f"ready at {clock['now']}", completed=span, total=span)
    return clock


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --- events -----------------------------------------------------------------------------------------


@events_app.command("tail")
def events_tail(
    tenant: TenantOption,
    event_type: Annotated[
        list[str] | None,
        typer.Option("--type", help="Only events of this type; a pattern with * (billing.*), repeatable."),
    ] = None,
    since: Annotated[str | None, typer.Option(help="Start at this time (ISO-8601), not at the first event.")] = None,
    follow: Annotated[
        bool, typer.Option(help="Go on following the stream (until Ctrl-C), or stop when it is read.")
    ] = True,
    limit: Annotated[int | None, typer.Option(help="Stop after this many events.")] = None,
    profile: ProfileOption = profiles.DEFAULT_PROFILE,
    as_json: JsonOption = False,
) -> None:
    """Print the tenant's events in commit order, then follow the stream (with --json: one JSON object a line)."""

    def action(out: Output) -> None:
        client = _client(profile)
        patterns = event_type or []
        exact = patterns[0] if len(patterns) == 1 and "*" not in patterns[0] else None
        query: dict[str, Any] = {"pageSize": 100, "type": exact, "startTimestamp": since}
        shown = 0
        while True:
            page = client.call("GET", f"/event/{tenant}/events/list", query=query).json()
            for event in page["events"]:
                if patterns and not any(fnmatch.fnmatchcase(event["type"], p) for p in patterns):
                    continue
                if out.as_json:
                    out.json(event)
                else:
                    out.say(f"{event['timestamp']}  {event['type']}  {jsonio.dumps(event['data'])}")
                shown += 1
                if limit is not None and shown >= limit:
                    return
            query = {"pagingToken": page["pagingToken"]}
            if not page["events"]:
                if not follow:
                    return
                time.sleep(1)

    _run(as_json, action)


# --- fixtures ---------------------------------------------------------------------------------------


@app.command("fixtures")
def run_fixtures(
    file: Annotated[Path, typer.Argument(help="A JSON or YAML list of API calls.", exists=True, dir_okay=False)],
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Print each answer whole.")] = False,
    profile: ProfileOption = profiles.DEFAULT_PROFILE,
    as_json: JsonOption = False,
) -> None:
    """Run a fixtures file: API calls in order, each referring to fields of earlier answers (${account.locator})
    and to environment variables (${env.NAME}, ${env.NAME:-default}); prints each result."""

    def action(out: Output) -> None:
        client = _client(profile)
        steps = fixtures.load(file)
        for number, result in enumerate(fixtures.run(client, steps, file.parent, dict(os.environ)), start=1):
            if out.as_json:
                out.console.out(result.json_line(), highlight=False)
                continue
            out.say(f"[{number}/{len(steps)}] {result.line()}")
            if verbose:
                out.console.out(jsonio.dumps(result.body, indent=2), highlight=False)

    _run(as_json, action)
